//! `write_fields:`, a common scorer key: the chosen fields, in order, checked against the
//! scorer's fields with errors worded as those of metrics.
#![allow(clippy::unwrap_used)]

use evalscore_scorers::Task;

const JUDGE: &str = "models:\n  judge: {base_url: \"http://127.0.0.1:8080/v1\", model: m}\n";

fn load(scorers: &str) -> Result<Task, String> {
    let text = format!("{JUDGE}definition:\n  scorers:\n{scorers}");
    Task::from_yaml(&text, &[]).map_err(|e| match &e.hint {
        Some(h) => format!("{e}\nhint: {h}"),
        None => e.to_string(),
    })
}

#[test]
fn write_fields_are_kept_in_order() {
    let t = load(concat!(
        "    - {type: string_equals, ground_truth: \"{{ sample.answer }}\", write_fields: [ground_truth, value]}\n",
        "    - {type: string_equals, ground_truth: \"{{ sample.answer }}\"}\n",
        "    - {type: value, value: \"{{ sample.n }}\", write_scores: false, write_fields: [value]}\n",
        "    - {type: model_graded_fact, model_key: judge, question: q, expert: x, write_fields: [judge_status]}\n",
        "    - {type: exact, expected_output: x, write_fields: []}\n",
    ))
    .unwrap();
    let chosen: Vec<&[&str]> = t
        .scorers
        .iter()
        .map(|s| s.write_fields.as_slice())
        .collect();
    assert_eq!(
        chosen,
        [
            &["ground_truth", "value"][..],
            &[],
            &["value"],
            &["judge_status"],
            &[]
        ]
    );
    let write_scores: Vec<bool> = t.scorers.iter().map(|s| s.write_scores).collect();
    assert_eq!(write_scores, [true, true, false, true, true]);
}

#[test]
fn write_fields_errors_are_located_and_list_the_fields() {
    let cases = [
        (
            "    - {type: string_equals, ground_truth: x, write_fields: [value, predicted_label]}\n",
            "line 5, column 68: scorer `string_equals` has no field `predicted_label`\nhint: fields of `string_equals`: is_correct, value, ground_truth",
        ),
        (
            "    - {type: model_graded_fact, model_key: judge, question: q, expert: x, write_fields: [grade]}\n",
            "line 5, column 90: scorer `model_graded_fact` has no field `grade`\nhint: fields of `model_graded_fact`: choice, score, is_correct, judge_status",
        ),
        (
            "    - {type: string_equals, ground_truth: x, write_fields: value}\n",
            "line 5, column 60: `write_fields` must be a list, found a string",
        ),
        (
            "    - {type: string_equals, ground_truth: x, write_fields: [value, value]}\n",
            "line 5, column 68: `write_fields` lists `value` twice",
        ),
    ];
    for (scorer, want) in cases {
        let got = load(scorer).unwrap_err();
        assert_eq!(got, want, "{scorer}");
    }
}
