//! Templates over nested cells (struct, list, map at any depth), strict undefined values,
//! and the `model_output` variable.
#![allow(clippy::unwrap_used)]

use arrow::array::{
    Array, ArrayRef, AsArray, Int64Array, ListArray, MapBuilder, RecordBatch, StringArray,
    StringBuilder, StructArray,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema};
use evalscore_scorers::Task;
use evalscore_task::{RowContext, TemplateOutput};
use std::sync::Arc;

/// A struct array of two nullable string fields named `names`, holding `values`.
fn strings_struct(names: [&str; 2], values: [Vec<&str>; 2]) -> StructArray {
    let fields = names.map(|n| Field::new(n, DataType::Utf8, true));
    let columns = values.map(|v| Arc::new(StringArray::from(v)) as ArrayRef);
    StructArray::new(Fields::from(fields.to_vec()), columns.to_vec(), None)
}

/// `options: list<struct<key, text>>`, `meta: struct<tags: list<string>, n: int64>`,
/// `attrs: map<string, string>`; two rows.
fn nested_batch() -> RecordBatch {
    let entries = strings_struct(
        ["key", "text"],
        [
            vec!["A", "B", "C", "X", "Y"],
            vec!["one", "two", "three", "ex", "why"],
        ],
    );
    let kt = entries.fields().clone();
    let item = Arc::new(Field::new("item", DataType::Struct(kt), true));
    let options = ListArray::new(
        Arc::clone(&item),
        OffsetBuffer::from_lengths([3, 2]),
        Arc::new(entries),
        None,
    );
    let tag_item = Arc::new(Field::new("item", DataType::Utf8, true));
    let tags = ListArray::new(
        Arc::clone(&tag_item),
        OffsetBuffer::from_lengths([2, 0]),
        Arc::new(StringArray::from(vec!["math", "easy"])),
        None,
    );
    let meta_fields = Fields::from(vec![
        Field::new("tags", DataType::List(tag_item), true),
        Field::new("n", DataType::Int64, true),
    ]);
    let meta = StructArray::new(
        meta_fields.clone(),
        vec![
            Arc::new(tags) as ArrayRef,
            Arc::new(Int64Array::from(vec![7, 8])),
        ],
        None,
    );
    let mut mb = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    mb.keys().append_value("lang");
    mb.values().append_value("en");
    mb.append(true).unwrap();
    mb.keys().append_value("lang");
    mb.values().append_value("fr");
    mb.keys().append_value("src");
    mb.values().append_value("web");
    mb.append(true).unwrap();
    let attrs = mb.finish();
    let schema = Schema::new(vec![
        Field::new("options", DataType::List(item), true),
        Field::new("meta", DataType::Struct(meta_fields), true),
        Field::new("attrs", attrs.data_type().clone(), true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(options), Arc::new(meta), Arc::new(attrs)],
    )
    .unwrap()
}

fn task_with(template: &str) -> Task {
    let text = format!(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: {}\n",
        serde_json::to_string(template).unwrap()
    );
    Task::from_yaml(&text, &[]).unwrap()
}

fn eval(template: &str, ctx: &RowContext<'_>) -> Result<TemplateOutput, (usize, String)> {
    let task = task_with(template);
    task.scorers[0].scorer.templates()[0]
        .evaluate(ctx)
        .map_err(|e| (e.row, e.message))
}

fn texts(out: TemplateOutput) -> Vec<Option<String>> {
    let TemplateOutput::Array(a) = out else {
        panic!("not an array: {out:?}");
    };
    let a = arrow::compute::cast(&a, &DataType::Utf8).unwrap();
    a.as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_owned))
        .collect()
}

fn lists(out: TemplateOutput) -> Vec<Vec<String>> {
    let TemplateOutput::Array(a) = out else {
        panic!("not an array: {out:?}");
    };
    let l = a.as_list::<i32>();
    (0..l.len())
        .map(|r| {
            let v = l.value(r);
            v.as_string::<i32>()
                .iter()
                .map(|s| s.unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// The text per row of `template` evaluated in `ctx`.
fn texts_of(template: &str, ctx: &RowContext<'_>) -> Vec<Option<String>> {
    texts(eval(template, ctx).unwrap())
}

fn ctx(batch: &RecordBatch) -> RowContext<'_> {
    RowContext {
        batch,
        model_output: None,
        model_output_raw: None,
    }
}

#[test]
fn struct_cells_are_maps_at_every_depth() {
    let batch = nested_batch();
    let c = ctx(&batch);
    // The third documented `choices` form over list<struct>.
    let keys = eval("{{ sample.options | map(attribute='key') | list }}", &c).unwrap();
    assert_eq!(lists(keys), [vec!["A", "B", "C"], vec!["X", "Y"]]);
    for (template, want) in [
        ("{{ sample.options[1].text }}", ["two", "why"]),
        ("{{ sample.options[0]['key'] }}", ["A", "X"]),
        // Fields keep the schema's order when shown.
        (
            "{{ sample.options[0] | tojson }}",
            [
                r#"{"key": "A", "text": "one"}"#,
                r#"{"key": "X", "text": "ex"}"#,
            ],
        ),
        // A list in a struct, a number in a struct.
        (
            "n={{ sample.meta.n }} tags={{ sample.meta.tags | join('+') }}",
            ["n=7 tags=math+easy", "n=8 tags="],
        ),
        // Map values, by key and as a whole.
        ("{{ sample.attrs['lang'] }}", ["en", "fr"]),
        (
            "{{ sample.attrs | list | join(',') }}",
            ["lang", "lang,src"],
        ),
        // `default` still fills what is absent.
        (
            "{{ sample.options[0].label | default('none given') }}",
            ["none given", "none given"],
        ),
    ] {
        let want = want.map(|t| Some(t.to_owned()));
        assert_eq!(texts_of(template, &c), want, "{template}");
    }
}

#[test]
fn undefined_values_are_errors_never_text() {
    let batch = nested_batch();
    let c = ctx(&batch);
    let msg = "reaches an attribute, key or variable that does not exist (undefined value)";
    for (template, row) in [
        // An expression that yields a list with undefined items.
        ("{{ sample.options | map(attribute='label') | list }}", 0),
        // A rendered template that prints an undefined attribute or map key.
        ("Q: {{ sample.options[0].label }}", 0),
        ("{{ sample.attrs['src'] }}", 0),
        // Printing a list that holds undefined values (row 1 has no third option).
        ("{{ [sample.options[0].key, sample.options[2]] }}", 1),
        // An expression that is undefined itself.
        ("{{ sample.meta.missing }}", 0),
    ] {
        let err = eval(template, &c).unwrap_err();
        assert_eq!(err, (row, msg.to_owned()), "{template}");
    }
}

fn output_batch(raw: ArrayRef) -> RecordBatch {
    let schema = Schema::new(vec![Field::new("output", raw.data_type().clone(), true)]);
    RecordBatch::try_new(Arc::new(schema), vec![raw]).unwrap()
}

#[test]
fn model_output_is_a_chat_completion_for_text_json_and_struct_cells() {
    let content = "{{ model_output.choices[0].message.content }}";
    // Plain text: one choice whose content is the text; `model_output` renders as the text.
    let raw: ArrayRef = Arc::new(StringArray::from(vec![
        Some("B"),
        Some(r#"{"choices": [{"message": {"role": "assistant", "content": "C"}}]}"#),
        None,
    ]));
    let batch = output_batch(Arc::clone(&raw));
    let text: ArrayRef = Arc::new(StringArray::from(vec![Some("B"), Some("C"), None]));
    let c = RowContext {
        batch: &batch,
        model_output: Some(&text),
        model_output_raw: Some(&raw),
    };
    assert_eq!(
        texts(eval(content, &c).unwrap()),
        [Some("B".into()), Some("C".into()), None]
    );
    assert_eq!(
        texts(eval("[{{ model_output }}]", &c).unwrap_or_else(|e| panic!("{e:?}"))),
        [
            Some("[B]".into()),
            // A JSON completion is an object, shown as Jinja shows a dict.
            Some("[{'choices': [{'message': {'content': 'C', 'role': 'assistant'}}]}]".into()),
            None
        ]
    );
    assert_eq!(
        texts(eval("{{ solver_output.output }}", &c).unwrap()),
        [Some("B".into()), Some("C".into()), None]
    );

    // A struct cell in the chat-completion shape.
    let message = strings_struct(["role", "content"], [vec!["assistant"], vec!["D"]]);
    let msg_fields = message.fields().clone();
    let choice_fields = Fields::from(vec![Field::new(
        "message",
        DataType::Struct(msg_fields),
        true,
    )]);
    let choice = StructArray::new(choice_fields.clone(), vec![Arc::new(message)], None);
    let item = Arc::new(Field::new("item", DataType::Struct(choice_fields), true));
    let choices = ListArray::new(
        Arc::clone(&item),
        OffsetBuffer::from_lengths([1]),
        Arc::new(choice),
        None,
    );
    let completion = StructArray::new(
        Fields::from(vec![Field::new("choices", DataType::List(item), true)]),
        vec![Arc::new(choices) as ArrayRef],
        None,
    );
    let raw: ArrayRef = Arc::new(completion);
    let batch = output_batch(Arc::clone(&raw));
    let text: ArrayRef = Arc::new(StringArray::from(vec!["D"]));
    let c = RowContext {
        batch: &batch,
        model_output: Some(&text),
        model_output_raw: Some(&raw),
    };
    assert_eq!(texts(eval(content, &c).unwrap()), [Some("D".into())]);
    assert_eq!(
        eval("{{ model_output.choices[0].message.refusal }}", &c).unwrap_err(),
        (
            0,
            "reaches an attribute, key or variable that does not exist (undefined value)"
                .to_owned()
        )
    );
}

/// `not` repeated thousands of times would overflow a worker's stack when evaluated: the
/// nesting is bounded when the task is loaded.
#[test]
fn deep_templates_are_load_errors() {
    let deep = format!(
        "definition:\n  scorers:\n    - type: custom\n      condition: \"{}value\"\n",
        "not ".repeat(10_000)
    );
    let err = Task::from_yaml(&deep, &[]).unwrap_err();
    assert_eq!(
        err.message,
        "template of `custom.condition` nests 10000 levels deep (brackets and unary operators such as `not`); the limit is 64"
    );
    assert_eq!(err.location.map(|l| (l.line, l.column)), Some((4, 18)));
    let ok = format!(
        "definition:\n  scorers:\n    - type: custom\n      condition: \"{}value\"\n",
        "not ".repeat(60)
    );
    assert!(Task::from_yaml(&ok, &[]).is_ok());
    let deep_render = format!(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{{{ {}sample.a }}}}\"\n",
        "- ".repeat(100)
    );
    assert!(Task::from_yaml(&deep_render, &[])
        .unwrap_err()
        .message
        .contains("nests 102 levels deep"));
}

/// Patterns each under the 1 MiB limit still add up: a task's patterns share an 8 MiB budget.
#[test]
fn a_tasks_patterns_share_one_budget() {
    let patterns: Vec<String> = (0..30).map(|i| format!("\"\\\\w{{20}}{i}\"")).collect();
    let text = format!(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"x\"\n      normalize: [{{regexes_to_ignore: [{}]}}]\n",
        patterns.join(", ")
    );
    let err = Task::from_yaml(&text, &[]).unwrap_err();
    assert!(
        err.message
            .ends_with("takes the task's regular expressions over 8 MiB compiled together"),
        "{}",
        err.message
    );
    // Ten of them fit; and the budget is per task, not per process.
    let few: Vec<String> = (0..10).map(|i| format!("\"\\\\w{{20}}{i}\"")).collect();
    let text = format!(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"x\"\n      normalize: [{{regexes_to_ignore: [{}]}}]\n",
        few.join(", ")
    );
    for _ in 0..5 {
        Task::from_yaml(&text, &[]).unwrap();
    }
}

/// Peak resident memory of this process so far (Linux), in MiB.
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

/// A few template steps that would build gigabytes stop at the per-row budget (16 MiB) with a
/// row error, before the memory is asked for; templates that build a few MiB still work.
#[test]
fn what_a_template_builds_is_bounded_per_row() {
    let batch = nested_batch();
    let c = ctx(&batch);
    let too_large = (
        0,
        "the template builds more than 16 MiB for one row (the per-row limit)".to_owned(),
    );
    let doubling: String = (0..40)
        .map(|i| format!("{{% set s{} = s{i} ~ s{i} %}}", i + 1))
        .collect();
    let list_doubling: String = (0..60)
        .map(|i| format!("{{% set l{} = l{i} + l{i} %}}", i + 1))
        .collect();
    for template in [
        "{{ '%0999999999d' | format(1) }}".to_owned(),
        "{{ '%.999999999f' | format(1.5) }}".to_owned(),
        "{{ '{:>999999999}'.format(1) if false else ('x' ~ '%999999999s' | format('y')) }}"
            .to_owned(),
        format!("{{% set s0 = 'abcdefgh' %}}{doubling}{{{{ s40 | length }}}}"),
        format!("{{% set l0 = [1, 2] %}}{list_doubling}{{{{ l60 | length }}}}"),
        "{{ ('x' * 1000) | replace('x', 'xxxxxxxxxx') | replace('x', 'xxxxxxxxxx') | replace('x', 'xxxxxxxxxx') | replace('x', 'xxxxxxxxxx') | replace('x', 'xxxxxxxxxx') }}".to_owned(),
        "{{ 'ab' * 49999999 }}".to_owned(),
        "{{ ([1] * 49999999) | length }}".to_owned(),
        "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}".to_owned(),
        "{% set big %}{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}{% endset %}{{ big | length }}".to_owned(),
        "{{ (['x' * 1000000] * 100) | join(',') }}".to_owned(),
        "{{ range(1000) | list | tojson(indent=1000000) }}".to_owned(),
        "{{ 'a\nb\nc' | indent(999999999) }}".to_owned(),
        "{{ ('x' * 10000000) | upper | lower | upper }}".to_owned(),
    ] {
        match eval(&template, &c) {
            Err(e) => assert_eq!(e, too_large, "{template}"),
            Ok(_) => panic!("{template} gave a value"),
        }
    }
    // Well inside the limit: 4 MiB built in steps, printed whole.
    let out = texts(
        eval(
            "{% set a = 'x' * 1048576 %}{% set b = a ~ a %}{{ b ~ b }}",
            &c,
        )
        .unwrap(),
    );
    assert_eq!(out.len(), 2);
    assert!(out
        .iter()
        .all(|s| s.as_deref().map(str::len) == Some(4 << 20)));
    assert!(peak_rss_mib() < 1024, "peak RSS {} MiB", peak_rss_mib());
}
