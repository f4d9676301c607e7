//! The lexical graded scorers `f1` (token F1), `bleu` (sentence BLEU), `chrf` (chrF++) and
//! `levenshtein` (normalized edit similarity): a `score` in [0, 1] against the best expected
//! string, and `is_correct = score >= threshold`. One kind per measure; `rouge`, which also
//! takes a variant, is its own file.

use crate::graded::{GradedScorer, Measure};
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use evalscore_kernels::Lexical;
use evalscore_task::TaskError;

/// A lexical graded scorer kind: one name, one measure.
#[derive(Debug)]
pub struct LexicalScorerType {
    names: &'static [&'static str],
    doc: &'static str,
    example: &'static str,
    measure: Lexical,
}

/// The options every graded scorer takes besides its measure's own.
pub(crate) const EXPECTED_OPTION: OptionDoc = OptionDoc::required(
    "expected",
    "the reference(s): a text, a literal list, a list column, or a JSON or Python list text; the best one counts",
);
pub(crate) const THRESHOLD_OPTION: OptionDoc = OptionDoc::required(
    "threshold",
    "a number from 0 to 1: `is_correct` is `score >= threshold`",
);

pub static F1: LexicalScorerType = LexicalScorerType {
    names: &["f1"],
    doc: "inspect_ai's `f1()`: SQuAD v1.1 token F1 against the best reference.",
    example: r#"{type: f1, expected: "{{ sample.answer }}", threshold: 0.5}"#,
    measure: Lexical::F1,
};

pub static BLEU: LexicalScorerType = LexicalScorerType {
    names: &["bleu"],
    doc: "promptfoo's `bleu`: sacrebleu's `sentence_bleu` against the references, divided by 100.",
    example: "{type: bleu, expected: [a cat sat, the cat sat], threshold: 0.3}",
    measure: Lexical::Bleu,
};

pub static CHRF: LexicalScorerType = LexicalScorerType {
    names: &["chrf"],
    doc: "chrF++: sacrebleu's `CHRF(word_order=2)` against the best reference, divided by 100.",
    example: r#"{type: chrf, expected: "{{ sample.answer }}", threshold: 0.5}"#,
    measure: Lexical::Chrf,
};

pub static LEVENSHTEIN: LexicalScorerType = LexicalScorerType {
    names: &["levenshtein"],
    doc: "promptfoo's `levenshtein`: 1 - edit distance / the longer length (rapidfuzz's `normalized_similarity`), against the best reference.",
    example: r#"{type: levenshtein, expected: "{{ sample.answer }}", threshold: 0.8}"#,
    measure: Lexical::Levenshtein,
};

impl ScorerType for LexicalScorerType {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }

    fn doc(&self) -> &'static str {
        self.doc
    }

    fn options(&self) -> &'static [OptionDoc] {
        &[
            EXPECTED_OPTION,
            THRESHOLD_OPTION,
            crate::scorer::VALUE_OPTION,
        ]
    }

    fn example(&self) -> &'static str {
        self.example
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        GradedScorer::parse(cx, Measure::Lexical(self.measure))
    }
}
