//! `rouge`: ROUGE-1, ROUGE-2 or ROUGE-L F-measure (the `rouge-score` package's) against the
//! best reference, a graded scorer (`score` and `is_correct = score >= threshold`).

use crate::graded::{rouge_variant, GradedScorer, Measure};
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use crate::scorers::lexical::{EXPECTED_OPTION, THRESHOLD_OPTION};
use evalscore_kernels::Lexical;
use evalscore_task::TaskError;

/// The kind `rouge`.
#[derive(Debug)]
pub struct Rouge;

impl ScorerType for Rouge {
    fn names(&self) -> &'static [&'static str] {
        &["rouge"]
    }

    fn doc(&self) -> &'static str {
        "promptfoo's `rouge-n`: the F-measure of Google's `rouge-score` package for `variant`, against the best reference."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            EXPECTED_OPTION,
            THRESHOLD_OPTION,
            OptionDoc::required("variant", "`rouge1`, `rouge2` or `rougeL`"),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        r#"{type: rouge, variant: rougeL, expected: "{{ sample.summary }}", threshold: 0.4}"#
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let variant = rouge_variant(cx)?;
        GradedScorer::parse(cx, Measure::Lexical(Lexical::Rouge(variant)))
    }
}
