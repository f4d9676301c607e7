//! The task's `models:` map: defaults, every option, and located errors for bad values.
#![allow(clippy::unwrap_used)]

use evalscore_scorers::Task;
use evalscore_task::ModelSpec;

const SCORERS: &str = "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n";

fn load(models: &str) -> Result<Task, String> {
    Task::from_yaml(&format!("{models}{SCORERS}"), &[]).map_err(|e| e.to_string())
}

#[test]
fn models_have_the_documented_defaults_and_every_option() {
    let task = load(
        "config:\n  judge_url: http://127.0.0.1:8080/v1\nmodels:\n  small:\n    base_url: << config.judge_url >>\n    model: smollm2\n  big:\n    base_url: https://api.example.com/v1\n    model: gpt-x\n    api_key_env: EXAMPLE_API_KEY\n    temperature: 0.2\n    seed: 7\n    max_tokens: 256\n    concurrency: 64\n    requests_per_minute: 500\n    tokens_per_minute: 200000\n    timeout_s: 30\n    max_retries: 2\n",
    )
    .unwrap();
    assert!(task.warnings.is_empty(), "{:?}", task.warnings);
    assert_eq!(
        task.models["small"],
        ModelSpec {
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: "smollm2".into(),
            api_key_env: None,
            temperature: 0.0,
            seed: None,
            max_tokens: None,
            concurrency: 8,
            requests_per_minute: None,
            tokens_per_minute: None,
            timeout_s: 60.0,
            max_retries: 5,
        }
    );
    assert_eq!(
        task.models["big"],
        ModelSpec {
            base_url: "https://api.example.com/v1".into(),
            model: "gpt-x".into(),
            api_key_env: Some("EXAMPLE_API_KEY".into()),
            temperature: 0.2,
            seed: Some(7),
            max_tokens: Some(256),
            concurrency: 64,
            requests_per_minute: Some(500),
            tokens_per_minute: Some(200_000),
            timeout_s: 30.0,
            max_retries: 2,
        }
    );
    assert!(load("").unwrap().models.is_empty());
}

#[test]
fn bad_models_are_errors_at_their_line_and_column() {
    let cases = [
        (
            "models:\n  j:\n    model: m\n",
            "line 3, column 5: `models.j` has no `base_url`",
        ),
        (
            "models:\n  j:\n    base_url: ftp://x\n    model: m\n",
            "line 3, column 15: `models.j.base_url` must be an http:// or https:// URL, found `ftp://x`",
        ),
        (
            "models:\n  j:\n    base_url: http://x/v1\n    model: m\n    api_key_env: sk-123\n",
            "line 5, column 18: `models.j.api_key_env` must name an environment variable (letters, digits, _), found `sk-123`",
        ),
        (
            "models:\n  j:\n    base_url: http://x/v1\n    model: m\n    concurrency: 0\n",
            "line 5, column 18: `models.j.concurrency` must be a whole number from 1 to 1024, found `0`",
        ),
        (
            "models:\n  j:\n    base_url: http://x/v1\n    model: m\n    temperature: 3\n",
            "line 5, column 18: `models.j.temperature` must be a number from 0 to 2, found `3`",
        ),
        (
            "models:\n  j:\n    base_url: http://x/v1\n    model: m\n    api_key: sk-123\n",
            "line 5, column 5: unknown key `api_key` in `models.j`",
        ),
    ];
    for (models, expected) in cases {
        let err = load(models).unwrap_err();
        assert_eq!(err.lines().next().unwrap(), expected, "{models}");
    }
}
