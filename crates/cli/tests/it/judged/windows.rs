//! Judge requests in windows: string rules scored alongside, row numbers kept past the first one.

use super::*;

#[test]
fn judges_and_string_rules_in_one_task_score_alike() {
    // A string rule first and last: the judge windows go out while they are scored.
    let task = TASK.replace(
        "  scorers:\n",
        "  scorers:\n    - type: string_equals\n      key: first\n      ground_truth: \"{{ sample.answer }}\"\n",
    ) + "    - type: string_equals\n      key: last\n      ground_truth: \"{{ sample.answer }}\"\n";
    let s = Setup::new(ROWS);
    std::fs::write(s.path("task.yaml"), task).unwrap();
    ok(&s.run("out", &[]));
    assert_eq!(s.sent(), DISTINCT);
    let mixed = read_parquet(&s.path("out/scores.parquet"));
    let names = column_names(&mixed);
    assert_eq!(names[1], "first__is_correct");
    assert_eq!(names[names.len() - 1], "last__is_correct");
    assert_eq!(
        floats(&mixed, "last__is_correct"),
        [Some(1.0), Some(0.0), Some(1.0), Some(0.0), Some(0.0)]
    );
    // The judge columns are those of the judge-only task.
    std::fs::write(s.path("task.yaml"), TASK).unwrap();
    ok(&s.run("alone", &[]));
    let alone = read_parquet(&s.path("alone/scores.parquet"));
    for name in column_names(&alone) {
        if name != "id" {
            assert_eq!(
                column_text(&mixed, &name),
                column_text(&alone, &name),
                "{name}"
            );
        }
    }
}

#[test]
fn batches_larger_than_a_window_keep_their_row_numbers() {
    // 5,000 rows in one batch: two windows; the failing row is in the second.
    let rows = jsonl(5_000, |i| {
        let output = if i == 4_500 { "[fail]" } else { "Paris" };
        format!("{{\"id\": {i}, \"question\": \"q{}\", \"answer\": \"a\", \"output\": \"{output}\", \"label\": \"yes\"}}", i % 7)
    });
    let s = Setup::new(&rows);
    std::fs::write(s.path("task.yaml"), only("    - type: model_graded_closed_qa\n      model_key: judge\n      task: \"{{ sample.question }}\"\n      criterion: c\n")).unwrap();
    let o = s.run("out", &["--max-row-errors", "1"]);
    ok(&o);
    let scores = read_parquet(&s.path("out/scores.parquet"));
    let status = strings(&scores, "model_graded_closed_qa__judge_status");
    assert_eq!(status.len(), 5_000);
    assert_eq!(status[4_500].as_deref(), Some("error"));
    assert_eq!(
        status.iter().filter(|s| s.as_deref() == Some("ok")).count(),
        4_999
    );
    let rj = run_json(&s.path("out"));
    assert_eq!(rj["row_errors"][0]["row"], 4_501);
    // Seven distinct questions with "Paris", one failing request tried twice.
    assert_eq!(s.sent(), 7 + 2);
}
