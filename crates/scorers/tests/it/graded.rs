//! The options of the graded scorers and the newer checks: typed values, and located errors.
#![allow(clippy::unwrap_used)]

use evalscore_scorers::Task;

fn load(scorer: &str) -> Result<Task, String> {
    let text = format!(
        "models:\n  emb:\n    base_url: http://127.0.0.1:8080/v1\n    model: m\ndefinition:\n  scorers:\n{scorer}"
    );
    Task::from_yaml(&text, &[]).map_err(|e| e.to_string())
}

/// The typed options themselves are checked by the kinds' own tests (`similarity.rs`,
/// `numeric_match.rs`); here, that such a task loads with its fields and keys.
#[test]
fn options_load() {
    let t = load(concat!(
        "    - {type: rouge, variant: rouge2, expected: x, threshold: 0.25}\n",
        "    - {type: similarity, method: embedding, model_key: emb, expected: x, threshold: 1}\n",
        "    - {type: similarity, method: levenshtein, expected: x, threshold: 0}\n",
        "    - {type: numeric_match, expected: \"{{ sample.n }}\", rel_tolerance: 0.01}\n",
        "    - {type: bleu, expected: [a, b], threshold: 0.5}\n",
    ))
    .unwrap();
    let model_keys: Vec<Option<&str>> = t.scorers.iter().map(|s| s.scorer.model_key()).collect();
    assert_eq!(model_keys, [None, Some("emb"), None, None, None]);
    assert_eq!(
        crate::parse::field_names(&t, 4),
        ["score", "is_correct", "value", "expected"]
    );
    assert_eq!(t.scorers[4].key, "bleu");
}

#[test]
fn bad_options_are_errors_at_their_line_and_column() {
    let cases = [
        (
            "    - type: f1\n      expected: x\n",
            "line 7, column 7: scorer `f1` needs `threshold`",
        ),
        (
            "    - {type: chrf, expected: x, threshold: 1.5}\n",
            "line 7, column 44: `threshold` must be a number from 0 to 1, found `1.5`",
        ),
        (
            "    - {type: rouge, expected: x, threshold: 0.5}\n",
            "line 7, column 7: scorer `rouge` with ROUGE needs `variant`",
        ),
        (
            "    - {type: rouge, variant: rouge3, expected: x, threshold: 0.5}\n",
            "line 7, column 30: unknown ROUGE variant `rouge3`",
        ),
        (
            "    - type: similarity\n      method: embedding\n      model_key: embedder\n      expected: x\n      threshold: 0.5\n",
            "line 9, column 18: `model_key: embedder` names no entry of `models:`",
        ),
        (
            "    - {type: similarity, method: cosine, expected: x, threshold: 0.5}\n",
            "line 7, column 34: unknown similarity method `cosine`",
        ),
        (
            "    - {type: similarity, method: f1, model_key: emb, expected: x, threshold: 0.5}\n",
            "line 7, column 49: `model_key` is for `method: embedding`, and this similarity uses `method: f1`",
        ),
        (
            "    - {type: numeric_match, expected: x, abs_tolerance: -1}\n",
            "line 7, column 57: `abs_tolerance` must be a number >= 0, found `-1`",
        ),
        (
            "    - {type: numeric_match, expected: x, spaced_sign: maybe}\n",
            "line 7, column 55: `spaced_sign` must be true or false, found a string",
        ),
        (
            "    - {type: not_regex, pattern: \"(\"}\n",
            "line 7, column 34: invalid regular expression in `not_regex.pattern`: unclosed group",
        ),
        (
            "    - {type: includes_all}\n",
            "line 7, column 7: scorer `includes_all` needs `expected`",
        ),
    ];
    for (scorer, expected) in cases {
        let first = load(scorer).unwrap_err().lines().next().unwrap().to_owned();
        assert!(
            first.starts_with(expected),
            "{scorer}\n{first}\nwant: {expected}"
        );
    }
}
