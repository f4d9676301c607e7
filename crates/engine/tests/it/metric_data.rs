//! Metrics over the data: `field`, `field_gt` and `field_pred` naming an input column or a
//! template instead of a scorer field, through the library API; and the default names of
//! metrics that share a type on one scorer.
#![allow(clippy::unwrap_used)]

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_engine::{BindOptions, MetricRow, Scorer, Task};
use std::sync::Arc;

/// Eight answers with a rule's verdict (`includes`), a judge's label, the human label as Y/N
/// text and as 0/1 numbers, a latency (one null) and a model to group by.
fn rows() -> RecordBatch {
    let text = |v: Vec<Option<&str>>| Arc::new(StringArray::from(v)) as ArrayRef;
    let schema = Schema::new(vec![
        Field::new("output", DataType::Utf8, true),
        Field::new("answer", DataType::Utf8, true),
        Field::new("judge", DataType::Utf8, true),
        Field::new("human", DataType::Utf8, true),
        Field::new("human01", DataType::Float64, true),
        Field::new("latency", DataType::Int64, true),
        Field::new("model", DataType::Utf8, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            text(vec![
                Some("Paris is the capital"),
                Some("It is Lyon"),
                Some("Berlin"),
                Some("Maybe Bonn"),
                Some("Rome"),
                Some("Madrid"),
                Some("no idea"),
                Some("Oslo"),
            ]),
            text(vec![
                Some("Paris"),
                Some("Paris"),
                Some("Berlin"),
                Some("Berlin"),
                Some("Rome"),
                Some("Madrid"),
                Some("Oslo"),
                Some("Oslo"),
            ]),
            text(["Y", "Y", "Y", "N", "N", "Y", "Y", "N"].map(Some).to_vec()),
            text(vec![
                Some("Y"),
                Some("N"),
                Some("Y"),
                Some("Y"),
                Some("N"),
                Some("Y"),
                Some("N"),
                None,
            ]),
            Arc::new(Float64Array::from(vec![
                Some(1.0),
                Some(0.0),
                Some(1.0),
                Some(1.0),
                Some(0.0),
                Some(1.0),
                Some(0.0),
                None,
            ])),
            Arc::new(Int64Array::from(vec![
                Some(120),
                Some(80),
                Some(200),
                Some(40),
                Some(60),
                None,
                Some(100),
                Some(90),
            ])),
            text(["a", "a", "b", "b", "a", "b", "a", "b"].map(Some).to_vec()),
        ],
    )
    .unwrap()
}

const TASK: &str = r#"definition:
  scorers:
    - type: includes
      expected: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct}
        - {type: mean, field: "{{ sample.latency }}", group_by: model}
        - {type: binary-classification, field_gt: is_correct, field_pred: "{{ sample.human01 }}", positive_answer: "1.0", negative_answer: "0.0"}
    - type: string_equals
      key: judge
      value: "{{ sample.judge }}"
      ground_truth: "Y"
      metrics:
        - {type: binary-classification, field_gt: "{{ sample.human }}", field_pred: value, positive_answer: "Y", negative_answer: "N"}
        - {type: multiclass-classification, field_gt: human, field_pred: value}
        - {type: frequency, field: model}
        - {type: frequency, field: "{{ sample.human | lower }}"}
"#;

/// `scorer|metric|field|stat|label|groups|value|n` per row, values to 12 digits.
fn lines(rows: &[MetricRow]) -> Vec<String> {
    rows.iter()
        .map(|m| {
            format!(
                "{}|{}|{}|{}|{}|{}|{}|{}",
                m.scorer,
                m.metric,
                m.field,
                m.stat,
                m.label.as_deref().unwrap_or("∅"),
                m.groups
                    .iter()
                    .map(|g| g.as_deref().unwrap_or("∅"))
                    .collect::<Vec<_>>()
                    .join(","),
                m.value.map_or("null".to_owned(), |v| format!("{v:.12}")),
                m.n
            )
        })
        .collect()
}

fn score(task: &str, batch: &RecordBatch, batch_size: usize) -> Vec<MetricRow> {
    let task = Task::from_yaml(task, &[]).unwrap();
    let scorer = Scorer::new(task, &batch.schema(), &BindOptions::default()).unwrap();
    let mut total = scorer.empty_states();
    let mut start = 0;
    while start < batch.num_rows() {
        let len = batch_size.min(batch.num_rows() - start);
        let (_, states) = scorer.score(&batch.slice(start, len)).unwrap();
        total.merge(&states).unwrap();
        start += len;
    }
    scorer.finish(&total).unwrap().metrics
}

fn find<'a>(lines: &'a [String], prefix: &str) -> Vec<&'a str> {
    lines
        .iter()
        .filter(|l| l.starts_with(prefix))
        .map(String::as_str)
        .collect()
}

#[test]
fn metrics_read_columns_and_templates() {
    let batch = rows();
    let all = lines(&score(TASK, &batch, 8));
    // The same figures however the rows are cut into batches.
    assert_eq!(lines(&score(TASK, &batch, 3)), all);

    // Two unnamed `mean`s on one scorer are named by their fields; the other metrics keep
    // their type as their name.
    assert_eq!(
        find(&all, "includes|mean"),
        vec![
            "includes|mean(is_correct)|is_correct|value|∅|∅|0.625000000000|8",
            "includes|mean(is_correct)|is_correct|stderr|∅|∅|0.182981263678|8",
            "includes|mean(is_correct)|is_correct|ci_low|∅|∅|0.305742394603|8",
            "includes|mean(is_correct)|is_correct|ci_high|∅|∅|0.863155714176|8",
            // A numeric column read with its type (Int64), averaged overall and per model;
            // the null latency is skipped.
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|value|∅|∅|98.571428571429|7",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|stderr|∅|∅|19.570211988604|7",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|ci_low|∅|∅|50.684844927093|7",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|ci_high|∅|∅|146.458012215764|7",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|value|∅|a|90.000000000000|4",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|stderr|∅|a|12.909944487358|4",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|ci_low|∅|a|48.914794864790|4",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|ci_high|∅|a|131.085205135210|4",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|value|∅|b|110.000000000000|3",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|stderr|∅|b|47.258156262526|3",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|ci_low|∅|b|-93.335435045885|3",
            "includes|mean({{ sample.latency }})|{{ sample.latency }}|ci_high|∅|b|313.335435045885|3",
        ]
    );

    // The rule's verdict against the human 0/1 column: rows 1, 3, 6 agree on 1 (tp), rows 2,
    // 7 on 0 (tn); row 4 the human says 1 where the rule says 0 (fp, the human column being
    // the prediction here), row 5 the reverse (fn); row 8 has no human label (excluded).
    let rule: Vec<&str> = find(&all, "includes|binary-classification|")
        .into_iter()
        .filter(|l| {
            [
                "accuracy",
                "precision",
                "recall",
                "tp",
                "fp",
                "tn",
                "fn",
                "support",
                "excluded",
            ]
            .iter()
            .any(|s| l.contains(&format!("|{s}|")))
        })
        .collect();
    assert_eq!(
        rule,
        vec![
            "includes|binary-classification|is_correct,{{ sample.human01 }}|accuracy|∅|∅|0.714285714286|7",
            "includes|binary-classification|is_correct,{{ sample.human01 }}|precision|∅|∅|0.750000000000|7",
            "includes|binary-classification|is_correct,{{ sample.human01 }}|recall|∅|∅|0.750000000000|7",
            "includes|binary-classification|is_correct,{{ sample.human01 }}|tp|∅|∅|3.000000000000|7",
            "includes|binary-classification|is_correct,{{ sample.human01 }}|fp|∅|∅|1.000000000000|7",
            "includes|binary-classification|is_correct,{{ sample.human01 }}|tn|∅|∅|2.000000000000|7",
            "includes|binary-classification|is_correct,{{ sample.human01 }}|fn|∅|∅|1.000000000000|7",
            "includes|binary-classification|is_correct,{{ sample.human01 }}|support|∅|∅|7.000000000000|7",
            "includes|binary-classification|is_correct,{{ sample.human01 }}|excluded|∅|∅|1.000000000000|7",
        ]
    );

    // A judge-shaped classifier (its label is the scorer's `value`) against the human Y/N
    // column: tp rows 1, 3, 6; fp rows 2, 7; tn row 5; fn row 4; row 8 excluded.
    let judge: Vec<&str> = find(&all, "judge|")
        .into_iter()
        .filter(|l| {
            [
                "|accuracy|",
                "|precision|",
                "|recall|",
                "|support|",
                "|excluded|",
            ]
            .iter()
            .any(|s| l.contains(s))
        })
        .collect();
    assert_eq!(
        judge,
        vec![
            "judge|binary-classification|{{ sample.human }},value|accuracy|∅|∅|0.571428571429|7",
            "judge|binary-classification|{{ sample.human }},value|precision|∅|∅|0.600000000000|7",
            "judge|binary-classification|{{ sample.human }},value|recall|∅|∅|0.750000000000|7",
            "judge|binary-classification|{{ sample.human }},value|support|∅|∅|7.000000000000|7",
            "judge|binary-classification|{{ sample.human }},value|excluded|∅|∅|1.000000000000|7",
            // A bare column name reads the same column.
            "judge|multiclass-classification|human,value|accuracy|∅|∅|0.571428571429|7",
            "judge|multiclass-classification|human,value|support|∅|∅|7.000000000000|7",
            "judge|multiclass-classification|human,value|excluded|∅|∅|1.000000000000|7",
            "judge|multiclass-classification|human,value|precision|N|∅|0.500000000000|7",
            "judge|multiclass-classification|human,value|recall|N|∅|0.333333333333|7",
            "judge|multiclass-classification|human,value|support|N|∅|3.000000000000|7",
            "judge|multiclass-classification|human,value|precision|Y|∅|0.600000000000|7",
            "judge|multiclass-classification|human,value|recall|Y|∅|0.750000000000|7",
            "judge|multiclass-classification|human,value|support|Y|∅|4.000000000000|7",
        ]
    );
    // Two frequencies: a column counted by value, and a general template, read as text.
    assert_eq!(
        find(&all, "judge|frequency(")
            .into_iter()
            .filter(|l| l.contains("|count|"))
            .collect::<Vec<_>>(),
        vec![
            "judge|frequency(model)|model|count|a|∅|4.000000000000|8",
            "judge|frequency(model)|model|count|b|∅|4.000000000000|8",
            "judge|frequency({{ sample.human | lower }})|{{ sample.human | lower }}|count|n|∅|3.000000000000|8",
            "judge|frequency({{ sample.human | lower }})|{{ sample.human | lower }}|count|y|∅|4.000000000000|8",
            "judge|frequency({{ sample.human | lower }})|{{ sample.human | lower }}|count|∅|∅|1.000000000000|8",
        ]
    );
}

/// The error of binding `metric` (a metric of an `includes` scorer) to [`rows`].
fn bind_err(metric: &str) -> (String, Option<String>) {
    let task = Task::from_yaml(
        &format!("definition:\n  scorers:\n    - type: includes\n      expected: \"{{{{ sample.answer }}}}\"\n      metrics:\n        - {metric}\n"),
        &[],
    )
    .unwrap();
    let err = Scorer::new(task, &rows().schema(), &BindOptions::default()).unwrap_err();
    (err.message, err.hint)
}

#[test]
fn unknown_names_and_wrong_types_are_bind_errors() {
    assert_eq!(
        bind_err("{type: mean, field: latncy}"),
        (
            "task, line 6, column 31: scorer `includes` has no field `latncy`, and the input has no column `latncy`".to_owned(),
            Some("did you mean `latency`? fields of `includes`: is_correct, value, expected; input columns: output, answer, judge, human, human01, latency, model".to_owned())
        )
    );
    assert_eq!(
        bind_err("{type: binary-classification, field_gt: \"{{ sample.humann }}\", field_pred: value, positive_answer: Y, negative_answer: N}"),
        (
            "task, line 6, column 51: template of `binary-classification.field_gt` names column `humann`, which the input does not have".to_owned(),
            Some("did you mean `human`? available columns: output, answer, judge, human, human01, latency, model".to_owned())
        )
    );
    assert_eq!(
        bind_err("{type: mean, field: human}"),
        (
            "task, line 6, column 31: metric `mean` needs a numeric field, and column `human` has type Utf8".to_owned(),
            Some("numeric columns: human01, latency; use `frequency` to count text values".to_owned())
        )
    );
}

/// A name that is both a scorer field and an input column is the scorer field.
#[test]
fn a_scorer_field_comes_before_a_column_of_its_name() {
    let batch = rows();
    let schema = Schema::new(
        batch
            .schema()
            .fields()
            .iter()
            .map(|f| match f.name().as_str() {
                "human01" => Field::new("is_correct", DataType::Float64, true),
                _ => f.as_ref().clone(),
            })
            .collect::<Vec<_>>(),
    );
    let batch = RecordBatch::try_new(Arc::new(schema), batch.columns().to_vec()).unwrap();
    let task = "definition:\n  scorers:\n    - type: includes\n      expected: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct}\n        - {type: mean, field: \"{{ sample.is_correct }}\", name: human}\n";
    let all = lines(&score(task, &batch, 8));
    assert_eq!(
        find(&all, "includes|")
            .into_iter()
            .filter(|l| l.contains("|value|"))
            .collect::<Vec<_>>(),
        vec![
            "includes|mean|is_correct|value|∅||0.625000000000|8",
            "includes|human|{{ sample.is_correct }}|value|∅||0.571428571429|7",
        ]
    );
}

/// A metric template that fails on a row stops the scoring of the batch, naming the scorer,
/// the metric, the template and the row.
#[test]
fn a_failing_metric_template_names_its_metric_and_row() {
    let task = Task::from_yaml(
        "definition:\n  scorers:\n    - type: includes\n      expected: \"{{ sample.answer }}\"\n      metrics:\n        - {type: frequency, field: \"{{ sample.human.label }}\"}\n",
        &[],
    )
    .unwrap();
    let batch = rows();
    let scorer = Scorer::new(task, &batch.schema(), &BindOptions::default()).unwrap();
    let err = scorer.score(&batch).unwrap_err();
    assert_eq!(
        (err.message.as_str(), err.hint.as_deref()),
        (
            "row 1: scorer `includes`: metric `frequency`: template of `frequency.field` failed: reaches an attribute, key or variable that does not exist (undefined value)",
            Some("a metric's template is read on every row, and a row it fails on stops the run (`--max-row-errors` allows scorers' row errors only)")
        )
    );
}

/// Labels compare by value: the human verdict as an Int64 0/1 column, read through a
/// template, against the rule's `is_correct` (a 0/1 score) counts 1 = 1.0; the same figures
/// as against the Float64 column; and a field compared with itself has accuracy 1.
#[test]
fn an_integer_label_column_meets_a_score_by_value() {
    let batch = rows();
    let human01 = batch
        .column_by_name("human01")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    let ints: Int64Array = human01.iter().map(|v| v.map(|v| v as i64)).collect();
    let schema = batch.schema();
    let columns = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| (f.name().clone(), Arc::clone(c)));
    let batch = RecordBatch::try_from_iter(
        columns.chain([("human_int".to_owned(), Arc::new(ints) as ArrayRef)]),
    )
    .unwrap();
    let task = r#"
definition:
  scorers:
    - type: includes
      expected: "{{ sample.answer }}"
      metrics:
        - {type: binary-classification, name: int, field_gt: is_correct, field_pred: "{{ sample.human_int }}", positive_answer: "1", negative_answer: "0"}
        - {type: binary-classification, name: float, field_gt: is_correct, field_pred: "{{ sample.human01 }}", positive_answer: "1.0", negative_answer: "0.0"}
        - {type: multiclass-classification, name: itself, field_gt: is_correct, field_pred: is_correct}
"#;
    let all = lines(&score(task, &batch, 3));
    let pick = |name: &str, stats: &[&str]| -> Vec<String> {
        find(&all, &format!("includes|{name}|"))
            .into_iter()
            .filter(|l| stats.iter().any(|s| l.contains(&format!("|{s}|"))))
            .map(|l| l.split('|').skip(3).collect::<Vec<_>>().join("|"))
            .collect()
    };
    let want = vec![
        "accuracy|∅||0.714285714286|7",
        "tp|∅||3.000000000000|7",
        "fp|∅||1.000000000000|7",
        "tn|∅||2.000000000000|7",
        "fn|∅||1.000000000000|7",
        "excluded|∅||1.000000000000|7",
    ];
    let stats = ["accuracy", "tp", "fp", "tn", "fn", "excluded"];
    assert_eq!(pick("int", &stats), want);
    assert_eq!(pick("float", &stats), want);
    assert_eq!(
        pick("itself", &["accuracy", "support", "excluded"]),
        vec![
            "accuracy|∅||1.000000000000|8",
            "support|∅||8.000000000000|8",
            "excluded|∅||0.000000000000|8",
            "support|0||3.000000000000|8",
            "support|1||5.000000000000|8",
        ]
    );
}
