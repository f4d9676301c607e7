//! End to end: a task with the graded scorers and the newer checks over a small JSONL file,
//! every per-row score exact. The graded scores are those of the reference libraries
//! (sacrebleu, rouge-score, rapidfuzz, SQuAD v1.1), as `scripts/golden/lexical.py`
//! computes them.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use evalscore_test_support::llama;

const TASK: &str = r#"
definition:
  output_column: output
  scorers:
    - type: f1
      expected: "{{ sample.answer }}"
      threshold: 0.7
      metrics: [{type: mean, field: score}]
    - type: rouge
      variant: rougeL
      expected: "{{ sample.answer }}"
      threshold: 0.8
    - type: bleu
      expected: "{{ sample.answer }}"
      threshold: 0.3
    - type: chrf
      expected: "{{ sample.answer }}"
      threshold: 0.5
    - type: levenshtein
      expected: "{{ sample.answer }}"
      threshold: 0.5
    - type: similarity
      key: similar
      method: rouge
      variant: rouge2
      expected: "{{ sample.answer }}"
      threshold: 0.6
    - type: includes_all
      expected: [cat, mat]
    - type: numeric_match
      value: "{{ sample.note }}"
      expected: "{{ sample.number }}"
      abs_tolerance: 0.01
    - type: not_regex
      value: "{{ sample.note }}"
      pattern: "(?i)sorry"
    - type: contains_json
      value: "{{ sample.note }}"
      schema: {type: object, required: [name]}
"#;

const DATA: &str = r#"{"id": 1, "output": "the cat sat on the mat", "answer": "the cat is on the mat", "note": "It costs $1,234.50 in total", "number": "1234.5"}
{"id": 2, "output": "kitten", "answer": "sitting", "note": "Sorry: {\"name\": \"Ann\"} and 7", "number": "7.001"}
{"id": 3, "output": null, "answer": "x", "note": "no digits here", "number": "3"}
{"id": 4, "output": "", "answer": "", "note": "{\"age\": 3}", "number": "3"}
{"id": 5, "output": "The capital of France is Paris.", "answer": "[\"Paris\", \"Paris is the capital of France.\"]", "note": null, "number": "1"}
"#;

#[test]
fn graded_scorers_and_new_checks_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.yaml");
    let data = dir.path().join("data.jsonl");
    std::fs::write(&task, TASK).unwrap();
    std::fs::write(&data, DATA).unwrap();
    let out = dir.path().join("out");
    let o = evalscore()
        .arg("run")
        .arg(&task)
        .arg("--input")
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let b = read_parquet(&out.join("scores.parquet"));
    assert_eq!(ints(&b, "id"), [1, 2, 3, 4, 5]);
    let f = |col: &str| -> Vec<f64> { floats(&b, col).into_iter().map(Option::unwrap).collect() };
    let close = |col: &str, want: [f64; 5]| {
        let got = f(col);
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-12, "{col}: {got:?}, want {want:?}");
        }
    };
    close("f1__score", [0.75, 0.0, 0.0, 0.0, 1.0]);
    assert_eq!(f("f1__is_correct"), [1.0, 0.0, 0.0, 0.0, 1.0]);
    close(
        "rouge__score",
        [0.8333333333333334, 0.0, 0.0, 0.0, 0.6666666666666666],
    );
    assert_eq!(f("rouge__is_correct"), [1.0, 0.0, 0.0, 0.0, 0.0]);
    close(
        "bleu__score",
        [0.3799178428257963, 0.0, 0.0, 0.0, 0.29071536848410967],
    );
    assert_eq!(f("bleu__is_correct"), [1.0, 0.0, 0.0, 0.0, 0.0]);
    close(
        "chrf__score",
        [
            0.6636067072084818,
            0.16307210477614065,
            0.0,
            0.0,
            0.7056823792149878,
        ],
    );
    assert_eq!(f("chrf__is_correct"), [1.0, 0.0, 0.0, 0.0, 1.0]);
    close(
        "levenshtein__score",
        [
            0.8636363636363636,
            0.5714285714285714,
            0.0,
            1.0,
            0.3870967741935484,
        ],
    );
    assert_eq!(f("levenshtein__is_correct"), [1.0, 1.0, 0.0, 1.0, 0.0]);
    close("similar__score", [0.6, 0.0, 0.0, 0.0, 0.6]);
    assert_eq!(f("similar__is_correct"), [1.0, 0.0, 0.0, 0.0, 1.0]);
    assert_eq!(f("includes_all__is_correct"), [1.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(f("numeric_match__is_correct"), [1.0, 1.0, 0.0, 1.0, 0.0]);
    assert_eq!(f("not_regex__is_correct"), [1.0, 0.0, 1.0, 1.0, 0.0]);
    assert_eq!(f("contains_json__is_correct"), [0.0, 1.0, 0.0, 0.0, 0.0]);
    assert_eq!(
        strings(&b, "contains_json__details"),
        [
            Some("no JSON object or array found".to_owned()),
            Some("valid JSON".to_owned()),
            Some("no JSON object or array found".to_owned()),
            Some("schema: /: missing required property `name`".to_owned()),
            None,
        ]
    );
    // Written columns: score and is_correct of the graded scorers, not the compared texts.
    let names = column_names(&b);
    assert!(!names.contains(&"f1__value".to_owned()));
    assert!(!names.contains(&"f1__expected".to_owned()));
    let mj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("metrics.json")).unwrap()).unwrap();
    assert_eq!(mj["scorers"][0]["key"], "f1");
    assert_eq!(mj["scorers"][0]["missing"], 1);
    assert_eq!(mj["scorers"][0]["metrics"][0]["value"], 0.35);
}

#[test]
fn a_graded_scorer_without_threshold_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: bleu\n      expected: \"{{ sample.answer }}\"\n",
    )
    .unwrap();
    let data = dir.path().join("data.jsonl");
    std::fs::write(&data, DATA).unwrap();
    let o = evalscore()
        .arg("run")
        .arg(&task)
        .arg("--input")
        .arg(&data)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("scorer `bleu` needs `threshold`") && err.contains("line 3"),
        "{err}"
    );
}

/// `similarity` by embedding against llama.cpp's server in embedding mode (SmolLM2-135M, mean
/// pooling), started here: each distinct text is embedded once, identical texts score 1.0,
/// and a rerun comes from the cache.
#[test]
fn similarity_by_embedding_scores_with_a_real_server() {
    let (_server, url) = llama::start_with(&["--embeddings", "--pooling", "mean"]);
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        format!("models:\n  emb:\n    base_url: {url}\n    model: smollm2\n    concurrency: 2\ndefinition:\n  scorers:\n    - type: similarity\n      method: embedding\n      model_key: emb\n      expected: \"{{{{ sample.answer }}}}\"\n      threshold: 0.8\n      metrics:\n        - {{type: mean, field: score}}\n"),
    )
    .unwrap();
    let data = dir.path().join("data.jsonl");
    std::fs::write(
        &data,
        "{\"id\": 1, \"output\": \"the cat sat on the mat\", \"answer\": \"the cat sat on the mat\"}\n\
         {\"id\": 2, \"output\": \"quarterly revenue grew\", \"answer\": \"the cat sat on the mat\"}\n\
         {\"id\": 3, \"output\": null, \"answer\": \"x\"}\n",
    )
    .unwrap();
    let run = |out: &str| {
        let o = evalscore()
            .arg("run")
            .arg(&task)
            .args(["--input"])
            .arg(&data)
            .arg("--out")
            .arg(dir.path().join(out))
            .arg("--cache")
            .arg(dir.path().join("c.sqlite"))
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let rj: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(out).join("run.json")).unwrap(),
        )
        .unwrap();
        (
            read_parquet(&dir.path().join(out).join("scores.parquet")),
            rj,
        )
    };
    let (scores, rj) = run("a");
    let s = floats(&scores, "similarity__score");
    assert_eq!(s[0], Some(1.0), "the same text");
    assert!(s[1].unwrap() < 0.999 && s[1].unwrap() >= 0.0, "{s:?}");
    assert_eq!(s[2], Some(0.0), "missing");
    assert_eq!(
        floats(&scores, "similarity__is_correct"),
        [
            Some(1.0),
            Some(f64::from(u8::from(s[1].unwrap() >= 0.8))),
            Some(0.0)
        ]
    );
    // Two distinct texts: "the cat sat on the mat" and "quarterly revenue grew".
    let m = &rj["judge"]["models"]["emb"];
    assert_eq!(m["requests_sent"], 2, "{m}");
    assert!(m["prompt_tokens"].as_u64().unwrap() > 0, "{m}");
    let (again, rj) = run("b");
    assert_eq!(rj["judge"]["models"]["emb"]["requests_sent"], 0);
    assert_eq!(rj["judge"]["models"]["emb"]["cache_hits"], 2);
    assert_eq!(again, scores);
}
