//! Loading task files: the seed's shape, keys, `--set`, metrics, and located errors for
//! unknown types and keys, missing options, bad templates and patterns.
#![allow(clippy::unwrap_used)]

use evalscore_metrics::ClassOptions;
use evalscore_scorers::{registry, Task};
use evalscore_task::{Location, TaskError, TemplateKind};

const SEED: &str = r#"config:
  answer_column: answer
definition:
  dataset: ignored
  scorers:
    - type: string_equals
      key: exact
      display_name: Exact
      purpose: score
      ground_truth: "{{ sample.answer }}"
      value: "{{ sample.output }}"
      metrics:
        - type: mean
          field: is_correct
          name: Accuracy
    - type: string_equals_mcqa
      ground_truth_choice: "{{ sample.<< config.answer_column >> }}"
      choices: "{{ sample.choices }}"
      metrics:
        - {type: mean, field: is_correct, name: MCQA Accuracy}
        - {type: frequency, field: completion_validity}
"#;

fn err(text: &str) -> TaskError {
    Task::from_yaml(text, &[]).unwrap_err()
}

#[test]
fn parses_the_seed_shape() {
    let t = Task::from_yaml(SEED, &[]).unwrap();
    assert_eq!(t.scorers.len(), 2);
    let s = &t.scorers[0];
    assert_eq!(s.key, "exact");
    assert_eq!(s.display_name.as_deref(), Some("Exact"));
    assert_eq!(s.metrics[0].name, "Accuracy");
    assert_eq!(s.metrics[0].metric_type, "mean");
    let m = &t.scorers[1];
    assert_eq!(m.key, "string_equals_mcqa");
    assert_eq!(m.metrics[1].name, "frequency");
    // `ground_truth_choice`, then `choices`.
    let templates = m.scorer.templates();
    assert_eq!(templates[0].kind, TemplateKind::Column("answer".into()));
    assert_eq!(templates[1].kind, TemplateKind::Column("choices".into()));
    assert!(templates[1].may_be_list() && !templates[0].may_be_list());
    assert_eq!(
        t.warnings,
        vec!["ignoring `definition.dataset` at line 4, column 3: evalscore scores existing outputs and does not use it"]
    );
    assert!(t.needs_model_output());
}

#[test]
fn set_overrides_config() {
    let t = Task::from_yaml(SEED, &[("answer_column".into(), "gold".into())]).unwrap();
    assert_eq!(
        t.scorers[1].scorer.templates()[0].kind,
        TemplateKind::Column("gold".into())
    );
}

#[test]
fn default_keys_number_repeats() {
    let t = Task::from_yaml(
        "definition:\n  scorers:\n    - {type: string_equals, ground_truth: a}\n    - {type: string_equals, ground_truth: b}\n    - {type: string_equals, ground_truth: c, key: \"my key!\"}\n",
        &[],
    )
    .unwrap();
    let keys: Vec<&str> = t.scorers.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["string_equals", "string_equals_2", "my_key_"]);
}

#[test]
fn key_collision_after_sanitizing_is_an_error() {
    fails_with("definition:\n  scorers:\n    - {type: string_equals, ground_truth: a, key: a-b}\n    - {type: string_equals, ground_truth: b, key: a_b}\n", "line 4, column 7: two scorers have the key `a_b` (the other is at line 3, column 7)");
}

#[test]
fn unknown_scorer_type_suggests() {
    let e = fails_with(
        "definition:\n  scorers:\n    - type: string_equal\n      ground_truth: x\n",
        "line 3, column 13: unknown scorer type `string_equal`",
    );
    assert_eq!(
        e.hint,
        Some(format!(
            "did you mean `string_equals`? scorer types: {}",
            registry::type_names().join(", ")
        ))
    );
}

#[test]
fn unknown_key_in_scorer_and_metric() {
    let e = err("definition:\n  scorers:\n    - type: string_equals\n      ground_truht: x\n");
    assert_eq!(
        e.to_string(),
        "line 4, column 7: unknown key `ground_truht` in scorer `string_equals`"
    );
    assert!(e.hint.unwrap().starts_with("did you mean `ground_truth`?"));
    fails_with("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: x\n      metrics:\n        - {type: mean, field: is_correct, weight: 2}\n", "line 6, column 43: unknown key `weight` in metric `mean`");
}

#[test]
fn unknown_metric_type_and_bad_field() {
    fails_with("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: x\n      metrics:\n        - {type: maen, field: is_correct}\n", "line 6, column 18: unknown metric type `maen`");
    fails_with("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: x\n      metrics:\n        - {type: mean, field: value}\n", "line 6, column 31: metric `mean` needs a numeric field, and `value` of scorer `string_equals` is text");
    fails_with("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: x\n      metrics:\n        - {type: mean, field: \"{{ sample.x | trim }}\"}\n", "line 6, column 31: metric `mean` needs a numeric field, and the template `{{ sample.x | trim }}` gives text");
    // A name that is no field of the scorer is an input column, checked when the task is
    // bound to an input (the engine's tests give that error).
    let t = Task::from_yaml("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: x\n      metrics:\n        - {type: mean, field: score}\n        - {type: mean, field: \"{{ sample.latency }}\"}\n        - {type: mean, field: is_correct}\n", &[]).unwrap();
    let m = &t.scorers[0].metrics;
    let kinds: Vec<Option<TemplateKind>> = m
        .iter()
        .map(|m| m.sources[0].template().map(|t| t.kind.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            Some(TemplateKind::Column("score".into())),
            Some(TemplateKind::Column("latency".into())),
            None
        ]
    );
    let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "mean(score)",
            "mean({{ sample.latency }})",
            "mean(is_correct)"
        ]
    );
}

#[test]
fn missing_required_template() {
    fails_with(
        "definition:\n  scorers:\n    - type: string_equals\n      value: x\n",
        "line 3, column 7: scorer `string_equals` needs `ground_truth`",
    );
}

#[test]
fn template_syntax_error_points_at_the_template() {
    fails_with("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer \"\n", "line 4, column 21: template syntax error in `string_equals.ground_truth`: unexpected end of input, expected end of variable block");
}

#[test]
fn unknown_placeholder_names_line() {
    fails_with("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.<< config.col >> }}\"\n", "line 4, column 32: placeholder `<< config.col >>` has no value");
}

#[test]
fn yaml_syntax_error_has_a_location() {
    let e = err("definition:\n  scorers: [\n");
    assert!(e.message.starts_with("invalid YAML: "), "{e}");
    assert!(e.location.is_some());
}

#[test]
fn alias_bomb_is_rejected() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    text.push_str("definition: {scorers: [{type: string_equals, ground_truth: x}]}\n");
    let e = err(&text);
    assert!(e.message.starts_with("invalid YAML: "), "{e}");
}

#[test]
fn deprecated_fields_warn_and_work() {
    let t = Task::from_yaml(
        "definition:\n  scorers:\n    - type: string_equals_mcqa\n      ground_truth_choice_field: answer\n      choices_field: choices\n",
        &[],
    )
    .unwrap();
    assert_eq!(t.warnings.len(), 2);
    assert!(t.warnings[0].starts_with("`ground_truth_choice_field` is deprecated"));
    let templates = t.scorers[0].scorer.templates();
    assert_eq!(templates[0].kind, TemplateKind::Column("answer".into()));
    assert_eq!(templates[1].kind, TemplateKind::Column("choices".into()));
    // A deprecated `choices_field` may name a list column, as `choices` may.
    assert!(templates[1].may_be_list() && !templates[0].may_be_list());
}

#[test]
fn literal_choices_list() {
    let t = Task::from_yaml(
        "definition:\n  scorers:\n    - type: string_equals_mcqa\n      ground_truth_choice: \"{{ sample.answer }}\"\n      choices: [A, B, C]\n",
        &[],
    )
    .unwrap();
    assert_eq!(
        t.scorers[0].scorer.templates()[1].kind,
        TemplateKind::LiteralList(vec!["A".into(), "B".into(), "C".into()])
    );
}

#[test]
fn unknown_template_variable_is_an_error() {
    fails_with("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ row.answer | upper }}\"\n", "line 4, column 21: template of `string_equals.ground_truth` uses unknown variable `row`");
}

fn metric_err(metric: &str) -> TaskError {
    err(&format!(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: x\n      metrics:\n        - {metric}\n"
    ))
}

#[test]
fn classification_metrics_parse_with_their_options() {
    let t = Task::from_yaml(
        "config: {pos: \"yes\"}\ndefinition:\n  confidence: 0.9\n  scorers:\n    - type: string_equals\n      ground_truth: x\n      metrics:\n        - {type: binary-classification, field_gt: ground_truth, field_pred: value, positive_answer: \"<< config.pos >>\", negative_answer: \"no\", group_by: [subject, model]}\n        - {type: multiclass-classification, field_gt: ground_truth, field_pred: value, labels: [a, b], group_by: subject}\n        - {type: recall, field_gt: ground_truth, field_pred: value, positive_answer: \"yes\"}\n",
        &[],
    )
    .unwrap();
    assert_eq!(t.confidence, 0.9);
    let m = &t.scorers[0].metrics;
    assert_eq!(m[0].metric_type, "binary-classification");
    let options = |i: usize| m[i].options.get::<ClassOptions>().unwrap();
    assert_eq!(m[0].inputs, ["ground_truth", "value"]);
    assert_eq!(m[0].field, "ground_truth,value");
    assert_eq!(options(0).positive_answer.as_deref(), Some("yes"));
    assert_eq!(options(0).negative_answer.as_deref(), Some("no"));
    assert_eq!(m[0].group_by, ["subject", "model"]);
    assert_eq!(
        options(1).labels,
        Some(vec!["a".to_owned(), "b".to_owned()])
    );
    assert_eq!(m[1].group_by, ["subject"]);
    assert_eq!(options(2).negative_answer, None);
}

#[test]
fn classification_metric_errors() {
    assert_eq!(
        metric_err("{type: binary-classification, field_gt: ground_truth, field_pred: value, positive_answer: \"yes\"}").to_string(),
        "line 6, column 11: metric `binary-classification` needs `negative_answer`"
    );
    assert_eq!(
        metric_err("{type: binary-classification, field_gt: ground_truth, field_pred: value, positive_answer: a, negative_answer: a}").to_string(),
        "line 6, column 11: `positive_answer` and `negative_answer` of metric `binary-classification` are both `a`"
    );
    assert_eq!(
        metric_err("{type: multiclass-classification, field_gt: ground_truth, field_pred: \"{{ solver_output.output }}\"}")
            .to_string(),
        "line 6, column 81: template of `multiclass-classification.field_pred` reads the model output, which a metric cannot read"
    );
    assert_eq!(
        metric_err("{type: multiclass-classification, field_gt: value, field_pred: value, positive_answer: a}").to_string(),
        "line 6, column 81: unknown key `positive_answer` in metric `multiclass-classification`"
    );
    assert_eq!(
        metric_err(
            "{type: multiclass-classification, field_gt: value, field_pred: value, labels: []}"
        )
        .to_string(),
        "line 6, column 89: `labels` must be a non-empty list of strings"
    );
}

#[test]
fn confidence_must_be_between_zero_and_one() {
    let e = err(
        "definition:\n  confidence: 95\n  scorers:\n    - {type: string_equals, ground_truth: x}\n",
    );
    assert_eq!(
        e.to_string(),
        "line 2, column 15: `confidence` must be a number between 0 and 1, found `95`"
    );
}

fn scorer(body: &str) -> Result<Task, TaskError> {
    Task::from_yaml(&format!("definition:\n  scorers:\n    - {body}\n"), &[])
}

/// Checks that the message of `e` starts with `prefix`.
fn message_starts(e: &TaskError, prefix: &str) {
    assert!(e.message.starts_with(prefix), "{}", e.message);
}

/// The error of `yaml`, checked to be `message`.
fn fails_with(yaml: &str, message: &str) -> TaskError {
    let e = err(yaml);
    assert_eq!(e.to_string(), message);
    e
}

/// The names of the fields scorer `i` of `task` writes.
pub fn field_names(task: &Task, i: usize) -> Vec<&str> {
    let fields = task.scorers[i].scorer.fields();
    fields.iter().map(|f| f.name).collect()
}

#[test]
fn parses_the_check_family() {
    // The match family's needles and negation: `match_family.rs`'s own test.
    for t in "match includes fuzzy_match not_match not_includes not_fuzzy_match".split(' ') {
        let task = scorer(&format!(
            "{{type: {t}, expected: [a, b], normalize: [strip]}}"
        ))
        .unwrap();
        assert_eq!(task.scorers[0].scorer_type, t);
        assert!(task.scorers[0].scorer.templates()[0].may_be_list());
    }
    let t = scorer("{type: exact, expected_output: \"{{ sample.e }}\", extract: answer_letter}")
        .unwrap();
    assert_eq!(
        field_names(&t, 0),
        ["is_correct", "details", "value", "expected"]
    );
    let t = scorer("{type: custom, condition: \"value | length <= 280 and 'sorry' not in value | lower and sample.x\"}").unwrap();
    let (cols, _) = t.scorers[0].scorer.templates()[0].columns();
    assert!(cols.contains("x"));
    scorer("{type: valid_json, schema: {type: object, required: [a]}}").unwrap();
    scorer("{type: check_injection}").unwrap();
    scorer("{type: pass_fail, expected_output: yes}").unwrap();
    scorer("{type: regex, pattern: \"(?i)answer: (\\\\d+)\", ground_truth: \"{{ sample.a }}\"}")
        .unwrap();
    scorer("{type: string_equals, ground_truth: x, normalize: [{regexes_to_ignore: [\"the \"]}, ignore_case, ignore_punctuation, ignore_whitespace, remove_articles, ignore_numbers, {unicode: nfkc}]}").unwrap();
    scorer("{type: includes, expected: x, extract: {regex: \"#### (\\\\d+)\", group_select: -1, fallback: none}}").unwrap();
}

#[test]
fn oversized_patterns_are_load_errors_at_their_line_and_column() {
    let large = "the regular expression in `{what}` is too large: compiled, it exceeds the size limit of 1 MiB";
    let hint = "counted repetitions multiply (`\\w{5000}`, `(?:a{1000}){1000}`): use a smaller count, or `+` or `*`";
    let head = "definition:\n  scorers:\n    - type: ";
    for (scorer, what, location) in [
        ("regex\n      pattern: '(?:a{1000}){1000}'\n", "regex.pattern", (4, 16)),
        (
            "includes\n      expected: x\n      normalize: [{regexes_to_ignore: [a, '\\w{5000}']}]\n",
            "regexes_to_ignore",
            (5, 43),
        ),
        (
            "includes\n      expected: x\n      extract: {regex: '(\\w{5000})'}\n",
            "extract.regex",
            (5, 24),
        ),
    ] {
        let e = err(&format!("{head}{scorer}"));
        assert_eq!(e.message, large.replace("{what}", what), "{scorer}");
        assert_eq!(e.location, Some(Location::new(location.0, location.1)), "{scorer}");
        assert_eq!(e.hint.as_deref(), Some(hint), "{scorer}");
    }
    // A JSON Schema `pattern` goes through the same limits.
    let e = err(&format!(
        "{head}valid_json\n      schema: {{type: string, pattern: '\\w{{5000}}'}}\n"
    ));
    assert_eq!(
        e.message,
        "invalid `schema`: `pattern` at /: the pattern is too large: compiled, it exceeds the size limit of 1 MiB"
    );
    assert_eq!(e.location, Some(Location::new(4, 15)));
}

#[test]
fn check_family_errors_point_at_the_task_line() {
    let text = "definition:\n  scorers:\n    - type: regex\n      pattern: \"(unclosed\"\n";
    let e = Task::from_yaml(text, &[]).unwrap_err();
    assert_eq!(e.location, Some(Location::new(4, 16)));
    message_starts(&e, "invalid regular expression in `regex.pattern`");
    let e = scorer("{type: regex, pattern: \"a+\", ground_truth: x}").unwrap_err();
    assert!(e.message.contains("no capture group"), "{}", e.message);
    let e = scorer("{type: regex}").unwrap_err();
    assert_eq!(e.message, "scorer `regex` needs `pattern`");
    let e = scorer("{type: includes, expected: x, normalize: [ignore_cas]}").unwrap_err();
    assert_eq!(e.message, "unknown normalize step `ignore_cas`");
    assert!(e.hint.unwrap().starts_with("did you mean `ignore_case`?"));
    let e = scorer("{type: includes, expected: x, normalize: [{unicode: nfd}]}").unwrap_err();
    assert_eq!(e.message, "unknown Unicode form `nfd`");
    let e = scorer("{type: includes}").unwrap_err();
    assert_eq!(e.message, "scorer `includes` needs `expected`");
    let e = scorer("{type: custom, condition: \"value |\"}").unwrap_err();
    message_starts(&e, "syntax error in `custom.condition`");
    let e = scorer("{type: custom, condition: \"foo == 1\"}").unwrap_err();
    assert_eq!(e.message, "`custom.condition` uses unknown variable `foo`");
    let e = scorer("{type: valid_json, schema: {oneOf: []}}").unwrap_err();
    assert!(e.message.contains("`oneOf`"), "{}", e.message);
    let e = scorer("{type: valid_json, schema: missing_schema.json}").unwrap_err();
    message_starts(&e, "cannot read schema file `missing_schema.json`");
    let e = scorer("{type: exact, expected_output: x, extract: last_numbr}").unwrap_err();
    assert_eq!(e.message, "unknown extraction `last_numbr`");
    let e = scorer("{type: exact, expected_output: x, expected: y}").unwrap_err();
    assert_eq!(e.message, "unknown key `expected` in scorer `exact`");
    let e = scorer("{type: regexx}").unwrap_err();
    assert!(e.hint.unwrap().starts_with("did you mean `regex`?"));
}

#[test]
fn custom_takes_a_condition_or_a_function_and_python_metrics_name_three_functions() {
    let t = Task::from_yaml(
        "definition:\n  scorers:\n    - type: custom\n      function: check\n      metrics:\n        - {type: python, field: value, function: f, merge: m, finish: g, group_by: s}\n",
        &[],
    )
    .unwrap();
    let f = t.scorers[0].scorer.function().unwrap();
    assert_eq!(f.name, "check");
    // No condition, ground truth or value template.
    assert!(t.scorers[0].scorer.templates().is_empty());
    let m = &t.scorers[0].metrics[0];
    assert_eq!(m.metric_type, "python");
    assert_eq!(m.group_by, vec!["s".to_owned()]);
    let p = m.python.as_ref().unwrap();
    assert_eq!(
        [&p.function.name, &p.merge.name, &p.finish.name],
        ["f", "m", "g"]
    );
    let names: Vec<(String, String)> = t
        .functions()
        .into_iter()
        .map(|(what, f)| (what, f.name.clone()))
        .collect();
    assert_eq!(
        names,
        [
            ("scorer `custom`", "check"),
            ("metric `python` of scorer `custom`", "f"),
            ("metric `python` of scorer `custom`", "m"),
            ("metric `python` of scorer `custom`", "g"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );

    fails_with("definition:\n  scorers:\n    - type: custom\n      condition: \"value\"\n      function: check\n", "line 5, column 17: scorer `custom` takes `condition` or `function`, not both");
    fails_with(
        "definition:\n  scorers:\n    - type: custom\n      value: \"{{ sample.x }}\"\n",
        "line 3, column 7: scorer `custom` needs `condition` or `function`",
    );
    fails_with("definition:\n  scorers:\n    - type: custom\n      function: check\n      metrics:\n        - {type: python, field: is_correct, function: f, finish: g}\n", "line 6, column 11: metric `python` needs `merge`");
    fails_with(
        "definition:\n  scorers:\n    - type: custom\n      function: \"  \"\n",
        "line 4, column 17: `custom.function` is empty",
    );
}
