//! Model-graded scorers through `evalscore run` against a real OpenAI-compatible server:
//! llama.cpp's `llama-server` with SmolLM2-135M, started on 127.0.0.1 by this test (built and
//! cached by `scripts/setup/llama-server.sh`). A 135M model grades badly, so this checks the
//! protocol, that what it really writes is parsed (an answer or `invalid`, never dropped),
//! the accounting, and that a rerun is answered from the cache with the same scores.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use evalscore_test_support::llama;

#[test]
fn a_real_judge_scores_every_row_and_a_rerun_comes_from_the_cache() {
    let (_server, url) = llama::start();
    let task = format!(
        r#"
models:
  small:
    base_url: "{url}"
    model: smollm2
    seed: 42
    max_tokens: 48
    concurrency: 2
definition:
  scorers:
    - type: model_as_a_judge_classifier
      key: cls
      model_key: small
      system_prompt: "Does the response correctly answer the question? Reply yes or no."
      user_prompt: "Question: {{{{ sample.question }}}}\nResponse: {{{{ model_output.choices[0].message.content }}}}"
      correct_labels: ["yes"]
      incorrect_labels: ["no"]
      metrics:
        - {{type: frequency, field: judge_status}}
    - type: model_graded_closed_qa
      key: cqa
      model_key: small
      task: "{{{{ sample.question }}}}"
      criterion: "names the right city"
"#
    );
    let rows =
        "{\"id\": 1, \"question\": \"What is the capital of France?\", \"output\": \"Paris\"}\n\
         {\"id\": 2, \"question\": \"What is the capital of Spain?\", \"output\": \"Barcelona\"}\n\
         {\"id\": 3, \"question\": \"What is the capital of France?\", \"output\": \"Paris\"}\n";
    let dir = folder(&[("task.yaml", &task), ("rows.jsonl", rows)]);
    let run = |out: &str| run_cached(dir.path(), out);
    let first = run("a");
    let m = &first["judge"]["models"]["small"];
    // Two distinct rows per scorer, two scorers; row 3 repeats row 1.
    assert_eq!(m["requests_sent"], 4, "{first}");
    assert_eq!(m["deduplicated"], 2);
    assert_eq!(m["failures"], 0);
    assert!(m["prompt_tokens"].as_u64().unwrap() > 4 * 20, "{m}");
    assert!(
        (4..=4 * 48).contains(&m["completion_tokens"].as_u64().unwrap()),
        "{m}"
    );
    let scores = read_parquet(&dir.path().join("a/scores.parquet"));
    for col in ["cls__judge_status", "cqa__judge_status"] {
        for s in strings(&scores, col) {
            assert!(
                matches!(s.as_deref(), Some("ok" | "invalid")),
                "{col}: {s:?}"
            );
        }
    }
    // An answer parsed or counted invalid, never neither: the invalid count is the rows
    // whose status says so.
    let invalid = strings(&scores, "cls__judge_status")
        .iter()
        .filter(|s| s.as_deref() == Some("invalid"))
        .count();
    assert_eq!(first["judge"]["invalid"]["cls"], invalid as u64);
    let second = run("b");
    assert_eq!(second["judge"]["models"]["small"]["requests_sent"], 0);
    assert_eq!(second["judge"]["models"]["small"]["cache_hits"], 4);
    assert_eq!(read_parquet(&dir.path().join("b/scores.parquet")), scores);
}
