//! `rouge`: ROUGE-1, ROUGE-2 or ROUGE-L F-measure against the best reference, a graded
//! scorer (`score` and `is_correct = score >= threshold`).

use crate::graded::{rouge_variant, GradedScorer, Measure};
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use crate::scorers::lexical::{EXPECTED_OPTION, THRESHOLD_OPTION};
use evalscore_kernels::Lexical;
use evalscore_task::TaskError;

/// The kind `rouge`.
#[derive(Debug)]
pub struct Rouge;

impl Kind for Rouge {
    const ABOUT: About = About::new(
        &["rouge"],
        "The ROUGE F-measure for `variant` (ROUGE-1, ROUGE-2 or ROUGE-L), against the best reference.",
        &[
            EXPECTED_OPTION,
            THRESHOLD_OPTION,
            OptionDoc::required("variant", "`rouge1`, `rouge2` or `rougeL`"),
            VALUE_OPTION,
        ],
        r#"{type: rouge, variant: rougeL, expected: "{{ sample.summary }}", threshold: 0.4}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let variant = rouge_variant(cx)?;
        GradedScorer::parse(cx, Measure::Lexical(Lexical::Rouge(variant)))
    }
}
