//! Suite files: what a good one gives, and the located error of each mistake.

use evalscore_task::{SuiteFile, TaskSource};

fn error(text: &str) -> String {
    match SuiteFile::parse(text) {
        Ok(s) => panic!("parsed: {s:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_suite_gives_its_inputs_labels_and_tasks_in_order() {
    let text = "inputs: [\"exports/**/*.parquet\"]\nlabels: {model: m1, n: 3}\ntasks:\n  - name: mcqa\n    task: mcqa.yaml\n  - name: qa\n    task: qa.yaml\n    inputs: [other.parquet]\n    set: {answer_column: answer}\n  - name: inline.v2\n    definition:\n      scorers: [{type: string_equals, ground_truth: \"{{ sample.answer }}\"}]\n";
    assert!(SuiteFile::is_suite(text));
    let s = SuiteFile::parse(text).unwrap();
    assert_eq!(s.inputs, vec!["exports/**/*.parquet"]);
    assert_eq!(
        s.labels,
        vec![
            ("model".to_owned(), "m1".to_owned()),
            ("n".to_owned(), "3".to_owned())
        ]
    );
    let names: Vec<&str> = s.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["mcqa", "qa", "inline.v2"]);
    assert_eq!(s.tasks[0].source, TaskSource::File("mcqa.yaml".to_owned()));
    assert_eq!(s.tasks[0].inputs, None);
    assert_eq!(s.tasks[1].inputs, Some(vec!["other.parquet".to_owned()]));
    assert_eq!(
        s.tasks[1].sets,
        vec![("answer_column".to_owned(), "answer".to_owned())]
    );
    match &s.tasks[2].source {
        TaskSource::Inline { text, location } => {
            // The suite's lines where they were: the task's errors point into the suite file.
            assert_eq!(
                text,
                &format!(
                    "{}definition:\n      scorers: [{{type: string_equals, ground_truth: \"{{{{ sample.answer }}}}\"}}]\n",
                    "\n".repeat(10)
                )
            );
            assert_eq!(location.map(|l| (l.line, l.column)), Some((12, 7)));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_inline_definition_keeps_its_columns_and_ends_with_its_block() {
    let text = "tasks:\n  - definition: {scorers: [{type: exact_match}]}\n    name: a\n  - name: b\n    definition:\n      # the scorers\n      scorers:\n\n        - type: exact_match\n    set: {x: 1}\n";
    let s = SuiteFile::parse(text).unwrap();
    let inline = |i: usize| match &s.tasks[i].source {
        TaskSource::Inline { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        inline(0),
        "\ndefinition:     {scorers: [{type: exact_match}]}\n"
    );
    assert_eq!(
        inline(1),
        "\n\n\n\ndefinition:\n      # the scorers\n      scorers:\n\n        - type: exact_match\n"
    );
    assert_eq!(s.tasks[1].sets, vec![("x".to_owned(), "1".to_owned())]);
}

#[test]
fn a_task_file_is_not_a_suite() {
    assert!(!SuiteFile::is_suite(
        "definition:\n  scorers: [{type: exact_match}]\n"
    ));
    assert!(!SuiteFile::is_suite("- tasks\n"));
    assert!(!SuiteFile::is_suite("a: << config.x >>: [\n"));
}

#[test]
fn each_mistake_is_located() {
    assert_eq!(
        error("tasks:\n  - name: a\n    task: a.yaml\ninput: [x.parquet]\n"),
        "line 4, column 1: unknown key `input` in the suite file"
    );
    assert_eq!(
        error("tasks:\n  - name: a\n    tsak: a.yaml\n"),
        "line 3, column 5: unknown key `tsak` in task 1 of `tasks`"
    );
    assert_eq!(
        error("tasks:\n  - task: a.yaml\n"),
        "line 2, column 5: task 1 of `tasks` has no `name:`"
    );
    assert_eq!(
        error("tasks:\n  - name: a\n    task: a.yaml\n  - name: a\n    task: b.yaml\n"),
        "line 4, column 5: task name `a` is given twice (first at line 2, column 5)"
    );
    assert_eq!(
        error("tasks:\n  - name: ../up\n    task: a.yaml\n"),
        "line 2, column 11: task name `../up` is not a safe folder name: use 1 to 128 letters, digits, `_`, `-` or `.`, not starting with `.`"
    );
    assert_eq!(
        error("tasks:\n  - name: a=b\n    task: a.yaml\n"),
        "line 2, column 11: task name `a=b` is not a safe folder name: use 1 to 128 letters, digits, `_`, `-` or `.`, not starting with `.`"
    );
    assert_eq!(
        error("tasks:\n  - name: a\n    task: a.yaml\n    definition: {scorers: []}\n"),
        "line 2, column 5: task `a` has both `task:` and `definition:`"
    );
    assert_eq!(
        error("tasks:\n  - name: a\n    inputs: [x.parquet]\n"),
        "line 2, column 5: task `a` has neither `task:` nor `definition:`"
    );
    assert_eq!(
        error("tasks: []\n"),
        "line 1, column 8: `tasks` is empty; a suite needs at least one task"
    );
    assert_eq!(
        error("tasks:\n  - name: a\n    task: a.yaml\n    inputs: []\n"),
        "line 4, column 13: `inputs` is empty"
    );
    assert_eq!(
        error("labels: [a]\ntasks:\n  - name: a\n    task: a.yaml\n"),
        "line 1, column 9: `labels` must be a mapping, found a list"
    );
    assert_eq!(
        error("tasks:\n  - qa.yaml\n"),
        "line 2, column 5: task 1 of `tasks` must be a mapping, found a string"
    );
}
