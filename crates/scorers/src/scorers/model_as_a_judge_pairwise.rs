//! `model_as_a_judge_pairwise`: the judge compares two answers to one prompt and names the
//! better one, `A`, `B` or `tie`, as MT-Bench's pairwise judge and AlpacaEval do.
//!
//! The user message shows the prompt, the reference answer when there is one, then answer A
//! and answer B, each between fixed markers. The reply is read as a label with the rules of
//! every judge (`evalscore_kernels::judge`): a JSON `winner` (or `verdict`), else the last
//! line naming exactly one of `A`, `B`, `tie` (`[[A]]` names `A`; the one-letter labels match
//! only in capitals, so the article "a" is not answer A).
//!
//! With `swap: true` every row is asked a second time with the two answers exchanged, so
//! that a judge's preference for a position shows: the second verdict is mapped back (its
//! `A` is answer B) and `consistent` is 1 when both verdicts agree. An inconsistent pair is
//! a tie: the judge's choice followed the position, not the answers. Both requests are
//! cached and deduplicated like any other judge request.

use crate::batch::{BatchInput, Fields, ScoreColumns};
use crate::judge::kind::{judge_ctx, readings};
use crate::judge::parse::{model, MODEL_KEY, SYSTEM_PROMPT};
use crate::judge::runtime::{JudgeRuntime, Judged, Memo, Reading};
use crate::judge::window::{Asked, Prompt};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer};
use arrow::array::{Float64Array, StringArray};
use evalscore_judge::ChatRequest;
use evalscore_kernels::judge::{parse_label, ParsedFrom};
use evalscore_task::{RowContext, ScorerField, TaskError, Template};
use std::sync::Arc;

/// The kind `model_as_a_judge_pairwise`.
#[derive(Debug)]
pub struct ModelAsAJudgePairwise;

impl Kind for ModelAsAJudgePairwise {
    const ABOUT: About = About::new(
        &["model_as_a_judge_pairwise"],
        "A pairwise judge: the judge compares answer A with answer B for the same prompt and names the better one, `A`, `B` or `tie` (JSON `winner`, `reasoning`). `score_a` is 1 when A wins, 0.5 for a tie, 0 when B wins. With `swap: true` each pair is asked again with the answers exchanged; `consistent` is 1 when both verdicts agree, and an inconsistent pair is a tie.",
        &[
            MODEL_KEY,
            SYSTEM_PROMPT,
            OptionDoc::required(
                "user_prompt",
                "template of the prompt both answers reply to (the question)",
            ),
            OptionDoc::required("output_a", "template of answer A"),
            OptionDoc::required("output_b", "template of answer B"),
            OptionDoc::optional(
                "reference",
                "template of a reference answer shown to the judge before the two answers",
            ),
            OptionDoc::optional(
                "swap",
                "`true`: ask again with A and B exchanged and write `consistent` (default false)",
            ),
        ],
        r#"{type: model_as_a_judge_pairwise, model_key: judge, user_prompt: "{{ sample.question }}", output_a: "{{ sample.answer_a }}", output_b: "{{ sample.answer_b }}", swap: true}"#,
    )
    .judge();

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let (model_key, model) = model(cx)?;
        let system_prompt = cx.template("system_prompt")?;
        let user_prompt = cx.required_template("user_prompt", r#""{{ sample.question }}""#)?;
        let output_a = cx.required_template("output_a", r#""{{ sample.answer_a }}""#)?;
        let output_b = cx.required_template("output_b", r#""{{ sample.answer_b }}""#)?;
        let reference = cx.template("reference")?;
        let swap = match cx.get("swap") {
            Some(n) => n.boolean("swap")?,
            None => false,
        };
        Ok(Box::new(Pairwise {
            asked: Asked { model_key, model },
            system_prompt,
            user_prompt,
            output_a,
            output_b,
            reference,
            swap,
        }))
    }
}

/// A bound pairwise judge.
#[derive(Debug)]
struct Pairwise {
    asked: Asked,
    system_prompt: Option<Template>,
    user_prompt: Template,
    output_a: Template,
    output_b: Template,
    reference: Option<Template>,
    swap: bool,
}

/// The system prompt when the task gives none.
const DEFAULT_SYSTEM_PROMPT: &str = "You are an impartial judge. Compare the two answers an AI assistant could give to the user's prompt below, and decide which one follows the prompt and answers it better: more helpful, correct, relevant and complete. The order in which the answers are shown and their length must not influence you.";

/// The instruction appended to the system prompt.
const INSTRUCTION: &str = "Answer with a JSON object and nothing else: {\"winner\": \"A\", \"B\" or \"tie\", \"reasoning\": \"one or two sentences\"}.";

/// The labels a verdict is read as, and the JSON keys that give it.
const LABELS: &[&str] = &["A", "B", "tie"];
const KEYS: &[&str] = &["winner", "verdict"];

const FIELDS: &[ScorerField] = &[
    ScorerField::text("winner"),
    ScorerField::number("score_a"),
    ScorerField::number("consistent"),
    ScorerField::text("reasoning"),
    ScorerField::text("judge_status"),
];

/// The user message of one pair: the prompt, the reference when given, then the answers in
/// the order asked.
fn message(parts: &[&str]) -> String {
    let block =
        |name: &str, text: &str| format!("[The Start of {name}]\n{text}\n[The End of {name}]\n\n");
    let mut m = format!("[User Prompt]\n{}\n\n", parts[0]);
    let answers = if parts.len() == 4 {
        m.push_str(&block("Reference Answer", parts[1]));
        &parts[2..]
    } else {
        &parts[1..]
    };
    m.push_str(&block("Answer A", answers[0]));
    m.push_str(&block("Answer B", answers[1]));
    m.truncate(m.trim_end().len());
    m
}

/// A verdict as the label of the original order: a swapped `A` is answer B.
fn unswapped(label: &str) -> &'static str {
    match label {
        "A" => "B",
        "B" => "A",
        _ => "tie",
    }
}

/// `score_a` of a winner.
fn score_a(winner: &str) -> f64 {
    match winner {
        "A" => 1.0,
        "B" => 0.0,
        _ => 0.5,
    }
}

/// One row's outcome: a winner and `consistent`, or how the row was read when it has none.
#[derive(Debug, PartialEq)]
struct Verdict {
    winner: Option<&'static str>,
    consistent: Option<f64>,
    from: Option<ParsedFrom>,
}

/// Combines a row's verdict (and, with `swap`, its swapped verdict): `None` readings are a
/// missing row; an unreadable reply makes the row `invalid`, with no winner.
fn verdict(first: Option<&Reading>, second: Option<Option<&Reading>>) -> Verdict {
    let label = |r: &Reading| -> Option<&'static str> {
        let l = r.label.as_deref()?;
        LABELS.iter().copied().find(|x| *x == l)
    };
    let Some(first) = first else {
        return Verdict {
            winner: None,
            consistent: None,
            from: None,
        };
    };
    let invalid = Verdict {
        winner: None,
        consistent: None,
        from: Some(ParsedFrom::Invalid),
    };
    let Some(a) = label(first) else {
        return invalid;
    };
    match second {
        None => Verdict {
            winner: Some(a),
            consistent: None,
            from: Some(first.from),
        },
        Some(None) => Verdict {
            winner: None,
            consistent: None,
            from: None,
        },
        Some(Some(second)) => match label(second) {
            None => invalid,
            Some(b) => {
                let agree = a == unswapped(b);
                Verdict {
                    winner: Some(if agree { a } else { "tie" }),
                    consistent: Some(f64::from(u8::from(agree))),
                    from: Some(first.from),
                }
            }
        },
    }
}

impl Pairwise {
    /// The prompt of the pairs in the order given, or with the answers exchanged.
    fn prompt(&self, swapped: bool) -> Prompt<'_> {
        let (a, b) = if swapped {
            (&self.output_b, &self.output_a)
        } else {
            (&self.output_a, &self.output_b)
        };
        let mut parts = vec![&self.user_prompt];
        parts.extend(self.reference.as_ref());
        parts.extend([a, b]);
        Prompt::SystemParts {
            system: self.system_prompt.as_ref(),
            parts,
            message: Box::new(message),
            instruction: match &self.system_prompt {
                Some(_) => INSTRUCTION.to_owned(),
                None => format!("{DEFAULT_SYSTEM_PROMPT}\n\n{INSTRUCTION}"),
            },
        }
    }

    /// Calls `f` with the prompts asked: the answers as given, and exchanged when `swap`.
    fn with_orders<'s, T>(&'s self, f: impl FnOnce(&[&dyn Fn() -> Prompt<'s>]) -> T) -> T {
        let given = || self.prompt(false);
        let swapped = || self.prompt(true);
        if self.swap {
            f(&[&given, &swapped])
        } else {
            f(&[&given])
        }
    }

    /// The answer orders asked: as given, and exchanged when `swap`.
    fn orders(&self) -> &'static [bool] {
        if self.swap {
            &[false, true]
        } else {
            &[false]
        }
    }
}

fn digest(content: &str, keep_reasoning: bool) -> Reading {
    Reading::labelled(parse_label(content, LABELS, KEYS), keep_reasoning)
}

impl Scorer for Pairwise {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.system_prompt
            .iter()
            .chain([&self.user_prompt, &self.output_a, &self.output_b])
            .chain(self.reference.iter())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        Some(&self.output_a)
    }

    fn model_key(&self) -> Option<&str> {
        Some(&self.asked.model_key)
    }

    fn judge(&self) -> Option<&dyn Judged> {
        Some(self)
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let (ctx, rows) = (input.ctx, input.rows);
        let judge = judge_ctx(input)?;
        let keys = self.with_orders(|orders| self.asked.ask(judge, ctx, rows, orders, &digest))?;
        let memo = judge.memo.entries();
        let first = readings(&memo, &keys[0]);
        let second = keys.get(1).map(|k| readings(&memo, k));
        let (mut winner, mut score, mut consistent, mut reasons, mut statuses) = (
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
        );
        let (mut missing, mut invalid) = (0u64, 0u64);
        for r in 0..rows {
            let v = verdict(first[r], second.as_ref().map(|s| s[r]));
            missing += u64::from(v.from.is_none());
            invalid += u64::from(v.from == Some(ParsedFrom::Invalid));
            statuses.push(v.from.map_or("missing", ParsedFrom::status));
            winner.push(v.winner);
            score.push(v.winner.map(score_a));
            consistent.push(v.consistent);
            reasons.push(first[r].and_then(|x| x.reasoning.clone()));
        }
        let mut fields = Fields::new();
        fields.insert("winner", Arc::new(StringArray::from(winner)));
        fields.insert("score_a", Arc::new(Float64Array::from(score)));
        fields.insert("consistent", Arc::new(Float64Array::from(consistent)));
        if input.want("reasoning") {
            fields.insert("reasoning", Arc::new(StringArray::from(reasons)));
        }
        if input.want("judge_status") {
            fields.insert("judge_status", Arc::new(StringArray::from(statuses)));
        }
        fields.retain(|name, _| input.needed.contains(name));
        Ok(ScoreColumns {
            fields,
            missing,
            invalid,
        })
    }
}

impl Judged for Pairwise {
    fn prefetch(&self, runtime: &JudgeRuntime, ctx: &RowContext<'_>, rows: usize, memo: &Memo) {
        self.with_orders(|orders| {
            self.asked
                .prefetch(runtime, memo, ctx, rows, orders, &digest)
        });
    }

    fn requests(
        &self,
        ctx: &RowContext<'_>,
        rows: usize,
    ) -> Result<Vec<Option<ChatRequest>>, RowError> {
        let mut all = Vec::with_capacity(rows * self.orders().len());
        for &swapped in self.orders() {
            all.extend(self.asked.requests(ctx, rows, self.prompt(swapped))?);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(label: Option<&str>, from: ParsedFrom) -> Reading {
        Reading {
            from,
            grade: None,
            label: label.map(str::to_owned),
            reasoning: None,
            confidence: None,
        }
    }

    #[test]
    fn a_swapped_verdict_is_mapped_back_and_disagreement_is_a_tie() {
        let a = reading(Some("A"), ParsedFrom::Json);
        let b = reading(Some("B"), ParsedFrom::LastLine);
        let tie = reading(Some("tie"), ParsedFrom::Json);
        let bad = reading(None, ParsedFrom::Invalid);
        let v = |w: Option<&'static str>, c: Option<f64>, f: Option<ParsedFrom>| Verdict {
            winner: w,
            consistent: c,
            from: f,
        };
        let ok = Some(ParsedFrom::Json);
        // Without swap: the verdict as read.
        assert_eq!(
            verdict(Some(&b), None),
            v(Some("B"), None, Some(ParsedFrom::LastLine))
        );
        // A, then B with the answers exchanged: both chose answer A.
        assert_eq!(
            verdict(Some(&a), Some(Some(&b))),
            v(Some("A"), Some(1.0), ok)
        );
        // A both times: the position won, not the answer.
        assert_eq!(
            verdict(Some(&a), Some(Some(&a))),
            v(Some("tie"), Some(0.0), ok)
        );
        assert_eq!(
            verdict(Some(&tie), Some(Some(&tie))),
            v(Some("tie"), Some(1.0), ok)
        );
        assert_eq!(
            verdict(Some(&tie), Some(Some(&a))),
            v(Some("tie"), Some(0.0), ok)
        );
        let invalid = v(None, None, Some(ParsedFrom::Invalid));
        assert_eq!(verdict(Some(&bad), Some(Some(&a))), invalid);
        assert_eq!(verdict(Some(&a), Some(Some(&bad))), invalid);
        assert_eq!(verdict(None, Some(None)), v(None, None, None));
    }

    #[test]
    fn the_message_shows_the_prompt_the_reference_and_both_answers() {
        assert_eq!(
            message(&["Q?", "one", "two"]),
            "[User Prompt]\nQ?\n\n[The Start of Answer A]\none\n[The End of Answer A]\n\n[The Start of Answer B]\ntwo\n[The End of Answer B]"
        );
        assert_eq!(
            message(&["Q?", "ref", "one", "two"]),
            "[User Prompt]\nQ?\n\n[The Start of Reference Answer]\nref\n[The End of Reference Answer]\n\n[The Start of Answer A]\none\n[The End of Answer A]\n\n[The Start of Answer B]\ntwo\n[The End of Answer B]"
        );
        assert_eq!(score_a("A"), 1.0);
        assert_eq!(score_a("tie"), 0.5);
        assert_eq!(score_a("B"), 0.0);
    }
}
