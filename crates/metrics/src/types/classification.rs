//! The confusion-matrix metric types over a (ground truth, prediction) pair:
//! `binary-classification`, `multiclass-classification`, `precision`, `recall` and
//! `f1_score`, one registry entry each over one state ([`Confusion`]) and one parser.

use crate::accumulator::{first, State};
use crate::metric_type::{About, Kind, OptionDoc, ParseCx, Setup};
use crate::{Cells, ClassMode, Confusion, Figure, FoldMemo, MetricError, MAX_CONFUSION_CELLS};
use arrow::array::Array;
use evalscore_task::{MetricReads, TaskError};

/// A confusion-matrix metric type: its description and the figures it reports.
pub struct ClassificationMetric {
    about: &'static About,
    mode: ClassMode,
}

/// The options of a confusion-matrix metric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassOptions {
    pub positive_answer: Option<String>,
    pub negative_answer: Option<String>,
    /// `labels` of a multiclass metric.
    pub labels: Option<Vec<String>>,
}

const POSITIVE: OptionDoc = OptionDoc::required(
    "positive_answer",
    "the label of the positive class (compared by value, so `1`, `1.0` and `true` agree)",
);
const NEGATIVE_OPTIONAL: OptionDoc = OptionDoc::optional(
    "negative_answer",
    "the label of the negative class; without it, every other non-null label is negative",
);

pub static BINARY: ClassificationMetric = ClassificationMetric {
    about: &About {
        name: "binary-classification",
        doc: "Accuracy, precision, recall and F1 of a two-class prediction against its ground truth, with Wilson intervals at the task's `confidence` and the confusion counts; rows whose labels are neither answer (or null) are counted as `excluded`. scikit-learn's definitions, an undefined ratio null. The confusion matrix goes to confusion.parquet.",
        reads: MetricReads::Pair,
        options: &[
            POSITIVE,
            OptionDoc::required("negative_answer", "the label of the negative class"),
        ],
        example: "{type: binary-classification, field_gt: ground_truth, field_pred: value, positive_answer: \"yes\", negative_answer: \"no\"}",
        figures: "`accuracy`, `precision`, `recall` (each with `_ci_low`, `_ci_high`), `f1_score`, `tp`, `fp`, `tn`, `fn`, `support`, `excluded`",
        confusion: true,
    },
    mode: ClassMode::Binary,
};

pub static MULTICLASS: ClassificationMetric = ClassificationMetric {
    about: &About {
        name: "multiclass-classification",
        doc: "Accuracy (with a Wilson interval), macro, micro and weighted precision, recall and F1, and per-class figures of a prediction against its ground truth; with `labels`, rows with another label are counted as `excluded`. scikit-learn's definitions, an undefined ratio null. At most 100,000 (actual, predicted) pairs. The confusion matrix goes to confusion.parquet.",
        reads: MetricReads::Pair,
        options: &[OptionDoc::optional(
            "labels",
            "the classes, in report order (default: every label seen, sorted)",
        )],
        example: "{type: multiclass-classification, field_gt: ground_truth, field_pred: value}",
        figures: "`accuracy` (with `_ci_low`, `_ci_high`), `macro_*`, `micro_*`, `weighted_*` of `precision`, `recall`, `f1_score`, `support`, `excluded`; per class `label`: `precision`, `recall`, `f1_score`, `support`",
        confusion: true,
    },
    mode: ClassMode::Multiclass,
};

/// The About of a single figure of the positive class (`precision`, `recall`, `f1_score`).
const fn positive_class(
    name: &'static str,
    doc: &'static str,
    example: &'static str,
    figures: &'static str,
) -> About {
    About {
        name,
        doc,
        reads: MetricReads::Pair,
        options: &[POSITIVE, NEGATIVE_OPTIONAL],
        example,
        figures,
        confusion: false,
    }
}

pub static PRECISION: ClassificationMetric = ClassificationMetric {
    about: &positive_class(
        "precision",
        "Precision of the positive class, with its Wilson interval.",
        "{type: precision, field_gt: ground_truth, field_pred: value, positive_answer: \"yes\"}",
        "`value`, `ci_low`, `ci_high`",
    ),
    mode: ClassMode::Precision,
};

pub static RECALL: ClassificationMetric = ClassificationMetric {
    about: &positive_class(
        "recall",
        "Recall of the positive class, with its Wilson interval.",
        "{type: recall, field_gt: ground_truth, field_pred: value, positive_answer: \"yes\"}",
        "`value`, `ci_low`, `ci_high`",
    ),
    mode: ClassMode::Recall,
};

pub static F1: ClassificationMetric = ClassificationMetric {
    about: &positive_class(
        "f1_score",
        "F1 of the positive class.",
        "{type: f1_score, field_gt: ground_truth, field_pred: value, positive_answer: \"yes\"}",
        "`value`",
    ),
    mode: ClassMode::F1,
};

/// The entry of each mode, for the metric type a state names.
const ENTRIES: [&ClassificationMetric; 5] = [&BINARY, &MULTICLASS, &PRECISION, &RECALL, &F1];

impl Kind for ClassificationMetric {
    type Options = ClassOptions;
    type State = Confusion;

    fn about(&self) -> &'static About {
        self.about
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<ClassOptions, TaskError> {
        let mut positive_answer = None;
        let mut negative_answer = None;
        if self.mode != ClassMode::Multiclass {
            positive_answer = Some(cx.required_label("positive_answer", "\"yes\"")?);
            negative_answer = if self.mode == ClassMode::Binary {
                Some(cx.required_label("negative_answer", "\"no\"")?)
            } else {
                cx.label("negative_answer")?
            };
            if positive_answer == negative_answer {
                return Err(cx
                    .err(format!(
                        "`positive_answer` and `negative_answer` of metric `{}` are both `{}`",
                        cx.metric_type,
                        positive_answer.unwrap_or_default()
                    ))
                    .with_hint("the two answers must differ"));
            }
        }
        let labels = cx.labels(1, "[cat, dog, pig]")?;
        Ok(ClassOptions {
            positive_answer,
            negative_answer,
            labels,
        })
    }

    fn state(&self, options: &ClassOptions, setup: &Setup) -> Confusion {
        Confusion::new(
            self.mode,
            options.positive_answer.clone(),
            options.negative_answer.clone(),
            options.labels.clone(),
            setup.confidence,
        )
    }
}

impl State for Confusion {
    fn reads(&self) -> MetricReads {
        MetricReads::Pair
    }

    fn metric_type(&self) -> &'static str {
        let mode = self.mode();
        ENTRIES
            .iter()
            .find(|e| e.mode == mode)
            .map_or(BINARY.about.name, |e| e.about.name)
    }

    fn name(&self) -> &'static str {
        "classification"
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let (gt, pred) = label_pair(inputs)?;
        Confusion::update(self, gt, pred)
    }

    fn update_shared(&mut self, inputs: &[&dyn Array], memo: &FoldMemo) -> Result<(), MetricError> {
        let (gt, pred) = label_pair(inputs)?;
        Confusion::update_with(self, gt, pred, Some(memo))
    }

    fn merge(&mut self, other: &Self) {
        Confusion::merge(self, other);
    }

    fn figures(&self) -> Vec<Figure> {
        Confusion::figures(self)
    }

    fn check_size(&self) -> Result<(), MetricError> {
        if self.pairs() > MAX_CONFUSION_CELLS {
            return Err(MetricError::Invalid(format!(
                "the confusion matrix has more than {MAX_CONFUSION_CELLS} (actual, predicted) pairs, its limit"
            )));
        }
        Ok(())
    }

    fn exclusion_warning(&self) -> Option<String> {
        Confusion::exclusion_warning(self)
    }

    fn confusion(&self) -> Option<Cells> {
        self.has_matrix().then(|| self.cells())
    }
}

/// A classification's two inputs: (ground truth, prediction).
fn label_pair<'a>(inputs: &[&'a dyn Array]) -> Result<(&'a dyn Array, &'a dyn Array), MetricError> {
    let gt = first(inputs)?;
    let pred = inputs
        .get(1)
        .ok_or_else(|| MetricError::Invalid("classification needs two inputs".to_owned()))?;
    Ok((gt, *pred))
}
