//! Metrics end to end: classification and confusion, `write_scores: false`, fields and templates.

use super::*;

#[test]
fn classification_metrics_groups_and_confusion_file() {
    let (_dir, out, stdout) = run_example("classification.yaml", "qa.parquet", &[]);
    let input = read_parquet(&examples().join("qa.parquet"));
    let gt = strings(&input, "label_gt");
    let pred = strings(&input, "label_pred");
    let subject = strings(&input, "subject");

    // Independent confusion counts for positive "yes" / negative "no".
    let (mut tp, mut fp, mut tn, mut fn_, mut excluded) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for (g, p) in gt.iter().zip(&pred) {
        match (g.as_deref(), p.as_deref()) {
            (Some("yes"), Some("yes")) => tp += 1,
            (Some("no"), Some("yes")) => fp += 1,
            (Some("no"), Some("no")) => tn += 1,
            (Some("yes"), Some("no")) => fn_ += 1,
            _ => excluded += 1,
        }
    }
    let support = tp + fp + tn + fn_;
    let m = read_parquet(&out.join("metrics.parquet"));
    assert_eq!(
        column_names(&m),
        words("scorer scorer_type metric metric_type field stat label value n subject run_id run_started_at labels")
    );
    let lines = metric_lines(&m);
    let subjects = strings(&m, "subject");
    let figure = |metric: &str, stat: &str, label: Option<&str>, group: Option<&str>| -> f64 {
        let i = lines
            .iter()
            .enumerate()
            .position(|(i, l)| {
                let p: Vec<&str> = l.split('|').collect();
                p[2] == metric
                    && p[5] == stat
                    && p[6] == label.unwrap_or("∅")
                    && subjects[i].as_deref() == group
            })
            .unwrap_or_else(|| panic!("no {metric} {stat} {label:?} {group:?}"));
        lines[i].split('|').nth(7).unwrap().parse().unwrap()
    };
    for (stat, v) in [
        ("tp", tp),
        ("fp", fp),
        ("tn", tn),
        ("fn", fn_),
        ("support", support),
        ("excluded", excluded),
    ] {
        assert_eq!(figure("Judge", stat, None, None), v as f64, "{stat}");
    }
    let (tpf, fpf, fnf) = (tp as f64, fp as f64, fn_ as f64);
    assert_eq!(
        figure("Judge", "accuracy", None, None),
        (tp + tn) as f64 / support as f64
    );
    assert_eq!(figure("Judge", "precision", None, None), tpf / (tpf + fpf));
    assert_eq!(figure("Judge", "recall", None, None), tpf / (tpf + fnf));
    assert_eq!(
        figure("Judge", "f1_score", None, None),
        2.0 * tpf / (2.0 * tpf + fpf + fnf)
    );
    assert_eq!(figure("precision", "value", None, None), tpf / (tpf + fpf));
    assert_eq!(figure("recall", "value", None, None), tpf / (tpf + fnf));
    // Per-subject agreement means; 90% intervals (task `confidence: 0.9`) are narrower than 95%.
    for s in ["biology", "history", "math"] {
        let rows: Vec<usize> = (0..300)
            .filter(|&i| subject[i].as_deref() == Some(s))
            .collect();
        let agree = rows
            .iter()
            .filter(|&&i| gt[i].is_some() && gt[i] == pred[i])
            .count() as f64;
        assert_eq!(
            figure("Agreement", "value", None, Some(s)),
            agree / rows.len() as f64,
            "{s}"
        );
    }
    let lo = figure("Agreement", "ci_low", None, None);
    let hi = figure("Agreement", "ci_high", None, None);
    let acc = figure("Agreement", "value", None, None);
    let z90 = 1.644_853_626_951_472_2_f64;
    let n = 300.0;
    let half =
        z90 * (acc * (1.0 - acc) / n + z90 * z90 / (4.0 * n * n)).sqrt() / (1.0 + z90 * z90 / n);
    let center = (acc + z90 * z90 / (2.0 * n)) / (1.0 + z90 * z90 / n);
    assert!((lo - (center - half)).abs() < 1e-12 && (hi - (center + half)).abs() < 1e-12);
    // The multiclass classes are the sorted distinct labels; "maybe" is never true: null recall.
    assert_eq!(figure("Labels", "support", Some("maybe"), None), 0.0);
    let maybe_recall = lines
        .iter()
        .find(|l| l.contains("|Labels|") && l.contains("|recall|maybe|"))
        .unwrap();
    assert!(maybe_recall.contains("|null|"), "{maybe_recall}");

    // confusion.parquet: overall cells of both matrices, then per-subject cells of Labels.
    let c = read_parquet(&out.join("confusion.parquet"));
    assert_eq!(
        column_names(&c),
        [
            "scorer",
            "metric",
            "actual",
            "predicted",
            "count",
            "subject",
            "run_id",
            "run_started_at",
            "labels"
        ]
    );
    let metric = strings(&c, "metric");
    let actual = strings(&c, "actual");
    let predicted = strings(&c, "predicted");
    let count = uints(&c, "count");
    let csub = strings(&c, "subject");
    let judge: Vec<(String, String, u64)> = (0..c.num_rows())
        .filter(|&i| metric[i].as_deref() == Some("Judge"))
        .map(|i| {
            (
                actual[i].clone().unwrap(),
                predicted[i].clone().unwrap(),
                count[i],
            )
        })
        .collect();
    assert_eq!(
        judge,
        vec![
            ("no".into(), "no".into(), tn),
            ("no".into(), "yes".into(), fp),
            ("yes".into(), "no".into(), fn_),
            ("yes".into(), "yes".into(), tp)
        ]
    );
    let mut per_subject: std::collections::BTreeMap<(String, String, String), u64> =
        Default::default();
    for i in 0..300 {
        if let (Some(g), Some(p), Some(s)) = (&gt[i], &pred[i], &subject[i]) {
            *per_subject
                .entry((s.clone(), g.clone(), p.clone()))
                .or_default() += 1;
        }
    }
    let got: std::collections::BTreeMap<(String, String, String), u64> = (0..c.num_rows())
        .filter(|&i| metric[i].as_deref() == Some("Labels") && csub[i].is_some())
        .map(|i| {
            (
                (
                    csub[i].clone().unwrap(),
                    actual[i].clone().unwrap(),
                    predicted[i].clone().unwrap(),
                ),
                count[i],
            )
        })
        .collect();
    assert_eq!(got, per_subject);
    assert!(
        stdout.contains("confusion matrix of judge / Judge\n"),
        "{stdout}"
    );
    let mj = read_json(&out.join("metrics.json"));
    let judge_json = &mj["scorers"][0]["metrics"][1];
    assert_eq!(judge_json["name"], "Judge");
    assert_eq!(judge_json["confusion"].as_array().unwrap().len(), 4);
    assert_eq!(
        mj["scorers"][0]["metrics"][0]["group_by"],
        serde_json::json!(["subject"])
    );
}

#[test]
fn write_scores_false_keeps_metrics_but_no_columns() {
    let dir = folder(&[(
        "t.yaml",
        "definition:\n  scorers:\n    - type: string_equals\n      key: a\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, name: Accuracy}\n    - type: string_equals\n      key: b\n      write_scores: false\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, name: Accuracy}\n",
    )]);
    let task = dir.path().join("t.yaml");
    let out = dir.path().join("out");
    let qa = examples().join("qa.parquet");
    succeeded(run_task(&task, &qa, &out, &["--quiet"]));
    let scores = read_parquet(&out.join("scores.parquet"));
    assert_eq!(column_names(&scores), ["id", "a__is_correct"]);
    let lines = metric_lines(&read_parquet(&out.join("metrics.parquet")));
    let value = |key: &str| {
        lines
            .iter()
            .find(|l| {
                l.starts_with(&format!(
                    "{key}|string_equals|Accuracy|mean|is_correct|value|"
                ))
            })
            .map(|l| l.split('|').nth(7).unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(value("a"), "0.78");
    assert_eq!(value("b"), "0.78");

    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: x\n      write_scores: no_thanks\n",
    )
    .unwrap();
    let o = failed(run_task(&task, &qa, &dir.path().join("out2"), &[]), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "error: task file `{}`, line 5, column 21: `write_scores` must be true or false, found a string",
            task.display()
        )),
        "{err}"
    );
}

/// Metrics over the data: a rule's `is_correct` and a judge-shaped label against human label
/// columns, a numeric column averaged per group, two `mean`s on one scorer named by their
/// fields in every output; an unknown name is an error naming the line and column.
#[test]
fn metrics_over_input_columns_and_templates() {
    let task = "definition:\n  scorers:\n    - type: includes\n      expected: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct}\n        - {type: mean, field: \"{{ sample.latency }}\", group_by: model}\n        - {type: binary-classification, field_gt: is_correct, field_pred: human01, positive_answer: \"1.0\", negative_answer: \"0.0\"}\n    - type: string_equals\n      key: judge\n      value: \"{{ sample.judge }}\"\n      ground_truth: \"Y\"\n      metrics:\n        - {type: binary-classification, field_gt: \"{{ sample.human }}\", field_pred: value, positive_answer: \"Y\", negative_answer: \"N\"}\n";
    let rows = [
        (
            "Paris is the capital",
            "Paris",
            "Y",
            "\"Y\"",
            "1.0",
            "120",
            "a",
        ),
        ("It is Lyon", "Paris", "Y", "\"N\"", "0.0", "80", "a"),
        ("Berlin", "Berlin", "Y", "\"Y\"", "1.0", "200", "b"),
        ("Maybe Bonn", "Berlin", "N", "\"Y\"", "1.0", "40", "b"),
        ("Rome", "Rome", "N", "\"N\"", "0.0", "60", "a"),
        ("Madrid", "Madrid", "Y", "\"Y\"", "1.0", "null", "b"),
        ("no idea", "Oslo", "Y", "\"N\"", "0.0", "100", "a"),
        ("Oslo", "Oslo", "N", "null", "null", "90", "b"),
    ];
    let input = jsonl(rows.len(), |i| {
        let (output, answer, judge, human, human01, latency, model) = rows[i];
        format!("{{\"id\": {i}, \"output\": \"{output}\", \"answer\": \"{answer}\", \"judge\": \"{judge}\", \"human\": {human}, \"human01\": {human01}, \"latency\": {latency}, \"model\": \"{model}\"}}")
    });
    let job = Job::new(task, &input);
    let stdout = stdout(&succeeded(job.run(&[])));
    let lines = metric_lines(&read_parquet(&job.out.join("metrics.parquet")));
    let value = |prefix: &str| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l.starts_with(prefix))
            .cloned()
            .collect()
    };
    assert_eq!(
        value("includes|includes|mean(is_correct)|mean|is_correct|value|"),
        ["includes|includes|mean(is_correct)|mean|is_correct|value|∅|0.625|8"]
    );
    // Overall, then model a (120, 80, 60, 100), then model b (200, 40, 90; one null).
    assert_eq!(
        value("includes|includes|mean({{ sample.latency }})|mean|{{ sample.latency }}|value|"),
        [
            "includes|includes|mean({{ sample.latency }})|mean|{{ sample.latency }}|value|∅|98.57142857142857|7",
            "includes|includes|mean({{ sample.latency }})|mean|{{ sample.latency }}|value|∅|90|4",
            "includes|includes|mean({{ sample.latency }})|mean|{{ sample.latency }}|value|∅|110|3",
        ]
    );
    let stats = |prefix: &str| -> Vec<String> {
        ["accuracy", "precision", "recall", "support", "excluded"]
            .iter()
            .flat_map(|s| value(&format!("{prefix}|{s}|")))
            .collect()
    };
    assert_eq!(
        stats("includes|includes|binary-classification|binary-classification|is_correct,human01"),
        [
            "includes|includes|binary-classification|binary-classification|is_correct,human01|accuracy|∅|0.7142857142857143|7",
            "includes|includes|binary-classification|binary-classification|is_correct,human01|precision|∅|0.75|7",
            "includes|includes|binary-classification|binary-classification|is_correct,human01|recall|∅|0.75|7",
            "includes|includes|binary-classification|binary-classification|is_correct,human01|support|∅|7|7",
            "includes|includes|binary-classification|binary-classification|is_correct,human01|excluded|∅|1|7",
        ]
    );
    assert_eq!(
        stats("judge|string_equals|binary-classification|binary-classification|{{ sample.human }},value"),
        [
            "judge|string_equals|binary-classification|binary-classification|{{ sample.human }},value|accuracy|∅|0.5714285714285714|7",
            "judge|string_equals|binary-classification|binary-classification|{{ sample.human }},value|precision|∅|0.6|7",
            "judge|string_equals|binary-classification|binary-classification|{{ sample.human }},value|recall|∅|0.75|7",
            "judge|string_equals|binary-classification|binary-classification|{{ sample.human }},value|support|∅|7|7",
            "judge|string_equals|binary-classification|binary-classification|{{ sample.human }},value|excluded|∅|1|7",
        ]
    );
    // metrics.json and the summary carry the same names.
    let json = read_json(&job.out.join("metrics.json"));
    let names: Vec<&str> = json["scorers"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "mean(is_correct)",
            "mean({{ sample.latency }})",
            "binary-classification"
        ]
    );
    for name in ["mean(is_correct)", "mean({{ sample.latency }})"] {
        assert!(stdout.contains(&format!(" {name} ")), "{stdout}");
    }

    // compare pairs the two runs' rows by `id` and compares their score columns.
    let again = job.dir.path().join("again");
    succeeded(run_task(&job.task, &job.input, &again, &["--quiet"]));
    let cmp = job.dir.path().join("cmp");
    succeeded(compare_runs(&job.out, &again, &cmp, &[]));
    let c = read_json(&cmp.join("compare.json"));
    let compared: Vec<String> = c["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {} {}", r["column"], r["n_pairs"], r["verdict"]))
        .collect();
    assert_eq!(
        compared,
        [
            "\"includes__is_correct\" 8 \"tied\"",
            "\"judge__is_correct\" 8 \"tied\""
        ]
    );

    // An unknown name, word for word.
    std::fs::write(
        &job.task,
        "definition:\n  scorers:\n    - type: includes\n      expected: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: latncy}\n",
    )
    .unwrap();
    let o = failed(job.run(&[]), 2);
    assert_eq!(
        stderr(&o),
        format!("error: task file `{}`, line 6, column 31: scorer `includes` has no field `latncy`, and the input has no column `latncy`\nhint: did you mean `latency`? fields of `includes`: is_correct, value, expected; input columns: answer, human, human01, id, judge, latency, model, output\n", job.task.display())
    );
}
