//! Kept columns decoded instead of copied (read by a template or `group_by`, JSONL): same values.

use super::*;

// ---------------------------------------------------------------------------------------------
// (c) The template reads `id`: decoded, same values

#[test]
fn id_read_by_a_template_is_decoded_with_the_same_values() {
    let (dir, input) = workdir();
    let ids = required_ids(3000);
    // The output is the id itself on every fourth row (not a multiple of 3: `exact` fails
    // there as the output is not the answer either).
    let batch = qa_batch(0, int64(&ids), false);
    let outputs: Vec<String> = (0..3000)
        .map(|i| {
            if i % 4 == 1 {
                ids[i].to_string()
            } else {
                output(i)
            }
        })
        .collect();
    let batch = RecordBatch::try_new(
        batch.schema(),
        vec![
            Arc::clone(batch.column(0)),
            Arc::new(StringArray::from(outputs)),
            Arc::clone(batch.column(2)),
        ],
    )
    .unwrap();
    write_parquet(&input, &[batch], props(1000, 250).build());

    let (scores_path, scores) = run_scores(dir.path(), ID_TASK, &[&input], &["--threads", "1"]);
    assert_eq!(
        column_names(&scores),
        ["id", "exact__is_correct", "by_id__is_correct"]
    );
    assert_eq!(ints(&scores, "id"), ids);
    assert_id_field(&scores, false);
    let by_id: Vec<Option<f64>> = (0..3000)
        .map(|i| Some(if i % 4 == 1 { 1.0 } else { 0.0 }))
        .collect();
    assert_eq!(floats(&scores, "by_id__is_correct"), by_id);
    let want: Vec<f64> = (0..3000)
        .map(|i| if i % 4 == 1 { 0.0 } else { exact(i) })
        .collect();
    assert_eq!(exact_scores(&scores), want);
    assert_eq!(exact_scores(&scores)[..6], [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]);

    // Decoded and encoded again: zstd, not the input's uncompressed chunk.
    assert_eq!(footer(&scores_path).num_row_groups(), 3);
    assert_all_decoded(&scores_path, "id");
}

/// `group_by: [id]` reads `id` too: decoded, same values.
#[test]
fn id_read_by_group_by_is_decoded_with_the_same_values() {
    let task = "definition:\n  scorers:\n    - type: string_equals\n      key: exact\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, group_by: [id]}\n";
    let (_dir, ids, scores_path, scores) = run_on_nullable_ids(task, 200, props(100, 50));
    assert_eq!(opt_ints(&scores, "id"), ids);
    assert_id_field(&scores, true);
    assert_exact(&scores, 200);
    assert_all_decoded(&scores_path, "id");
}

/// A task that reads no column (constant templates): `id` is the only column to read, so it
/// is decoded (the decoder gives the row count), with the same values.
#[test]
fn id_as_the_only_column_read_is_decoded() {
    let task = "definition:\n  scorers:\n    - type: string_equals\n      key: exact\n      value: \"yes\"\n      ground_truth: \"yes\"\n";
    let (_dir, ids, scores_path, scores) = run_on_nullable_ids(task, 2000, props(1000, 250));
    assert_eq!(column_names(&scores), ["id", "exact__is_correct"]);
    assert_eq!(opt_ints(&scores, "id"), ids);
    assert_eq!(exact_scores(&scores), vec![1.0; 2000]);
    assert_decoded_groups(&scores_path, 2, 1000, "id");
}

// ---------------------------------------------------------------------------------------------
// (e) JSONL: decoded, same values

#[test]
fn jsonl_ids_round_trip_as_nullable_int64() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let ids: Vec<Option<i64>> = vec![
        Some(7),
        Some(-3),
        None,
        Some(9_007_199_254_740_993),
        Some(0),
        Some(i64::MAX),
    ];
    let mut text = String::new();
    for (i, id) in ids.iter().enumerate() {
        let line = serde_json::json!({"id": id, "output": output(i), "answer": answer(i)});
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(&input, text).unwrap();

    let out = run(dir.path(), QA_TASK, &[&input], &["--threads", "1"]);
    let scores = read_parquet(&out.join("scores.parquet"));
    assert_eq!(column_names(&scores), ["id", "exact__is_correct"]);
    assert_eq!(opt_ints(&scores, "id"), ids);
    assert_id_field(&scores, true);
    assert_eq!(exact_scores(&scores), [0.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
}
