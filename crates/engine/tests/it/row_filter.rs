//! A task's `filter:` in memory: the library keeps the rows whose columns match it, so
//! batches that carry the partition values as columns (as Spark and Ray give a Hive tree)
//! score as a run over the tree, which prunes its files.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::Schema;
use evalscore_engine::{run, BindOptions, RunOptions, Scorer, Task};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

const TASK: &str = r#"filter: "model = 'm1' and date >= '2026-11-02'"
definition:
  scorers:
    - type: string_equals
      key: exact
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct, name: Accuracy}
        - {type: frequency, field: value, name: Answers}
"#;

/// The partitions the example rows are dealt into, in turn, and whether the filter keeps them.
const PARTS: [(&str, &str, bool); 4] = [
    ("m1", "2026-11-01", false),
    ("m1", "2026-11-02", true),
    ("m2", "2026-11-02", false),
    ("m1", "2026-11-03", true),
];

fn example_rows() -> RecordBatch {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/examples/qa.parquet");
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = builder.schema().clone();
    let parts: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    arrow::compute::concat_batches(&schema, &parts).unwrap()
}

#[test]
fn a_filter_keeps_in_memory_the_rows_a_run_over_the_tree_reads() {
    let rows = example_rows();
    let n = rows.num_rows();
    let part_of = |r: usize| PARTS[r % PARTS.len()];
    let dir = tempfile::tempdir().unwrap();
    // The tree: each partition's rows in its own `model=/date=` folder.
    for (p, (model, date, _)) in PARTS.iter().enumerate() {
        let take: Vec<u32> = (0..n as u32)
            .filter(|r| *r as usize % PARTS.len() == p)
            .collect();
        let part = arrow::compute::take_record_batch(&rows, &arrow::array::UInt32Array::from(take))
            .unwrap();
        let folder = dir.path().join(format!("tree/model={model}/date={date}"));
        std::fs::create_dir_all(&folder).unwrap();
        let mut w = ArrowWriter::try_new(
            File::create(folder.join("part-0.parquet")).unwrap(),
            part.schema(),
            None,
        )
        .unwrap();
        w.write(&part).unwrap();
        w.close().unwrap();
    }
    let task_path = dir.path().join("task.yaml");
    std::fs::write(&task_path, TASK).unwrap();
    let summary = run(&RunOptions {
        task: task_path,
        inputs: vec![dir.path().join("tree")],
        recursive: true,
        out_dir: dir.path().join("out"),
        threads: 2,
        ..RunOptions::default()
    })
    .unwrap();
    let kept = (0..n).filter(|r| part_of(*r).2).count();
    assert_eq!(summary.rows, kept as u64);

    // The same rows in memory, the partition values as columns (`model` as Spark gives a
    // string, `date` as a date), in their original order.
    let models: StringArray = (0..n).map(|r| Some(part_of(r).0)).collect();
    let texts: StringArray = (0..n).map(|r| Some(part_of(r).1)).collect();
    let dates = arrow::compute::cast(&texts, &arrow::datatypes::DataType::Date32).unwrap();
    let mut fields: Vec<_> = rows.schema().fields().iter().cloned().collect();
    fields.push(Arc::new(arrow::datatypes::Field::new(
        "model",
        models.data_type().clone(),
        true,
    )));
    fields.push(Arc::new(arrow::datatypes::Field::new(
        "date",
        dates.data_type().clone(),
        true,
    )));
    let mut columns = rows.columns().to_vec();
    columns.extend([Arc::new(models) as ArrayRef, dates]);
    let data = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();

    let task = Task::from_yaml(TASK, &[]).unwrap();
    let scorer = Scorer::new(task, &data.schema(), &BindOptions::default()).unwrap();
    // The filter's columns are read, so a caller projecting to them keeps them.
    assert_eq!(
        scorer.input_columns(),
        ["id", "answer", "output", "model", "date"]
    );
    let mut total = scorer.empty_states();
    let mut ids = Vec::new();
    for start in (0..n).step_by(7) {
        let (scores, states) = scorer.score(&data.slice(start, 7.min(n - start))).unwrap();
        total.merge(&states).unwrap();
        let id = scores.column_by_name("id").unwrap();
        ids.extend(
            (0..id.len()).map(|i| arrow::util::display::array_value_to_string(id, i).unwrap()),
        );
    }
    let report = scorer.finish(&total).unwrap();
    assert_eq!(report.rows, kept as u64);
    let figures = |m: &[evalscore_engine::MetricRow]| {
        m.iter()
            .map(|m| {
                format!(
                    "{}|{}|{:?}|{:?}|{}",
                    m.metric, m.stat, m.label, m.value, m.n
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(figures(&report.metrics), figures(&summary.metrics));
    // The kept rows, in input order: the ids of the matching partitions' rows.
    let id = rows.column_by_name("id").unwrap();
    let expected: Vec<String> = (0..n)
        .filter(|r| part_of(*r).2)
        .map(|r| arrow::util::display::array_value_to_string(id, r).unwrap())
        .collect();
    assert_eq!(ids, expected);
}

#[test]
fn row_errors_name_the_row_of_the_callers_batch() {
    let task = Task::from_yaml(
        r#"filter: "model = 'm1'"
definition:
  scorers:
    - type: string_equals_mcqa
      ground_truth_choice: "{{ sample.answer }}"
"#,
        &[],
    )
    .unwrap();
    let data = RecordBatch::try_from_iter([
        (
            "model",
            Arc::new(StringArray::from(vec!["m2", "m1", "m2", "m1"])) as ArrayRef,
        ),
        (
            "output",
            Arc::new(StringArray::from(vec!["A", "A", "A", "A"])),
        ),
        (
            "answer",
            Arc::new(StringArray::from(vec!["yes", "A", "no", "maybe"])),
        ),
    ])
    .unwrap();
    let scorer = Scorer::new(task, &data.schema(), &BindOptions::default()).unwrap();
    // Rows 1 and 3 are left out; of the kept ones, row 4 has a ground truth of many letters.
    let e = scorer.score(&data).unwrap_err();
    assert_eq!(
        e.to_string(),
        "row 4: scorer `string_equals_mcqa`: column `answer` (`string_equals_mcqa.ground_truth_choice`) value \"maybe\" is not a single character (string_equals_mcqa needs one choice letter such as \"B\")"
    );
    // A batch without the filter's column is refused.
    let e = scorer.score(&data.project(&[1, 2]).unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the batch has no column `model`, which the task reads"
    );
}

#[test]
fn a_filter_over_a_column_the_schema_lacks_is_refused_when_bound() {
    let task = Task::from_yaml(
        "filter: \"modle = 'm1'\"\ndefinition:\n  scorers:\n    - {type: string_equals, ground_truth: \"{{ sample.answer }}\"}\n",
        &[],
    )
    .unwrap();
    let schema = Schema::new(vec![
        arrow::datatypes::Field::new("model", arrow::datatypes::DataType::Utf8, true),
        arrow::datatypes::Field::new("output", arrow::datatypes::DataType::Utf8, true),
        arrow::datatypes::Field::new("answer", arrow::datatypes::DataType::Utf8, true),
    ]);
    let e = Scorer::new(task, &schema, &BindOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the task's `filter`, line 1, column 9: unknown column `modle` at column 1; columns: model, output, answer"
    );
    assert_eq!(e.hint.as_deref(), Some("did you mean `model`?"));
}
