//! The lexical graded scorers `f1` (token F1), `bleu` (sentence BLEU), `chrf` (chrF++) and
//! `levenshtein` (normalized edit similarity): a `score` in [0, 1] against the best expected
//! string, and `is_correct = score >= threshold`. One kind per measure; `rouge`, which also
//! takes a variant, is its own file.

use crate::graded::{GradedScorer, Measure};
use crate::scorer::{About, OptionDoc, ParseCx, Scorer, ScorerType, VALUE_OPTION};
use evalscore_kernels::Lexical;
use evalscore_task::TaskError;

/// A lexical graded scorer kind: one name, one measure.
#[derive(Debug)]
pub struct LexicalScorerType {
    about: &'static About,
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
const OPTIONS: &[OptionDoc] = &[EXPECTED_OPTION, THRESHOLD_OPTION, VALUE_OPTION];

pub static F1: LexicalScorerType = LexicalScorerType {
    about: &About::new(
        &["f1"],
        "SQuAD v1.1 token F1 against the best reference.",
        OPTIONS,
        r#"{type: f1, expected: "{{ sample.answer }}", threshold: 0.5}"#,
    ),
    measure: Lexical::F1,
};

pub static BLEU: LexicalScorerType = LexicalScorerType {
    about: &About::new(
        &["bleu"],
        "Sentence BLEU against the references, from 0 to 1.",
        OPTIONS,
        "{type: bleu, expected: [a cat sat, the cat sat], threshold: 0.3}",
    ),
    measure: Lexical::Bleu,
};

pub static CHRF: LexicalScorerType = LexicalScorerType {
    about: &About::new(
        &["chrf"],
        "chrF++ (character n-grams and word n-grams up to 2) against the best reference, from 0 to 1.",
        OPTIONS,
        r#"{type: chrf, expected: "{{ sample.answer }}", threshold: 0.5}"#,
    ),
    measure: Lexical::Chrf,
};

pub static LEVENSHTEIN: LexicalScorerType = LexicalScorerType {
    about: &About::new(
        &["levenshtein"],
        "1 - edit distance / the longer length (in characters), against the best reference.",
        OPTIONS,
        r#"{type: levenshtein, expected: "{{ sample.answer }}", threshold: 0.8}"#,
    ),
    measure: Lexical::Levenshtein,
};

impl ScorerType for LexicalScorerType {
    fn about(&self) -> &'static About {
        self.about
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        GradedScorer::parse(cx, Measure::Lexical(self.measure))
    }
}
