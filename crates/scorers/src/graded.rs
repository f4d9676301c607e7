//! What the graded scorers (`f1`, `rouge`, `bleu`, `chrf`, `levenshtein`, `similarity`) share:
//! a `score` in [0, 1] against the expected strings, and `is_correct = score >= threshold`.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{batch, insert, Bound, Check};
use crate::expected::ExpectedList;
use crate::input::row_err;
use crate::row_error::{internal, RowError};
use crate::scorer::{ParseCx, Scorer};
use evalscore_judge::cosine;
use evalscore_kernels::{graded, graded_by, Lexical, RougeVariant};
use evalscore_task::{did_you_mean, Location, ModelSpec, ScorerField, TaskError};
use std::collections::BTreeMap;

/// What a graded scorer measures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Measure {
    Lexical(Lexical),
    /// `similarity` with `method: embedding`: cosine similarity of the embeddings that the
    /// endpoint `models.<model_key>` gives.
    Embedding {
        model_key: String,
        location: Option<Location>,
    },
}

/// A bound graded scorer: its measure and threshold, with `expected` and the scored text in
/// its [`Bound`].
#[derive(Debug)]
pub(crate) struct GradedScorer {
    pub measure: Measure,
    pub threshold: f64,
}

impl GradedScorer {
    /// Parses what every graded scorer takes besides its measure: `threshold` and
    /// `expected` (both required), then `value`.
    pub fn parse(cx: &mut ParseCx<'_>, measure: Measure) -> Result<Box<dyn Scorer>, TaskError> {
        let threshold = threshold(cx)?;
        let expected = cx.list_template("expected")?.ok_or_else(|| {
            cx.err(format!("scorer `{}` needs `expected`", cx.scorer_type()))
                .with_hint("e.g. `expected: \"{{ sample.answer }}\"` or a list of references")
        })?;
        let check = GradedScorer { measure, threshold };
        cx.bind(check, Some(expected))
    }
}

/// `threshold:`, required: a number from 0 to 1.
fn threshold(cx: &ParseCx<'_>) -> Result<f64, TaskError> {
    let hint = "`is_correct` is `score >= threshold`; e.g. `threshold: 0.5`";
    let node = cx.get("threshold").ok_or_else(|| {
        cx.err(format!("scorer `{}` needs `threshold`", cx.scorer_type()))
            .with_hint(hint)
    })?;
    let text = node.scalar_string("threshold")?;
    match text.trim().parse::<f64>() {
        Ok(t) if (0.0..=1.0).contains(&t) => Ok(t),
        _ => Err(node
            .err(format!(
                "`threshold` must be a number from 0 to 1, found `{text}`"
            ))
            .with_hint(hint)),
    }
}

/// `variant:` of ROUGE, required.
pub(crate) fn rouge_variant(cx: &ParseCx<'_>) -> Result<RougeVariant, TaskError> {
    let hint = format!("variants: {}", RougeVariant::NAMES.join(", "));
    let node = cx.get("variant").ok_or_else(|| {
        cx.err(format!(
            "scorer `{}` with ROUGE needs `variant`",
            cx.scorer_type()
        ))
        .with_hint(hint.clone())
    })?;
    let name = node.scalar_string("variant")?;
    RougeVariant::from_name(&name).ok_or_else(|| {
        let h = match did_you_mean(&name, RougeVariant::NAMES) {
            Some(s) => format!("did you mean `{s}`? {hint}"),
            None => hint,
        };
        node.err(format!("unknown ROUGE variant `{name}`"))
            .with_hint(h)
    })
}

impl Check for GradedScorer {
    const FIELDS: &'static [ScorerField] = &[
        ScorerField::number("score"),
        ScorerField::number("is_correct"),
        ScorerField::compared("value"),
        ScorerField::compared("expected"),
    ];

    fn model_key(&self) -> Option<&str> {
        match &self.measure {
            Measure::Embedding { model_key, .. } => Some(model_key),
            Measure::Lexical(_) => None,
        }
    }

    /// A `similarity` by embedding names an endpoint of `models:`.
    fn check(&self, models: &BTreeMap<String, ModelSpec>) -> Result<(), TaskError> {
        let Measure::Embedding {
            model_key,
            location,
        } = &self.measure
        else {
            return Ok(());
        };
        if models.contains_key(model_key) {
            return Ok(());
        }
        let names: Vec<&str> = models.keys().map(String::as_str).collect();
        let hint = if names.is_empty() {
            "the task has no `models:`; add one, e.g. `models: {embedder: {base_url: \"http://127.0.0.1:8080/v1\", model: nomic-embed}}`".to_owned()
        } else {
            match did_you_mean(model_key, &names) {
                Some(n) => format!("did you mean `{n}`? models: {}", names.join(", ")),
                None => format!("models: {}", names.join(", ")),
            }
        };
        Err(TaskError::new(
            format!("`model_key: {model_key}` names no entry of `models:`"),
            *location,
        )
        .with_hint(hint))
    }

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let threshold = self.threshold;
        let model_key = match &self.measure {
            Measure::Lexical(l) => {
                return b.score_strings(input, None, |batch, e| graded(batch, e, *l, threshold))
            }
            Measure::Embedding { model_key, .. } => model_key,
        };
        let judge = input
            .judge
            .ok_or_else(|| internal(&"similarity without a judge runtime"))?;
        let t = b.other.as_ref();
        let rows = input.rows;
        b.input.score(input, |v, fields| {
            let e = ExpectedList::new(t, input.ctx, None, v.normalize)?;
            // The texts of the batch (values and expected strings, after `normalize:`), each
            // embedded once, then every row scored with their vectors.
            let mut first_row: BTreeMap<String, usize> = BTreeMap::new();
            let mut row = 0;
            graded_by(batch(v, rows), e.expected(), threshold, |v, refs| {
                for t in std::iter::once(v).chain(refs.iter()) {
                    first_row.entry(t.to_owned()).or_insert(row);
                }
                row += 1;
                0.0
            })
            .map_err(|err| row_err(t, err))?;
            let texts: Vec<String> = first_row.keys().cloned().collect();
            let vectors = crate::judge::embed::embeddings(judge, model_key, &texts, &first_row)?;
            let out = graded_by(batch(v, rows), e.expected(), threshold, |v, refs| {
                let Some(a) = vectors.get(v) else { return 0.0 };
                refs.iter()
                    .filter_map(|r| vectors.get(r).and_then(|b| cosine(a, b)))
                    .fold(0.0, f64::max)
            })
            .map_err(|err| row_err(t, err))?;
            if input.want("expected") {
                fields.insert("expected", e.field(rows));
            }
            Ok(insert(fields, out))
        })
    }
}
