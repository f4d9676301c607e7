//! The library API against the file pipeline: the same task over the same rows gives the same
//! scores and the same metrics, however the rows are cut into batches and merged.
#![allow(clippy::unwrap_used)]

use arrow::array::RecordBatch;
use evalscore_engine::{run, BindOptions, MetricRow, RunOptions, Scorer, States, Task};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::fs::File;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/examples")
}

fn batches(path: &Path, size: usize) -> Vec<RecordBatch> {
    ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .with_batch_size(size)
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A whole Parquet file as one batch (with its schema when it has no rows).
fn table(path: &Path) -> RecordBatch {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = builder.schema().clone();
    let parts: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    arrow::compute::concat_batches(&schema, &parts).unwrap()
}

fn figures(rows: &[MetricRow]) -> Vec<String> {
    rows.iter()
        .map(|m| {
            format!(
                "{}|{}|{}|{:?}|{:?}|{:.12}|{}|{:?}",
                m.scorer,
                m.metric,
                m.stat,
                m.label,
                m.groups,
                m.value.unwrap_or(f64::NAN),
                m.n,
                m.field
            )
        })
        .collect()
}

/// Every example task over its data: the library's metrics (batches of 37 rows, scored on
/// two threads, states sent as bytes and merged in reverse) equal the CLI pipeline's.
#[test]
fn library_matches_the_file_pipeline_on_every_example() {
    for (task_file, data) in [
        ("qa.yaml", "qa.parquet"),
        ("mcqa.yaml", "mcqa.parquet"),
        ("classification.yaml", "qa.parquet"),
        ("checks.yaml", "qa.parquet"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let task_path = examples().join(task_file);
        let data_path = examples().join(data);
        let summary = run(&RunOptions {
            task: task_path.clone(),
            inputs: vec![data_path.clone()],
            out_dir: dir.path().join("out"),
            threads: 2,
            ..RunOptions::default()
        })
        .unwrap();

        let text = std::fs::read_to_string(&task_path).unwrap();
        let task = Task::from_yaml_in(&text, &[], task_path.parent()).unwrap();
        let parts = batches(&data_path, 37);
        let mut scorer = Scorer::new(task, &parts[0].schema(), &BindOptions::default()).unwrap();
        let results: Vec<(RecordBatch, Vec<u8>)> = std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .iter()
                .map(|b| {
                    let scorer = &scorer;
                    s.spawn(move || {
                        let (scores, states) = scorer.score(b).unwrap();
                        (scores, states.to_bytes().unwrap())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut total = scorer.empty_states();
        for (_, bytes) in results.iter().rev() {
            total.merge(&States::from_bytes(bytes).unwrap()).unwrap();
        }
        assert_eq!(total.rows(), summary.rows, "{task_file}");
        // The run's identity, so the tables below carry the same run columns as the files.
        scorer.set_run(summary.run.clone());
        let report = scorer.finish(&total).unwrap();
        assert_eq!(
            figures(&report.metrics),
            figures(&summary.metrics),
            "{task_file}"
        );
        assert_eq!(report.confusion, summary.confusion, "{task_file}");
        // The tables are the files the CLI wrote, value for value.
        for (batch, file) in [
            (report.metrics_batch().unwrap(), "metrics.parquet"),
            (report.confusion_batch().unwrap(), "confusion.parquet"),
        ] {
            let written = table(&dir.path().join("out").join(file));
            assert_eq!(
                batch.schema().fields(),
                written.schema().fields(),
                "{task_file} {file}"
            );
            assert_eq!(batch.columns(), written.columns(), "{task_file} {file}");
        }

        // The score batches are scores.parquet's rows, in order.
        let scores: Vec<RecordBatch> = results.into_iter().map(|(s, _)| s).collect();
        let ours = arrow::compute::concat_batches(&scorer.output_schema(), &scores).unwrap();
        let file = batches(&dir.path().join("out/scores.parquet"), 1 << 20);
        let theirs = arrow::compute::concat_batches(&file[0].schema(), &file).unwrap();
        assert_eq!(ours.num_rows(), theirs.num_rows());
        for (i, f) in ours.schema().fields().iter().enumerate() {
            let a =
                arrow::compute::cast(ours.column(i), &arrow::datatypes::DataType::Utf8).unwrap();
            let b = arrow::compute::cast(
                theirs.column_by_name(f.name()).unwrap(),
                &arrow::datatypes::DataType::Utf8,
            )
            .unwrap();
            assert_eq!(&a, &b, "{task_file}: {}", f.name());
        }
    }
}

#[test]
fn binding_errors_are_the_clis() {
    let parts = batches(&examples().join("qa.parquet"), 100);
    let task = Task::from_yaml(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answr }}\"\n",
        &[],
    )
    .unwrap();
    let err = Scorer::new(task, &parts[0].schema(), &BindOptions::default()).unwrap_err();
    assert_eq!(
        err.message,
        "task, line 4, column 21: template of `string_equals.ground_truth` names column `answr`, which the input does not have"
    );
    assert_eq!(
        err.hint.as_deref(),
        Some("did you mean `answer`? available columns: id, question, subject, answer, output, label_gt, label_pred")
    );
}

#[test]
fn batches_of_another_schema_and_states_of_another_task_are_refused() {
    let parts = batches(&examples().join("qa.parquet"), 100);
    let qa = Task::from_yaml(
        &std::fs::read_to_string(examples().join("qa.yaml")).unwrap(),
        &[],
    )
    .unwrap();
    let scorer = Scorer::new(qa, &parts[0].schema(), &BindOptions::default()).unwrap();
    // Without `answer` (id, output only); and with `answer` as another type.
    let err = scorer
        .score(&parts[0].project(&[0, 4]).unwrap())
        .unwrap_err();
    assert_eq!(
        err.message,
        "the batch has no column `answer`, which the task reads"
    );
    let mut columns = parts[0].columns().to_vec();
    columns[3] = arrow::compute::cast(&columns[3], &arrow::datatypes::DataType::LargeUtf8).unwrap();
    let mut fields: Vec<arrow::datatypes::Field> = parts[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields[3] = fields[3]
        .clone()
        .with_data_type(arrow::datatypes::DataType::LargeUtf8);
    let large = RecordBatch::try_new(
        std::sync::Arc::new(arrow::datatypes::Schema::new(fields)),
        columns,
    )
    .unwrap();
    assert_eq!(
        scorer.score(&large).unwrap_err().message,
        "batch column `answer` has type LargeUtf8, but the scorer was bound to Utf8"
    );

    let other = Task::from_yaml(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n",
        &[],
    )
    .unwrap();
    let other = Scorer::new(other, &parts[0].schema(), &BindOptions::default()).unwrap();
    let (_, theirs) = other.score(&parts[0]).unwrap();
    let mut ours = scorer.empty_states();
    let hex = |f: [u8; 32]| {
        f[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let err = ours.merge(&theirs).unwrap_err();
    assert_eq!(
        err.message,
        format!(
            "cannot merge states of another task (task fingerprint {}, these are of {})",
            hex(theirs.fingerprint()),
            hex(ours.fingerprint())
        )
    );
    assert_ne!(theirs.fingerprint(), ours.fingerprint());
    assert_eq!(
        States::from_bytes(b"ESMS\x01\x00").unwrap_err().message,
        "not evalscore states (the bytes do not start with `ESST`)"
    );
    let mut bytes = theirs.to_bytes().unwrap();
    bytes[4] = 9;
    assert_eq!(
        States::from_bytes(&bytes).unwrap_err().message,
        "states of format version 9; this build reads version 6"
    );
    // Equal states give equal bytes.
    let (_, again) = other.score(&parts[0]).unwrap();
    assert_eq!(again.to_bytes().unwrap(), theirs.to_bytes().unwrap());
}

/// A task with every metric kind, grouped and not, for the byte tests.
const ALL_KINDS: &str = r#"definition:
  scorers:
    - type: string_equals
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct}
        - {type: mean, field: is_correct, group_by: [subject]}
        - {type: min, field: is_correct}
        - {type: max, field: is_correct, group_by: [subject]}
        - {type: std_dev, field: is_correct}
        - {type: frequency, field: value, group_by: [subject]}
        - {type: mean, field: is_correct, name: boot, interval: bootstrap, replicates: 20, group_by: [subject]}
    - type: string_equals
      key: labels
      value: "{{ sample.label_pred }}"
      ground_truth: "{{ sample.label_gt }}"
      metrics:
        - {type: binary-classification, field_gt: ground_truth, field_pred: value, positive_answer: "yes", negative_answer: "no", group_by: [subject]}
        - {type: multiclass-classification, field_gt: ground_truth, field_pred: value}
        - {type: precision, field_gt: ground_truth, field_pred: value, positive_answer: "yes"}
        - {type: recall, field_gt: ground_truth, field_pred: value, positive_answer: "yes"}
        - {type: f1_score, field_gt: ground_truth, field_pred: value, positive_answer: "yes"}
"#;

/// A metrics row with its value as bits, for exact comparison.
fn bits(rows: &[MetricRow]) -> Vec<String> {
    rows.iter()
        .map(|m| {
            format!(
                "{}|{}|{}|{:?}|{:?}|{:?}|{}",
                m.scorer,
                m.metric,
                m.stat,
                m.label,
                m.groups,
                m.value.map(f64::to_bits),
                m.n
            )
        })
        .collect()
}

/// Random splits of the example data: states merged after a trip through bytes give
/// bit-identical figures to the same states merged in memory, for every metric kind.
#[test]
fn states_through_bytes_merge_bit_identically() {
    let all = batches(&examples().join("qa.parquet"), 1 << 20);
    let data = arrow::compute::concat_batches(&all[0].schema(), &all).unwrap();
    let task = Task::from_yaml(ALL_KINDS, &[]).unwrap();
    let scorer = Scorer::new(task, &data.schema(), &BindOptions::default()).unwrap();
    // A small deterministic generator: 20 splits into 1 to 8 pieces.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for _ in 0..20 {
        let mut cuts: Vec<usize> = (0..next(8)).map(|_| next(301) as usize).collect();
        cuts.extend([0, data.num_rows()]);
        cuts.sort_unstable();
        let parts: Vec<States> = cuts
            .windows(2)
            .map(|w| scorer.score(&data.slice(w[0], w[1] - w[0])).unwrap().1)
            .collect();
        let mut in_memory = scorer.empty_states();
        let mut through_bytes = scorer.empty_states();
        for p in parts.iter().rev() {
            in_memory.merge(p).unwrap();
            through_bytes
                .merge(&States::from_bytes(&p.to_bytes().unwrap()).unwrap())
                .unwrap();
        }
        assert_eq!(in_memory, through_bytes);
        let (a, b) = (
            scorer.finish(&in_memory).unwrap(),
            scorer.finish(&through_bytes).unwrap(),
        );
        assert_eq!(bits(&a.metrics), bits(&b.metrics));
        assert_eq!(a.confusion, b.confusion);
        assert_eq!(a.rows, 300);
    }
}

/// The byte form is a committed contract: these states, serialized, are the golden file
/// (regenerate deliberately with `EVALSCORE_BLESS=1` only when the format version changes).
/// Bytes of versions 1 to 3 (metric states of the closed enum layouts before the metric
/// registry), 4 (`mean` and `win_rate` without a bootstrap) and 5 (metric states whose
/// classification labels had a form of their own) are refused, naming their version.
#[test]
fn states_bytes_match_the_golden_file() {
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let golden = golden_dir.join("states_v6.bin");
    let data = batches(&examples().join("qa.parquet"), 40).remove(0);
    let task = Task::from_yaml(ALL_KINDS, &[]).unwrap();
    let scorer = Scorer::new(task, &data.schema(), &BindOptions::default()).unwrap();
    let (_, states) = scorer.score(&data).unwrap();
    let bytes = states.to_bytes().unwrap();
    if std::env::var_os("EVALSCORE_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &bytes).unwrap();
    }
    let want = std::fs::read(&golden).unwrap();
    assert_eq!(bytes, want);
    assert_eq!(&want[..4], b"ESST");
    assert_eq!(want[4..6], [6, 0]);
    assert_eq!(want[6..38], states.fingerprint());
    assert_eq!(States::from_bytes(&want).unwrap(), states);
    for version in 1..=5 {
        let old = std::fs::read(golden_dir.join(format!("states_v{version}.bin"))).unwrap();
        assert_eq!(old[4..6], [version, 0]);
        assert_eq!(
            States::from_bytes(&old).unwrap_err().to_string(),
            format!("states of format version {version}; this build reads version 6")
        );
    }
}

/// A classification metric that excludes more than half of its rows warns, naming the
/// scorer, the metric, the null labels, the labels it saw and the ones it expected; the
/// states of batches merged in any order (through bytes) warn as one pass does, and a metric
/// that excludes few rows does not.
#[test]
fn states_warn_of_a_metric_that_excludes_most_rows() {
    const TASK: &str = "definition:\n  scorers:\n    - type: string_equals\n      key: labels\n      value: \"{{ sample.label_pred }}\"\n      ground_truth: \"{{ sample.label_gt }}\"\n      metrics:\n        - {type: binary-classification, name: short, field_gt: ground_truth, field_pred: value, positive_answer: \"y\", negative_answer: \"n\"}\n        - {type: binary-classification, name: long, field_gt: ground_truth, field_pred: value, positive_answer: \"yes\", negative_answer: \"no\"}\n";
    let path = examples().join("qa.parquet");
    let data = table(&path);
    // The expectation, from the input: rows with a null label, and the other labels.
    let text = |c: &str| -> Vec<Option<String>> {
        let a = arrow::compute::cast(
            data.column_by_name(c).unwrap(),
            &arrow::datatypes::DataType::Utf8,
        )
        .unwrap();
        let a = a
            .as_any()
            .downcast_ref::<arrow::array::StringArray>()
            .unwrap();
        a.iter().map(|v| v.map(str::to_owned)).collect()
    };
    let (gt, pred) = (text("label_gt"), text("label_pred"));
    let nulls = gt
        .iter()
        .zip(&pred)
        .filter(|(g, p)| g.is_none() || p.is_none())
        .count();
    let mut seen: Vec<&str> = gt
        .iter()
        .zip(&pred)
        .filter_map(|(g, p)| g.as_deref().zip(p.as_deref()))
        .flat_map(|(g, p)| [g, p])
        .filter(|l| *l != "y" && *l != "n")
        .collect();
    seen.sort_unstable();
    seen.dedup();
    let seen: Vec<String> = seen.iter().map(|l| format!("{l:?}")).collect();
    assert!(
        nulls > 0 && seen.len() >= 2 && seen.len() <= 20,
        "{nulls} {seen:?}"
    );
    let want = [format!(
        "scorer `labels`: metric `short` excluded 300 of 300 rows ({nulls} with a null label); other labels seen: {}; expected: \"y\" (positive), \"n\" (negative)",
        seen.join(", ")
    )];

    let task = Task::from_yaml(TASK, &[]).unwrap();
    let scorer = Scorer::new(task, &data.schema(), &BindOptions::default()).unwrap();
    let task = Task::from_yaml(TASK, &[]).unwrap();
    let (_, whole) = scorer.score(&data).unwrap();
    assert_eq!(whole.exclusion_warnings(&task), want);
    let parts: Vec<States> = batches(&path, 41)
        .iter()
        .map(|b| scorer.score(b).unwrap().1)
        .collect();
    let mut merged = scorer.empty_states();
    for p in parts.iter().rev() {
        merged
            .merge(&States::from_bytes(&p.to_bytes().unwrap()).unwrap())
            .unwrap();
    }
    assert_eq!(merged.exclusion_warnings(&task), want);

    // The file pipeline: the same warning through the callback and in run.json.
    let dir = tempfile::tempdir().unwrap();
    let task_file = dir.path().join("t.yaml");
    std::fs::write(&task_file, TASK).unwrap();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = heard.clone();
    let summary = run(&RunOptions {
        task: task_file,
        inputs: vec![path],
        out_dir: dir.path().join("out"),
        threads: 2,
        warn: Some(Box::new(move |w: &str| {
            h.lock().unwrap().push(w.to_owned())
        })),
        ..RunOptions::default()
    })
    .unwrap();
    assert_eq!(summary.warnings, want);
    assert_eq!(*heard.lock().unwrap(), want);
    let run_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/run.json")).unwrap()).unwrap();
    assert_eq!(run_json["warnings"], serde_json::json!(want));
}
