//! The metrics of a scorer (`metrics:`): their types, their options, and what they read: a
//! field of the scorer, an input column or a template over the row.

use crate::raw::{MapNode, Node, Tree};
use crate::template::{Template, TemplateCompiler, TemplateKind};
use crate::{FieldKind, Location, ScorerField, TaskError};

/// One metric of a scorer.
#[derive(Debug, Clone)]
pub struct MetricSpec {
    /// The metric's `name`; without one, its type, or `type(field)` when the scorer has
    /// another unnamed metric of that type ([`parse_metrics`]).
    pub name: String,
    /// The metric type as written (`mean`, `binary-classification`, ...).
    pub metric_type: String,
    pub kind: MetricKind,
    /// What metrics.parquet shows as `field`: the field, or `field_gt,field_pred`.
    pub field: String,
    /// What the metric reads, as written: `[field]`, or `[field_gt, field_pred]`. Each is a
    /// scorer field, an input column or a template, as `sources` says.
    pub inputs: Vec<String>,
    /// Where each entry of `inputs` comes from.
    pub sources: Vec<MetricInput>,
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

/// Where a metric input comes from. A name that is a field of the scorer is that field (so
/// tasks written before metrics could read the data keep their meaning); another bare name
/// is an input column; text with `{{` or `{%` is a template over the input row.
#[derive(Debug, Clone)]
pub enum MetricInput {
    /// The scorer field of that name.
    Field,
    /// An input column, named bare; whether the input has it is checked at bind time.
    Column(Template),
    /// A template over the input row (`{{ sample.human_label }}`).
    Template(Template),
}

impl MetricInput {
    /// The template a data input is evaluated with (`None`: a scorer field).
    pub fn template(&self) -> Option<&Template> {
        match self {
            MetricInput::Field => None,
            MetricInput::Column(t) | MetricInput::Template(t) => Some(t),
        }
    }
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

/// A user function's name (`function:`, `merge:`, `finish:`): a non-empty string.
pub fn function_ref(node: Node<'_>, what: &str) -> Result<FunctionRef, TaskError> {
    let name = node.scalar_string(what)?;
    if name.trim().is_empty() {
        return Err(node
            .err(format!("`{what}` is empty"))
            .with_hint("name a function given to the Python package's `functions=`"));
    }
    Ok(FunctionRef {
        name,
        location: node.location,
    })
}

/// Parses a scorer's `metrics:` list ([`parse_metric`] for each entry), then gives unnamed
/// metrics that share a type on the scorer distinct names: `mean(is_correct)`,
/// `mean(score)`; a type that occurs once keeps its type as its name.
pub fn parse_metrics(
    node: Node<'_>,
    fields: &[ScorerField],
    scorer_type: &str,
    compiler: &mut TemplateCompiler,
) -> Result<Vec<MetricSpec>, TaskError> {
    let mut metrics = Vec::new();
    let mut named = Vec::new();
    for m in node.seq("`metrics`")? {
        named.push(m.as_map().is_some_and(|map| map.get("name").is_some()));
        metrics.push(parse_metric(m, fields, scorer_type, compiler)?);
    }
    let unnamed = |t: &str| {
        metrics
            .iter()
            .zip(&named)
            .filter(|(m, &n)| !n && m.metric_type == t)
            .count()
    };
    let shared: Vec<bool> = metrics
        .iter()
        .zip(&named)
        .map(|(m, &n)| !n && unnamed(&m.metric_type) > 1)
        .collect();
    for (m, shared) in metrics.iter_mut().zip(shared) {
        if shared {
            m.name = format!("{}({})", m.metric_type, m.field);
        }
    }
    Ok(metrics)
}

/// Whether a metric input is a template rather than a name.
fn is_template(text: &str) -> bool {
    text.contains("{{") || text.contains("{%")
}

/// Parses one entry of a scorer's `metrics:`; `fields` are the fields the scorer produces,
/// `compiler` the task's, for inputs that are templates.
pub fn parse_metric(
    node: Node<'_>,
    fields: &[ScorerField],
    scorer_type: &str,
    compiler: &mut TemplateCompiler,
) -> Result<MetricSpec, TaskError> {
    let map: MapNode<'_> = node.map("a metric")?;
    let names: Vec<&str> = MetricKind::ALL.iter().map(|(n, _)| *n).collect();
    let type_node = map.get("type").ok_or_else(|| {
        map.err("metric has no `type`")
            .with_hint(format!("metric types: {}", names.join(", ")))
    })?;
    let metric_type = type_node.scalar_string("type")?;
    let kind = MetricKind::ALL
        .iter()
        .find(|(n, _)| *n == metric_type)
        .map(|(_, k)| *k)
        .ok_or_else(|| {
            let hint = match crate::error::did_you_mean(&metric_type, &names) {
                Some(s) => format!("did you mean `{s}`? metric types: {}", names.join(", ")),
                None => format!("metric types: {}", names.join(", ")),
            };
            type_node
                .err(format!("unknown metric type `{metric_type}`"))
                .with_hint(hint)
        })?;
    map.check_keys(kind.keys(), &format!("metric `{metric_type}`"))?;
    let text = |key: &str| -> Result<Option<String>, TaskError> {
        map.get(key).map(|n| n.scalar_string(key)).transpose()
    };
    let required = |key: &str, example: &str| -> Result<(String, Node<'_>), TaskError> {
        let n = map.get(key).ok_or_else(|| {
            map.err(format!("metric `{metric_type}` needs `{key}`"))
                .with_hint(format!(
                    "e.g. `{key}: {example}`; {}",
                    field_hint(fields, scorer_type)
                ))
        })?;
        Ok((n.scalar_string(key)?, n))
    };
    // A scorer field when the scorer has one of that name (its kind), else a column or a
    // template (no kind: the data's type is known at bind time).
    let mut source = |key: &str,
                      text: &str,
                      n: Node<'_>|
     -> Result<(MetricInput, Option<FieldKind>), TaskError> {
        if let Some(f) = fields.iter().find(|f| f.name == text) {
            return Ok((MetricInput::Field, Some(f.kind)));
        }
        let what = format!("{metric_type}.{key}");
        if !is_template(text) {
            return Ok((
                MetricInput::Column(compiler.column(text.to_owned(), n.location, &what)),
                None,
            ));
        }
        let t = compiler.compile(n, &what)?;
        if t.uses_model_output() {
            return Err(n
                .err(format!(
                    "template of `{what}` reads the model output, which a metric cannot read"
                ))
                .with_hint(format!(
                    "a metric reads the input row (`sample`); the scored text is a field of the scorer: {}",
                    field_hint(fields, scorer_type)
                )));
        }
        Ok((MetricInput::Template(t), None))
    };
    let (field, inputs, sources) = if kind.classification() {
        let (gt, gt_node) = required("field_gt", "ground_truth")?;
        let (pred, pred_node) = required("field_pred", "value")?;
        let gt_source = source("field_gt", &gt, gt_node)?.0;
        let pred_source = source("field_pred", &pred, pred_node)?.0;
        (
            format!("{gt},{pred}"),
            vec![gt, pred],
            vec![gt_source, pred_source],
        )
    } else {
        let (field, field_node) = required("field", "is_correct")?;
        let (src, fk) = source("field", &field, field_node)?;
        if kind.numeric() {
            let numeric = || -> String {
                let names: Vec<&str> = fields
                    .iter()
                    .filter(|f| f.kind == FieldKind::Number)
                    .map(|f| f.name)
                    .collect();
                if names.is_empty() {
                    format!("scorer `{scorer_type}` has no numeric field")
                } else {
                    format!("numeric fields: {}", names.join(", "))
                }
            };
            if fk == Some(FieldKind::Text) {
                return Err(field_node
                    .err(format!(
                        "metric `{metric_type}` needs a numeric field, and `{field}` of scorer `{scorer_type}` is text"
                    ))
                    .with_hint(format!(
                        "{}; use `frequency` to count text values",
                        numeric()
                    )));
            }
            if let MetricInput::Template(t) = &src {
                if !matches!(t.kind, TemplateKind::Column(_)) {
                    return Err(field_node
                        .err(format!(
                            "metric `{metric_type}` needs a numeric field, and the template `{field}` gives text"
                        ))
                        .with_hint(format!(
                            "a template that is one column reference (`{{{{ sample.col }}}}`) reads a numeric column as numbers; {}; use `frequency` to count text values",
                            numeric()
                        )));
                }
            }
        }
        (field.clone(), vec![field], vec![src])
    };
    let mut positive_answer = None;
    let mut negative_answer = None;
    match kind {
        MetricKind::BinaryClassification
        | MetricKind::Precision
        | MetricKind::Recall
        | MetricKind::F1Score => {
            positive_answer = Some(required("positive_answer", "\"yes\"")?.0);
            negative_answer = if kind == MetricKind::BinaryClassification {
                Some(required("negative_answer", "\"no\"")?.0)
            } else {
                text("negative_answer")?
            };
            if positive_answer == negative_answer {
                return Err(map
                    .err(format!("`positive_answer` and `negative_answer` of metric `{metric_type}` are both `{}`", positive_answer.unwrap_or_default()))
                    .with_hint("the two answers must differ"));
            }
        }
        _ => {}
    }
    let labels = match map.get("labels") {
        None => None,
        Some(n) => {
            let json = n.tree.to_json();
            let list = crate::value::literal_list(&json)
                .filter(|l| !l.is_empty())
                .ok_or_else(|| {
                    n.err("`labels` must be a non-empty list of strings")
                        .with_hint("e.g. `labels: [cat, dog, pig]`")
                })?;
            Some(list)
        }
    };
    let group_by = match map.get("group_by") {
        None => Vec::new(),
        Some(n) => match n.tree {
            Tree::Seq(_) => {
                let json = n.tree.to_json();
                crate::value::literal_list(&json)
                    .ok_or_else(|| n.err("`group_by` must be a list of column names"))?
            }
            _ => vec![n.scalar_string("group_by")?],
        },
    };
    let python = if kind == MetricKind::Python {
        let f = |key: &str, example: &str| -> Result<FunctionRef, TaskError> {
            let n = map.get(key).filter(|n| !n.is_null()).ok_or_else(|| {
                map.err(format!("metric `python` needs `{key}`"))
                    .with_hint(format!("e.g. `{key}: {example}`, a function given to the Python package's `functions=`"))
            })?;
            function_ref(n, &format!("python.{key}"))
        };
        Some(PythonMetric {
            function: f("function", "fold_batch")?,
            merge: f("merge", "merge_states")?,
            finish: f("finish", "finish_state")?,
        })
    } else {
        None
    };
    let name = text("name")?.unwrap_or_else(|| metric_type.clone());
    let key = text("key")?;
    Ok(MetricSpec {
        python,
        name,
        metric_type,
        kind,
        field,
        inputs,
        sources,
        positive_answer,
        negative_answer,
        labels,
        group_by,
        key,
        location: map.location,
    })
}

fn field_hint(fields: &[ScorerField], scorer_type: &str) -> String {
    let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
    format!("fields of `{scorer_type}`: {}", names.join(", "))
}
