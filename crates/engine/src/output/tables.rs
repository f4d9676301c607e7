//! metrics.parquet, confusion.parquet and metrics.json: the figures of a run.

use crate::RunIdentity;
use arrow::array::{
    ArrayRef, Float64Array, Int32Array, Int32DictionaryArray, RecordBatch, StringArray,
    TimestampMicrosecondArray, UInt64Array,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use evalscore_scorers::Task;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// One row of metrics.parquet.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRow {
    /// The scorer's key.
    pub scorer: String,
    /// The scorer's type.
    pub scorer_type: String,
    /// The metric's name.
    pub metric: String,
    /// The metric's type.
    pub metric_type: String,
    /// The scorer field the metric reads.
    pub field: String,
    /// Which figure: `value`, `count`, `accuracy`, `ci_low`, ...
    pub stat: String,
    /// The distinct value or class the figure is about; `None` for overall figures.
    pub label: Option<String>,
    /// `None` when undefined.
    pub value: Option<f64>,
    /// How many values the metric saw.
    pub n: u64,
    /// The values of the plan's group-by columns; all null on overall rows.
    pub groups: Vec<Option<String>>,
}

/// One row of confusion.parquet: a non-zero cell of a confusion matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfusionRow {
    /// The scorer's key.
    pub scorer: String,
    /// The metric's name.
    pub metric: String,
    /// The ground truth class.
    pub actual: String,
    /// The predicted class.
    pub predicted: String,
    /// Rows with this (actual, predicted) pair.
    pub count: u64,
    /// The values of the plan's group-by columns; all null on overall rows.
    pub groups: Vec<Option<String>>,
}

/// The run identity columns that end metrics.parquet and confusion.parquet: `run_id`,
/// `run_started_at` (UTC, microseconds) and `labels` (a JSON object, null without labels).
fn run_fields() -> [Field; 3] {
    [
        Field::new("run_id", DataType::Utf8, false),
        Field::new(
            "run_started_at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("labels", DataType::Utf8, true),
    ]
}

/// The run identity columns for `rows` rows. `shared`: `run_id` and `labels` are dictionary
/// arrays whose one value every row points to, so a large `labels` object is held once, not
/// once per row (for the file writers, which are given the plain Utf8 schema; see
/// [`file_schema`]).
fn run_arrays(run: &RunIdentity, rows: usize, shared: bool) -> [ArrayRef; 3] {
    let started = Arc::new(
        TimestampMicrosecondArray::from(vec![run.started_at_micros(); rows]).with_timezone("UTC"),
    );
    if shared {
        let one = |value: Option<String>| -> ArrayRef {
            let keys = match value {
                Some(_) => Int32Array::from(vec![0; rows]),
                None => Int32Array::new_null(rows),
            };
            let values = StringArray::from(vec![value.unwrap_or_default()]);
            Arc::new(Int32DictionaryArray::new(keys, Arc::new(values)))
        };
        return [
            one(Some(run.run_id.clone())),
            started,
            one(run.labels_json()),
        ];
    }
    [
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            run.run_id.as_str(),
            rows,
        ))),
        started,
        Arc::new(StringArray::from(vec![run.labels_json(); rows])),
    ]
}

/// The schema of a batch built with shared run identity columns: `schema` with `run_id` and
/// `labels` as dictionaries of Utf8. Written through an `ArrowWriter` made with `schema`, such
/// a batch gives the same file, byte for byte, as the plain one (Parquet dictionary-encodes
/// both columns either way, and the file's embedded Arrow schema is `schema`'s).
pub(crate) fn file_schema(schema: &Schema) -> SchemaRef {
    let dictionary = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.name().as_str() {
            "run_id" | "labels" => f.as_ref().clone().with_data_type(dictionary.clone()),
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// The schema of metrics.parquet: nine fixed columns, one nullable Utf8 column per group-by
/// column, then the run identity columns. Later issues add rows, never change these columns.
pub fn metrics_schema(groups: &[String]) -> SchemaRef {
    table_schema(
        vec![
            Field::new("scorer", DataType::Utf8, false),
            Field::new("scorer_type", DataType::Utf8, false),
            Field::new("metric", DataType::Utf8, false),
            Field::new("metric_type", DataType::Utf8, false),
            Field::new("field", DataType::Utf8, false),
            Field::new("stat", DataType::Utf8, false),
            Field::new("label", DataType::Utf8, true),
            Field::new("value", DataType::Float64, true),
            Field::new("n", DataType::UInt64, false),
        ],
        groups,
    )
}

/// The schema of confusion.parquet, with the same group-by and run identity columns.
pub fn confusion_schema(groups: &[String]) -> SchemaRef {
    table_schema(
        vec![
            Field::new("scorer", DataType::Utf8, false),
            Field::new("metric", DataType::Utf8, false),
            Field::new("actual", DataType::Utf8, false),
            Field::new("predicted", DataType::Utf8, false),
            Field::new("count", DataType::UInt64, false),
        ],
        groups,
    )
}

/// A table's `fixed` columns, then one nullable Utf8 column per group-by column (its name made
/// warehouse-safe), then the run identity columns.
fn table_schema(mut fields: Vec<Field>, groups: &[String]) -> SchemaRef {
    fields.extend(
        groups
            .iter()
            .map(|g| Field::new(evalscore_task::sanitize(g), DataType::Utf8, true)),
    );
    fields.extend(run_fields());
    Arc::new(Schema::new(fields))
}

fn group_arrays<T>(rows: &[T], n: usize, get: impl Fn(&T) -> &[Option<String>]) -> Vec<ArrayRef> {
    (0..n)
        .map(|i| {
            Arc::new(StringArray::from(
                rows.iter()
                    .map(|r| get(r).get(i).and_then(|v| v.as_deref()))
                    .collect::<Vec<_>>(),
            )) as ArrayRef
        })
        .collect()
}

/// metrics.parquet's rows; `shared`: with the run identity columns of [`run_arrays`]'s
/// `shared` form, under [`file_schema`].
pub(crate) fn metrics_batch(
    rows: &[MetricRow],
    groups: &[String],
    run: &RunIdentity,
    shared: bool,
) -> Result<RecordBatch, arrow::error::ArrowError> {
    let s = |f: fn(&MetricRow) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    let mut cols = vec![
        s(|r| &r.scorer),
        s(|r| &r.scorer_type),
        s(|r| &r.metric),
        s(|r| &r.metric_type),
        s(|r| &r.field),
        s(|r| &r.stat),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.label.as_deref()).collect::<Vec<_>>(),
        )) as ArrayRef,
        Arc::new(Float64Array::from(
            rows.iter().map(|r| r.value).collect::<Vec<_>>(),
        )),
        Arc::new(UInt64Array::from(
            rows.iter().map(|r| r.n).collect::<Vec<_>>(),
        )),
    ];
    cols.extend(group_arrays(rows, groups.len(), |r| &r.groups));
    cols.extend(run_arrays(run, rows.len(), shared));
    let schema = metrics_schema(groups);
    RecordBatch::try_new(if shared { file_schema(&schema) } else { schema }, cols)
}

/// confusion.parquet's rows; `shared` as for [`metrics_batch`].
pub(crate) fn confusion_batch(
    rows: &[ConfusionRow],
    groups: &[String],
    run: &RunIdentity,
    shared: bool,
) -> Result<RecordBatch, arrow::error::ArrowError> {
    let s = |f: fn(&ConfusionRow) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    let mut cols = vec![
        s(|r| &r.scorer),
        s(|r| &r.metric),
        s(|r| &r.actual),
        s(|r| &r.predicted),
        Arc::new(UInt64Array::from(
            rows.iter().map(|r| r.count).collect::<Vec<_>>(),
        )) as ArrayRef,
    ];
    cols.extend(group_arrays(rows, groups.len(), |r| &r.groups));
    cols.extend(run_arrays(run, rows.len(), shared));
    let schema = confusion_schema(groups);
    RecordBatch::try_new(if shared { file_schema(&schema) } else { schema }, cols)
}

/// metrics.json's content.
#[allow(clippy::too_many_arguments)]
pub(crate) fn metrics_json(
    task: &Task,
    rows: &[MetricRow],
    confusion: &[ConfusionRow],
    groups: &[String],
    missing: &[(String, u64)],
    row_errors: Option<&[(String, u64)]>,
    total: u64,
    run: &RunIdentity,
) -> Value {
    let scorers: Vec<Value> = task
        .scorers
        .iter()
        .map(|s| {
            let metrics: Vec<Value> = s
                .metrics
                .iter()
                .map(|m| {
                    let figs: Vec<&MetricRow> = rows
                        .iter()
                        .filter(|r| r.scorer == s.key && r.metric == m.name && r.metric_type == m.metric_type && r.field == m.field)
                        .collect();
                    let mut o = Map::new();
                    o.insert("name".into(), json!(m.name));
                    o.insert("type".into(), json!(m.metric_type));
                    o.insert("field".into(), json!(m.field));
                    o.insert("n".into(), json!(figs.first().map_or(0, |f| f.n)));
                    let overall = |f: &&&MetricRow| f.groups.iter().all(Option::is_none);
                    if let Some(v) = figs.iter().filter(overall).find(|f| f.stat == "value" && f.label.is_none()) {
                        o.insert("value".into(), json!(v.value));
                    }
                    if !m.group_by.is_empty() {
                        o.insert("group_by".into(), json!(m.group_by));
                    }
                    let group = |g: &[Option<String>]| -> Option<Value> {
                        let pairs: Map<String, Value> = groups
                            .iter()
                            .zip(g)
                            .filter_map(|(c, v)| v.as_ref().map(|v| (c.clone(), json!(v))))
                            .collect();
                        (!pairs.is_empty()).then_some(Value::Object(pairs))
                    };
                    o.insert(
                        "figures".into(),
                        Value::Array(
                            figs.iter()
                                .map(|f| {
                                    let mut v = json!({"stat": f.stat, "label": f.label, "value": f.value, "n": f.n});
                                    if let Some(g) = group(&f.groups) {
                                        v["group"] = g;
                                    }
                                    v
                                })
                                .collect(),
                        ),
                    );
                    let cells: Vec<Value> = confusion
                        .iter()
                        .filter(|c| c.scorer == s.key && c.metric == m.name)
                        .map(|c| {
                            let mut v = json!({"actual": c.actual, "predicted": c.predicted, "count": c.count});
                            if let Some(g) = group(&c.groups) {
                                v["group"] = g;
                            }
                            v
                        })
                        .collect();
                    if evalscore_metrics::registry::find(&m.metric_type)
                        .is_some_and(|t| t.about().confusion)
                    {
                        o.insert("confusion".into(), Value::Array(cells));
                    }
                    Value::Object(o)
                })
                .collect();
            let mut metrics = metrics;
            let mut o = json!({
                "key": s.key,
                "type": s.scorer_type,
                "display_name": s.display_name,
                "purpose": s.purpose.as_str(),
                "rows": total,
                "missing": missing.iter().find(|(k, _)| *k == s.key).map_or(0, |(_, m)| *m),
            });
            // A judge scorer's unreadable replies: a count beside `missing`, and the
            // `invalid` row metrics.parquet also has.
            if let Some(inv) = rows
                .iter()
                .find(|r| r.scorer == s.key && r.metric_type == "invalid")
            {
                let n = inv.value.unwrap_or(0.0);
                o["invalid"] = json!(n as u64);
                metrics.push(json!({
                    "name": "invalid",
                    "type": "invalid",
                    "field": "rows",
                    "n": total,
                    "value": n,
                    "figures": [{"stat": "count", "label": null, "value": n, "n": total}],
                }));
            }
            // Under `--max-row-errors`, the failed rows: a count beside `missing`, and
            // the `row_errors` row metrics.parquet also has.
            if let Some(errors) = row_errors {
                let n = errors.iter().find(|(k, _)| *k == s.key).map_or(0, |(_, m)| *m);
                o["row_errors"] = json!(n);
                metrics.push(json!({
                    "name": "row_errors",
                    "type": "row_errors",
                    "field": "rows",
                    "n": total,
                    "value": n as f64,
                    "figures": [{"stat": "count", "label": null, "value": n as f64, "n": total}],
                }));
            }
            o["metrics"] = Value::Array(metrics);
            o
        })
        .collect();
    json!({
        "run_id": run.run_id,
        "run_started_at": run.started_at_rfc3339(),
        "labels": run.labels_value(),
        "rows": total,
        "scorers": scorers,
    })
}
