//! The typed task: scorers, their options, their metrics.

use crate::template::Template;
use crate::Location;
use evalscore_kernels::pattern::SearchPattern;
use evalscore_kernels::{
    Extractor, JsonSchema, Lexical, MatchMode, Needles, Normalizer, Tolerance,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A parsed, validated task definition.
#[derive(Debug)]
pub struct Task {
    /// The model output column named by `definition.output_column`, if any.
    pub output_column: Option<String>,
    pub scorers: Vec<ScorerSpec>,
    /// Non-fatal remarks (ignored keys, deprecated options), shown to the user and kept in run.json.
    pub warnings: Vec<String>,
    /// The `config:` values after `--set` overrides, as used for the placeholders.
    pub config: BTreeMap<String, String>,
    /// The level of every confidence interval (`confidence:`, default 0.95).
    pub confidence: f64,
    /// The judge endpoints of `models:`, by name (for model-graded scorers' `model_key`).
    pub models: BTreeMap<String, crate::ModelSpec>,
    /// SHA-256 of the task text after `<< config.NAME >>` substitution: two tasks with the
    /// same fingerprint score alike, so their metric states may be merged.
    pub fingerprint: [u8; 32],
}

impl Task {
    /// Every user function the task names, in task order, each with what names it (for
    /// messages): a `custom` scorer's `function`, a `python` metric's three.
    pub fn functions(&self) -> Vec<(String, &FunctionRef)> {
        let mut out = Vec::new();
        for s in &self.scorers {
            if let ScorerKind::Custom {
                function: Some(f), ..
            } = &s.kind
            {
                out.push((format!("scorer `{}`", s.key), f));
            }
            for m in &s.metrics {
                if let Some(p) = &m.python {
                    let what = format!("metric `{}` of scorer `{}`", m.name, s.key);
                    out.push((what.clone(), &p.function));
                    out.push((what.clone(), &p.merge));
                    out.push((what, &p.finish));
                }
            }
        }
        out
    }
}

/// Whether a scorer scores the solver output or does QA over it (seed: `ScorerPurpose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Score,
    Qa,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Score => "score",
            Purpose::Qa => "qa",
        }
    }
}

/// One scorer of the task.
#[derive(Debug)]
pub struct ScorerSpec {
    /// Warehouse-safe unique key: `[A-Za-z0-9_]` only.
    pub key: String,
    /// The scorer type as written (`string_equals`, ...).
    pub scorer_type: String,
    pub display_name: Option<String>,
    pub purpose: Purpose,
    pub kind: ScorerKind,
    /// `normalize:` steps, applied to both sides of the comparison in the order written.
    pub normalize: Option<Arc<Normalizer>>,
    /// `extract:`, applied to the value before scoring.
    pub extract: Option<Arc<Extractor>>,
    pub metrics: Vec<MetricSpec>,
    /// `write_scores: false`: the scorer's per-row fields are computed for its metrics but not
    /// written to scores.parquet (default true).
    pub write_scores: bool,
    pub location: Option<Location>,
}

/// The typed options of each scorer type.
#[derive(Debug)]
pub enum ScorerKind {
    /// AI GO!'s `string_equals`: byte-exact equality of `value` and `ground_truth`.
    StringEquals {
        ground_truth: Template,
        /// `None`: the model output.
        value: Option<Template>,
    },
    /// AI GO!'s `string_equals_mcqa`: first character of the output against a single-character choice.
    StringEqualsMcqa {
        ground_truth_choice: Template,
        choices: Option<Template>,
        /// `None`: the model output.
        value: Option<Template>,
    },
    /// Baserun's `match` (prefix), `includes` (substring), `fuzzy_match` (two-way substring),
    /// and with `negate` their `not_` forms.
    Match {
        mode: MatchMode,
        negate: bool,
        expected: Template,
        /// The expected strings prepared once, when `expected` is a literal or literal list.
        needles: Option<Arc<Needles>>,
        value: Option<Template>,
    },
    /// Baserun's `valid_json`, with an optional JSON Schema.
    ValidJson {
        schema: Option<Arc<JsonSchema>>,
        value: Option<Template>,
    },
    /// Baserun's `check_injection`.
    CheckInjection { value: Option<Template> },
    /// Baserun's `custom`: a minijinja condition over `value`, `ground_truth` and `sample`,
    /// or a user function (the Python package's `functions=`) over the value column and the
    /// ground-truth column. Exactly one of `condition` and `function` is set.
    Custom {
        condition: Option<Template>,
        function: Option<FunctionRef>,
        ground_truth: Option<Template>,
        value: Option<Template>,
    },
    /// AgenticAssure's `exact`.
    Exact {
        expected_output: Template,
        value: Option<Template>,
    },
    /// AgenticAssure's `regex`: `pattern` searched in the value.
    Regex {
        pattern: Arc<SearchPattern>,
        ground_truth: Option<Template>,
        value: Option<Template>,
    },
    /// AgenticAssure's `pass_fail`; without `expected_output` it checks only that an output was
    /// produced.
    PassFail {
        expected_output: Option<Template>,
        value: Option<Template>,
    },
    /// A model-graded scorer: AI GO!'s `model_as_a_judge_*`, Baserun's `model_graded_*`.
    Judge(Box<crate::judge::JudgeScorer>),
    /// inspect_ai's `match(numeric=True)`: the value's number equals the expected number
    /// within a tolerance.
    NumericMatch {
        expected: Template,
        tolerance: Tolerance,
        value: Option<Template>,
    },
    /// promptfoo's `contains-all`: every expected string is a substring of the value.
    IncludesAll {
        expected: Template,
        value: Option<Template>,
    },
    /// promptfoo's `not-regex`: `pattern` is not found in the value.
    NotRegex {
        pattern: Arc<SearchPattern>,
        value: Option<Template>,
    },
    /// promptfoo's `contains-json`: some substring is a JSON object or array (fitting `schema`).
    ContainsJson {
        schema: Option<Arc<JsonSchema>>,
        value: Option<Template>,
    },
    /// The graded scorers `f1`, `rouge`, `bleu`, `chrf`, `levenshtein` and `similarity`:
    /// `score` in [0, 1] and `is_correct` = `score >= threshold`.
    Graded {
        measure: GradedMeasure,
        expected: Template,
        threshold: f64,
        value: Option<Template>,
    },
}

/// What a graded scorer measures.
#[derive(Debug, Clone, PartialEq)]
pub enum GradedMeasure {
    Lexical(Lexical),
    /// `similarity` with `method: embedding`: cosine similarity of the embeddings that the
    /// endpoint `models.<model_key>` gives.
    Embedding {
        model_key: String,
        location: Option<Location>,
    },
}

/// Whether a scorer field holds numbers or text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Number,
    Text,
}

/// A field a scorer produces per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScorerField {
    pub name: &'static str,
    pub kind: FieldKind,
    /// Written to `scores.parquet` as `<key>__<name>`; the others (the compared texts) are
    /// available to metrics only, so that scores.parquet does not copy the input's text columns.
    pub written: bool,
}

const fn field(name: &'static str, kind: FieldKind, written: bool) -> ScorerField {
    ScorerField {
        name,
        kind,
        written,
    }
}

const STRING_EQUALS_FIELDS: &[ScorerField] = &[
    field("is_correct", FieldKind::Number, true),
    field("value", FieldKind::Text, false),
    field("ground_truth", FieldKind::Text, false),
];
const MCQA_FIELDS: &[ScorerField] = &[
    field("is_correct", FieldKind::Number, true),
    field("completion_validity", FieldKind::Text, true),
    field("value", FieldKind::Text, false),
    field("ground_truth", FieldKind::Text, false),
];

const MATCH_FIELDS: &[ScorerField] = &[
    field("is_correct", FieldKind::Number, true),
    field("value", FieldKind::Text, false),
    field("expected", FieldKind::Text, false),
];
const DETAILS_FIELDS: &[ScorerField] = &[
    field("is_correct", FieldKind::Number, true),
    field("details", FieldKind::Text, true),
    field("value", FieldKind::Text, false),
];
const EXACT_FIELDS: &[ScorerField] = &[
    field("is_correct", FieldKind::Number, true),
    field("details", FieldKind::Text, true),
    field("value", FieldKind::Text, false),
    field("expected", FieldKind::Text, false),
];
const CLASSIFIER_FIELDS: &[ScorerField] = &[
    field("is_correct", FieldKind::Number, true),
    field("predicted_label", FieldKind::Text, true),
    field("ground_truth_label", FieldKind::Text, true),
    field("reasoning", FieldKind::Text, true),
    field("confidence", FieldKind::Number, true),
    field("judge_status", FieldKind::Text, true),
];
const GRADER_FIELDS: &[ScorerField] = &[
    field("score", FieldKind::Number, true),
    field("is_correct", FieldKind::Number, true),
    field("grade", FieldKind::Number, true),
    field("reasoning", FieldKind::Text, true),
    field("judge_status", FieldKind::Text, true),
];
const JUDGE_CHOICE_FIELDS: &[ScorerField] = &[
    field("choice", FieldKind::Text, true),
    field("score", FieldKind::Number, true),
    field("is_correct", FieldKind::Number, true),
    field("judge_status", FieldKind::Text, true),
];
const VALUE_FIELDS: &[ScorerField] = &[
    field("is_correct", FieldKind::Number, true),
    field("value", FieldKind::Text, false),
];
const GRADED_FIELDS: &[ScorerField] = &[
    field("score", FieldKind::Number, true),
    field("is_correct", FieldKind::Number, true),
    field("value", FieldKind::Text, false),
    field("expected", FieldKind::Text, false),
];
const PASS_FAIL_FIELDS: &[ScorerField] = &[
    field("is_correct", FieldKind::Number, true),
    field("value", FieldKind::Text, false),
    field("expected", FieldKind::Text, false),
];

impl ScorerKind {
    /// Every field this scorer produces, written ones first in output order.
    pub fn fields(&self) -> &'static [ScorerField] {
        match self {
            ScorerKind::StringEquals { .. }
            | ScorerKind::Custom { .. }
            | ScorerKind::Regex { .. } => STRING_EQUALS_FIELDS,
            ScorerKind::StringEqualsMcqa { .. } => MCQA_FIELDS,
            ScorerKind::Match { .. } => MATCH_FIELDS,
            ScorerKind::ValidJson { .. } | ScorerKind::CheckInjection { .. } => DETAILS_FIELDS,
            ScorerKind::Exact { .. } => EXACT_FIELDS,
            ScorerKind::PassFail { .. } => PASS_FAIL_FIELDS,
            ScorerKind::NumericMatch { .. } | ScorerKind::IncludesAll { .. } => MATCH_FIELDS,
            ScorerKind::NotRegex { .. } => VALUE_FIELDS,
            ScorerKind::ContainsJson { .. } => DETAILS_FIELDS,
            ScorerKind::Graded { .. } => GRADED_FIELDS,
            ScorerKind::Judge(j) => match j.kind {
                crate::judge::JudgeKind::Classifier { .. } => CLASSIFIER_FIELDS,
                crate::judge::JudgeKind::Grader { .. } => GRADER_FIELDS,
                crate::judge::JudgeKind::Graded { .. } => JUDGE_CHOICE_FIELDS,
            },
        }
    }

    /// The `value` template; `None` means the model output.
    pub fn value(&self) -> Option<&Template> {
        match self {
            ScorerKind::StringEquals { value, .. }
            | ScorerKind::StringEqualsMcqa { value, .. }
            | ScorerKind::Match { value, .. }
            | ScorerKind::ValidJson { value, .. }
            | ScorerKind::CheckInjection { value }
            | ScorerKind::Custom { value, .. }
            | ScorerKind::Exact { value, .. }
            | ScorerKind::Regex { value, .. }
            | ScorerKind::PassFail { value, .. }
            | ScorerKind::NumericMatch { value, .. }
            | ScorerKind::IncludesAll { value, .. }
            | ScorerKind::NotRegex { value, .. }
            | ScorerKind::ContainsJson { value, .. }
            | ScorerKind::Graded { value, .. } => value.as_ref(),
            ScorerKind::Judge(j) => j.value(),
        }
    }

    /// Every template of the scorer.
    pub fn templates(&self) -> Vec<&Template> {
        match self {
            ScorerKind::Match {
                expected, value, ..
            } => std::iter::once(expected).chain(value.as_ref()).collect(),
            ScorerKind::ValidJson { value, .. } | ScorerKind::CheckInjection { value } => {
                value.iter().collect()
            }
            ScorerKind::Custom {
                condition,
                ground_truth,
                value,
                ..
            } => condition
                .iter()
                .chain(ground_truth.as_ref())
                .chain(value.as_ref())
                .collect(),
            ScorerKind::Exact {
                expected_output,
                value,
            } => std::iter::once(expected_output)
                .chain(value.as_ref())
                .collect(),
            ScorerKind::PassFail {
                expected_output,
                value,
            } => expected_output.iter().chain(value.as_ref()).collect(),
            ScorerKind::Regex {
                ground_truth,
                value,
                ..
            } => ground_truth.iter().chain(value.as_ref()).collect(),
            ScorerKind::StringEquals {
                ground_truth,
                value,
            } => std::iter::once(ground_truth)
                .chain(value.as_ref())
                .collect(),
            ScorerKind::StringEqualsMcqa {
                ground_truth_choice,
                choices,
                value,
            } => std::iter::once(ground_truth_choice)
                .chain(choices.as_ref())
                .chain(value.as_ref())
                .collect(),
            ScorerKind::NumericMatch {
                expected, value, ..
            }
            | ScorerKind::IncludesAll { expected, value }
            | ScorerKind::Graded {
                expected, value, ..
            } => std::iter::once(expected).chain(value.as_ref()).collect(),
            ScorerKind::NotRegex { value, .. } | ScorerKind::ContainsJson { value, .. } => {
                value.iter().collect()
            }
            ScorerKind::Judge(j) => j.templates(),
        }
    }

    /// The templates whose value may be a list as well as text: `choices` of
    /// `string_equals_mcqa` and `expected` of the match family, `includes_all` and the graded
    /// scorers. Every other template is read as text.
    pub fn list_templates(&self) -> Vec<&Template> {
        match self {
            ScorerKind::StringEqualsMcqa { choices, .. } => choices.iter().collect(),
            ScorerKind::Match { expected, .. }
            | ScorerKind::IncludesAll { expected, .. }
            | ScorerKind::Graded { expected, .. } => vec![expected],
            _ => Vec::new(),
        }
    }

    pub(crate) fn templates_mut(&mut self) -> Vec<&mut Template> {
        match self {
            ScorerKind::Match {
                expected, value, ..
            } => std::iter::once(expected).chain(value.as_mut()).collect(),
            ScorerKind::ValidJson { value, .. } | ScorerKind::CheckInjection { value } => {
                value.iter_mut().collect()
            }
            ScorerKind::Custom {
                condition,
                ground_truth,
                value,
                ..
            } => condition
                .iter_mut()
                .chain(ground_truth.as_mut())
                .chain(value.as_mut())
                .collect(),
            ScorerKind::Exact {
                expected_output,
                value,
            } => std::iter::once(expected_output)
                .chain(value.as_mut())
                .collect(),
            ScorerKind::PassFail {
                expected_output,
                value,
            } => expected_output.iter_mut().chain(value.as_mut()).collect(),
            ScorerKind::Regex {
                ground_truth,
                value,
                ..
            } => ground_truth.iter_mut().chain(value.as_mut()).collect(),
            ScorerKind::StringEquals {
                ground_truth,
                value,
            } => std::iter::once(ground_truth)
                .chain(value.as_mut())
                .collect(),
            ScorerKind::StringEqualsMcqa {
                ground_truth_choice,
                choices,
                value,
            } => std::iter::once(ground_truth_choice)
                .chain(choices.as_mut())
                .chain(value.as_mut())
                .collect(),
            ScorerKind::NumericMatch {
                expected, value, ..
            }
            | ScorerKind::IncludesAll { expected, value }
            | ScorerKind::Graded {
                expected, value, ..
            } => std::iter::once(expected).chain(value.as_mut()).collect(),
            ScorerKind::NotRegex { value, .. } | ScorerKind::ContainsJson { value, .. } => {
                value.iter_mut().collect()
            }
            ScorerKind::Judge(j) => j.templates_mut(),
        }
    }

    /// The `models:` entry the scorer asks: a judge's, or `similarity` by embedding's.
    pub fn model_key(&self) -> Option<&str> {
        match self {
            ScorerKind::Judge(j) => Some(&j.model_key),
            ScorerKind::Graded {
                measure: GradedMeasure::Embedding { model_key, .. },
                ..
            } => Some(model_key),
            _ => None,
        }
    }

    /// The judge scorer's definition, for a model-graded scorer.
    pub fn judge(&self) -> Option<&crate::judge::JudgeScorer> {
        match self {
            ScorerKind::Judge(j) => Some(j),
            _ => None,
        }
    }
}

/// One metric of a scorer.
#[derive(Debug, Clone)]
pub struct MetricSpec {
    /// The metric's `name`, else its type.
    pub name: String,
    /// The metric type as written (`mean`, `binary-classification`, ...).
    pub metric_type: String,
    pub kind: MetricKind,
    /// What metrics.parquet shows as `field`: the field, or `field_gt,field_pred`.
    pub field: String,
    /// The scorer fields the metric reads: `[field]`, or `[field_gt, field_pred]`.
    pub inputs: Vec<String>,
    pub positive_answer: Option<String>,
    pub negative_answer: Option<String>,
    /// `labels` of a multiclass metric.
    pub labels: Option<Vec<String>>,
    /// Input columns to report the metric by, besides overall.
    pub group_by: Vec<String>,
    pub key: Option<String>,
    /// A `python` metric's functions.
    pub python: Option<PythonMetric>,
    pub location: Option<Location>,
}

/// A user function a task names (`function:` of a `custom` scorer, the functions of a
/// `python` metric): supplied at bind time by the Python package, never by the task file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionRef {
    pub name: String,
    /// Where the task names it.
    pub location: Option<Location>,
}

/// The three functions of a `python` metric: `function` folds a batch's field values into a
/// partial state, `merge` combines two partial states, `finish` turns the merged state into
/// the metric's figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonMetric {
    pub function: FunctionRef,
    pub merge: FunctionRef,
    pub finish: FunctionRef,
}

/// The typed metric types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    Mean,
    Min,
    Max,
    StdDev,
    Frequency,
    BinaryClassification,
    MulticlassClassification,
    Precision,
    Recall,
    F1Score,
    /// A user metric folded by functions of the Python package.
    Python,
}

impl MetricKind {
    pub(crate) const ALL: &'static [(&'static str, MetricKind)] = &[
        ("mean", MetricKind::Mean),
        ("min", MetricKind::Min),
        ("max", MetricKind::Max),
        ("std_dev", MetricKind::StdDev),
        ("frequency", MetricKind::Frequency),
        ("binary-classification", MetricKind::BinaryClassification),
        (
            "multiclass-classification",
            MetricKind::MulticlassClassification,
        ),
        ("precision", MetricKind::Precision),
        ("recall", MetricKind::Recall),
        ("f1_score", MetricKind::F1Score),
        ("python", MetricKind::Python),
    ];

    /// Whether the metric needs a numeric field.
    pub fn numeric(self) -> bool {
        matches!(
            self,
            MetricKind::Mean | MetricKind::Min | MetricKind::Max | MetricKind::StdDev
        )
    }

    /// Whether the metric compares a ground-truth field with a prediction field.
    pub fn classification(self) -> bool {
        matches!(
            self,
            MetricKind::BinaryClassification
                | MetricKind::MulticlassClassification
                | MetricKind::Precision
                | MetricKind::Recall
                | MetricKind::F1Score
        )
    }

    /// The keys the metric type accepts.
    pub(crate) fn keys(self) -> &'static [&'static str] {
        match self {
            MetricKind::BinaryClassification
            | MetricKind::Precision
            | MetricKind::Recall
            | MetricKind::F1Score => &[
                "type",
                "field_gt",
                "field_pred",
                "positive_answer",
                "negative_answer",
                "name",
                "key",
                "group_by",
            ],
            MetricKind::MulticlassClassification => &[
                "type",
                "field_gt",
                "field_pred",
                "labels",
                "name",
                "key",
                "group_by",
            ],
            MetricKind::Python => &[
                "type", "field", "function", "merge", "finish", "name", "key", "group_by",
            ],
            _ => &["type", "field", "name", "key", "group_by"],
        }
    }
}

/// Replaces characters outside `[A-Za-z0-9_]` with `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
