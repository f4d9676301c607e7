//! Bad input beyond `errors.rs`: damaged Parquet pages, hostile task files (alias bombs,
//! runaway templates, include/import), non-text columns, empty input, and output names that
//! try to escape `--out`. Each failing case asserts exit code 2, an `error:` message naming the
//! culprit, and no new file in the output folder.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::{
    Array, ArrayRef, Float64Array, Int64Array, ListBuilder, RecordBatch, StringArray,
    StringBuilder, StructArray,
};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn write_parquet(path: &Path, batches: &[RecordBatch], props: Option<WriterProperties>) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(f, batches[0].schema(), props).unwrap();
    for b in batches {
        w.write(b).unwrap();
        w.flush().unwrap();
    }
    w.close().unwrap();
}

fn text_batch(cols: &[(&str, Vec<Option<&str>>)]) -> RecordBatch {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, _)| Field::new(*n, DataType::Utf8, true))
        .collect();
    let arrays: Vec<ArrayRef> = cols
        .iter()
        .map(|(_, v)| Arc::new(StringArray::from(v.clone())) as ArrayRef)
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Damaged Parquet

/// Four row groups of 1,000 rows; uncompressed, plain-encoded, so the pages are easy to find.
fn four_row_groups(path: &Path) {
    let batches: Vec<RecordBatch> = (0..4)
        .map(|g| {
            let ids: Vec<String> = (0..1000).map(|i| format!("r{}", g * 1000 + i)).collect();
            let answers: Vec<String> = (0..1000).map(|i| format!("answer {}", i % 7)).collect();
            text_batch(&[
                ("id", ids.iter().map(|s| Some(s.as_str())).collect()),
                ("answer", answers.iter().map(|s| Some(s.as_str())).collect()),
                ("output", answers.iter().map(|s| Some(s.as_str())).collect()),
            ])
        })
        .collect();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(1000))
        .build();
    write_parquet(path, &batches, Some(props));
}

#[test]
fn corrupted_page_in_a_middle_row_group_names_file_and_rows() {
    let c = Case::quiet().task(QA_TASK);
    let p = c.path("damaged.parquet");
    four_row_groups(&p);
    let reader = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
    let meta = reader.metadata();
    assert_eq!(meta.num_row_groups(), 4);
    let rg = meta.row_group(2);
    let answer = rg
        .columns()
        .iter()
        .find(|c| c.column_path().string() == "answer")
        .unwrap();
    let offset = answer.data_page_offset() as usize;
    drop(reader);
    // Overwrite the data page header of `answer` in row group 2 (rows 2001 to 3000).
    let mut bytes = std::fs::read(&p).unwrap();
    for b in &mut bytes[offset..offset + 24] {
        *b = 0xff;
    }
    std::fs::write(&p, &bytes).unwrap();
    let err = c.fails(&["t.yaml", "--input", "damaged.parquet"]);
    assert_starts(
        &err,
        "error: damaged.parquet: cannot decode row group 2 (rows 2001 to 3000): ",
    );
    assert_ends(
        &err,
        "hint: the file is damaged; re-export it from its source\n",
    );
}

#[test]
fn corrupted_compressed_page_bytes_are_caught() {
    // Flip bytes inside the zstd-compressed body of a data page (not the header).
    let c = Case::quiet().task(QA_TASK);
    let p = c.path("damaged.parquet");
    let batches: Vec<RecordBatch> = (0..3)
        .map(|g| {
            let v: Vec<String> = (0..2000)
                .map(|i| format!("text {} {}", g, i * 31 % 977))
                .collect();
            text_batch(&[
                ("answer", v.iter().map(|s| Some(s.as_str())).collect()),
                ("output", v.iter().map(|s| Some(s.as_str())).collect()),
            ])
        })
        .collect();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
        .set_max_row_group_row_count(Some(2000))
        .build();
    write_parquet(&p, &batches, Some(props));
    let reader = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
    let col = reader.metadata().row_group(1).column(0).clone();
    drop(reader);
    let start = col.data_page_offset() as usize;
    let len = col.compressed_size() as usize;
    let mut bytes = std::fs::read(&p).unwrap();
    // The page header is small; the second half of the chunk is page body.
    for b in &mut bytes[start + len / 2..start + len / 2 + 16] {
        *b ^= 0x5a;
    }
    std::fs::write(&p, &bytes).unwrap();
    let err = c.fails(&["t.yaml", "--input", "damaged.parquet"]);
    assert_starts(
        &err,
        "error: damaged.parquet: cannot decode row group 1 (rows 2001 to 4000): ",
    );
}

#[test]
fn fuzz_found_slow_decode_file_fails_fast_naming_file_row_group_and_column() {
    // The fuzzer's 6 KB file: the page header of `id` has a damaged statistics length, so
    // parquet-rs read on past the column chunk, into bytes it took for nested Thrift lists
    // and maps, and skipped their elements one empty `read` at a time at the end of the file,
    // for seconds. Page headers are now checked against their column chunk first.
    let c = Case::quiet().task(QA_TASK);
    let regression = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions/slow-decode-6kb.parquet");
    std::fs::copy(regression, c.path("slow-decode-6kb.parquet")).unwrap();
    let t = Instant::now();
    let err = c.fails(&["t.yaml", "--input", "slow-decode-6kb.parquet"]);
    let took = t.elapsed();
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(
        err,
        "error: slow-decode-6kb.parquet: cannot decode row group 0 (rows 1 to 3): column `id`: the page header at byte 4 runs past the end of the column chunk at byte 52\nhint: the file is damaged; re-export it from its source\n"
    );
    assert!(files_in(&c.path("out")).is_empty(), "no output files");
}

// ---------------------------------------------------------------------------------------------
// Hostile task files

#[test]
fn alias_bomb_is_rejected_fast() {
    let c = Case::quiet();
    let mut yaml = String::from(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        yaml.push_str(&format!("a{i}: &a{i} [{}]\n", [prev.as_str(); 9].join(",")));
    }
    yaml.push_str("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      display_name: *a9\n");
    c.write("bomb.yaml", &yaml);
    four_row_groups(&c.path("in.parquet"));
    let t = Instant::now();
    let err = c.fails(&["bomb.yaml", "--input", "in.parquet"]);
    let took = t.elapsed();
    // A hang guard, not a speed check: the message below proves the alias limit stopped it
    // (an expanded bomb would run for minutes), and a busy machine must not fail the test.
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_starts(&err, "error: task file `bomb.yaml`");
    assert_eq!(err, "error: task file `bomb.yaml`, line 5, column 14: invalid YAML: the YAML is too large once aliases are expanded (too many events); limits: 20000 events, 1000 aliases and anchors, nesting depth 64\n");
}

#[test]
fn runaway_template_is_stopped_by_fuel_and_names_the_scorer() {
    let c = Case::quiet().task("definition:\n  scorers:\n    - type: string_equals\n      key: loop\n      ground_truth: \"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\"\n");
    four_row_groups(&c.path("in.parquet"));
    let t = Instant::now();
    let err = c.fails(&["t.yaml", "--input", "in.parquet"]);
    assert!(t.elapsed() < Duration::from_secs(20));
    assert_eq!(
        err,
        "error: in.parquet, row 1: scorer `loop`: template of `string_equals.ground_truth` failed: the template ran out of fuel (100000 steps per row); it probably loops without end\nhint: no output was written; `--max-row-errors N` (or `N%`) scores up to N such rows 0.0 and lists them in run.json\n"
    );
}

/// The error of a task whose scorer's ground truth is the template `template`.
fn template_error(template: &str) -> String {
    let c = Case::quiet().task(&format!(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{template}\"\n"
    ));
    four_row_groups(&c.path("in.parquet"));
    c.fails(&["t.yaml", "--input", "in.parquet"])
}

#[test]
fn include_fails_cleanly_at_load() {
    assert_eq!(
        template_error("{% include '/etc/passwd' %}"),
        "error: task file `t.yaml`, line 4, column 21: template of `string_equals.ground_truth` uses `{% include %}`, which evalscore does not allow\nhint: templates cannot read files: there is no include, import, from or extends\n"
    );
}

#[test]
fn import_fails_cleanly_at_load() {
    assert_eq!(
        template_error("{%- import 'macros.j2' as m -%}{{ m.x() }}"),
        "error: task file `t.yaml`, line 4, column 21: template of `string_equals.ground_truth` uses `{% import %}`, which evalscore does not allow\nhint: templates cannot read files: there is no include, import, from or extends\n"
    );
}

#[test]
fn extends_and_from_fail_cleanly_at_load() {
    for (stmt, word) in [
        ("{% extends 'base.html' %}", "extends"),
        ("{% from 'm.j2' import x %}{{ x() }}", "from"),
    ] {
        let err = template_error(stmt);
        assert!(
            err.starts_with(&format!("error: task file `t.yaml`, line 4, column 21: template of `string_equals.ground_truth` uses `{{% {word} %}}`")),
            "{err}"
        );
    }
}

#[test]
fn valid_json_on_hostile_nesting_scores_zero_with_the_depth_limit() {
    let c = Case::quiet().task("definition:\n  scorers:\n    - type: valid_json\n      key: plain\n    - type: valid_json\n      key: schema\n      schema: {type: array}\n");
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    // 127 levels, the limit, pass with and without a schema.
    let limit = "[".repeat(127) + &"]".repeat(127);
    let b = text_batch(&[("output", vec![Some(deep.as_str()), Some(limit.as_str())])]);
    write_parquet(&c.path("deep.parquet"), &[b], None);
    c.succeeds(&["t.yaml", "--input", "deep.parquet"]);
    let s = read_parquet(&c.path("out/scores.parquet"));
    for key in ["plain", "schema"] {
        assert_eq!(
            floats(&s, &format!("{key}__is_correct")),
            [Some(0.0), Some(1.0)]
        );
        assert_eq!(
            strings(&s, &format!("{key}__details")),
            [
                Some(
                    "invalid JSON: nesting exceeds the depth limit of 127 at line 1 column 128"
                        .to_owned()
                ),
                Some("valid JSON".to_owned()),
            ]
        );
    }
}

#[test]
fn keys_cannot_escape_the_output_folder() {
    let c = Case::quiet().task("definition:\n  scorers:\n    - type: string_equals\n      key: ../../etc/passwd\n      display_name: ../../x\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, name: ../../../../tmp/evil}\n");
    four_row_groups(&c.path("in.parquet"));
    c.succeeds(&["t.yaml", "--input", "in.parquet"]);
    assert_eq!(files_in(c.dir.path()), ["in.parquet", "out", "t.yaml"]);
    assert_eq!(files_in(&c.path("out")), OUTPUT_FILES);
    let scores = read_parquet(&c.path("out/scores.parquet"));
    assert_eq!(
        column_names(&scores),
        ["id", "______etc_passwd__is_correct",]
    );
}

// ---------------------------------------------------------------------------------------------
// Data types

#[test]
fn struct_column_where_text_is_expected_is_rejected_before_reading_rows() {
    let c = Case::quiet().task("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.meta }}\"\n");
    write_parquet(&c.path("nested.parquet"), &[nested_batch()], None);
    let err = c.fails(&["t.yaml", "--input", "nested.parquet"]);
    assert_eq!(
        err,
        "error: task file `t.yaml`, line 4, column 21: column `meta` has type Struct(\"label\": Utf8) in `nested.parquet`, which scorer `string_equals` cannot read as text\nhint: point `string_equals.ground_truth` at a text, number or boolean column, or convert it in the template (e.g. `{{ sample.meta | tojson }}`)\n"
    );
}

#[test]
fn list_columns_are_rejected_as_text_but_accepted_as_choices_and_expected() {
    let c = Case::quiet();
    write_parquet(&c.path("nested.parquet"), &[nested_batch()], None);
    // A list where text is expected: an error before any row is read.
    c.write(
        "t.yaml",
        "definition:\n  scorers:\n    - type: exact\n      key: k\n      expected_output: \"{{ sample.tags }}\"\n",
    );
    assert_eq!(
        c.fails(&["t.yaml", "--input", "nested.parquet"]),
        "error: task file `t.yaml`, line 5, column 24: column `tags` has type List(Utf8) in `nested.parquet`, which scorer `k` cannot read as text\nhint: point `exact.expected_output` at a text, number or boolean column, or convert it in the template (e.g. `{{ sample.tags | tojson }}`)\n"
    );
    // A struct where a list is accepted: an error too.
    c.write(
        "t.yaml",
        "definition:\n  scorers:\n    - type: string_equals_mcqa\n      ground_truth_choice: \"{{ sample.output }}\"\n      choices: \"{{ sample.meta }}\"\n",
    );
    assert_eq!(
        c.fails(&["t.yaml", "--input", "nested.parquet"]),
        "error: task file `t.yaml`, line 5, column 16: column `meta` has type Struct(\"label\": Utf8) in `nested.parquet`, which scorer `string_equals_mcqa` cannot read as text or as a list\nhint: point `string_equals_mcqa.choices` at a list column, or at a text column holding a JSON or Python list\n"
    );
    // The list column as `choices` and as the match family's `expected`: scored.
    c.write(
        "t.yaml",
        "definition:\n  scorers:\n    - type: string_equals_mcqa\n      ground_truth_choice: \"{{ sample.output }}\"\n      choices: \"{{ sample.tags }}\"\n    - type: includes\n      expected: \"{{ sample.tags }}\"\n",
    );
    c.succeeds(&["t.yaml", "--input", "nested.parquet"]);
    // Row 1's output `a` is among its tags [a, x]; row 2's `b` is not among [y, z].
    let s = read_parquet(&c.path("out/scores.parquet"));
    assert_eq!(
        floats(&s, "string_equals_mcqa__is_correct"),
        [Some(1.0), Some(0.0)]
    );
    assert_eq!(
        strings(&s, "string_equals_mcqa__completion_validity"),
        [Some("VALID".to_owned()), Some("INVALID".to_owned())]
    );
    assert_eq!(floats(&s, "includes__is_correct"), [Some(1.0), Some(0.0)]);
}

/// Two rows: `meta` a struct, `tags` a list of strings, `output` text.
fn nested_batch() -> RecordBatch {
    let inner = StructArray::from(vec![(
        Arc::new(Field::new("label", DataType::Utf8, true)),
        Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
    )]);
    let mut tags = ListBuilder::new(StringBuilder::new());
    for row in [["a", "x"], ["y", "z"]] {
        for t in row {
            tags.values().append_value(t);
        }
        tags.append(true);
    }
    let tags = tags.finish();
    let schema = Schema::new(vec![
        Field::new("meta", inner.data_type().clone(), true),
        Field::new("tags", tags.data_type().clone(), true),
        Field::new("output", DataType::Utf8, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(inner) as ArrayRef,
            Arc::new(tags),
            Arc::new(StringArray::from(vec!["a", "b"])),
        ],
    )
    .unwrap()
}

#[test]
fn integer_and_float_columns_are_compared_as_their_display_text() {
    let c = Case::quiet().task("definition:\n  scorers:\n    - type: string_equals\n      key: int\n      ground_truth: \"{{ sample.n }}\"\n      metrics: [{type: frequency, field: ground_truth}]\n    - type: string_equals\n      key: float\n      ground_truth: \"{{ sample.x }}\"\n      metrics: [{type: frequency, field: ground_truth}]\n");
    let schema = Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("n", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
        Field::new("output", DataType::Utf8, true),
    ]);
    let b = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c", "d", "e"])) as ArrayRef,
            Arc::new(Int64Array::from(vec![
                Some(3),
                Some(-1),
                None,
                Some(3),
                Some(1),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(3.0),
                Some(0.5),
                Some(1e20),
                None,
                Some(1.0),
            ])),
            Arc::new(StringArray::from(vec!["3", "0.5", "x", "3.0", "1.0"])),
        ],
    )
    .unwrap();
    write_parquet(&c.path("numbers.parquet"), &[b], None);
    c.succeeds(&["t.yaml", "--input", "numbers.parquet"]);
    let s = read_parquet(&c.path("out/scores.parquet"));
    // The converted texts, as the frequency metric over `ground_truth` counts them.
    let m = read_parquet(&c.path("out/metrics.parquet"));
    let lines: Vec<String> = metric_lines(&m)
        .into_iter()
        .filter(|l| l.contains("|count|"))
        .collect();
    assert_eq!(
        lines,
        [
            "int|string_equals|frequency|frequency|ground_truth|count|-1|1|5",
            "int|string_equals|frequency|frequency|ground_truth|count|1|1|5",
            "int|string_equals|frequency|frequency|ground_truth|count|3|2|5",
            "int|string_equals|frequency|frequency|ground_truth|count|∅|1|5",
            "int|string_equals|missing|missing|rows|count|∅|1|5",
            "float|string_equals|frequency|frequency|ground_truth|count|0.5|1|5",
            "float|string_equals|frequency|frequency|ground_truth|count|1|1|5",
            "float|string_equals|frequency|frequency|ground_truth|count|100000000000000000000|1|5",
            "float|string_equals|frequency|frequency|ground_truth|count|3|1|5",
            "float|string_equals|frequency|frequency|ground_truth|count|∅|1|5",
            "float|string_equals|missing|missing|rows|count|∅|1|5",
        ]
    );
    let correct = [
        column_text(&s, "int__is_correct"),
        column_text(&s, "float__is_correct"),
    ];
    assert_eq!(
        correct,
        ["1.0 | 0.0 | 0.0 | 0.0 | 0.0", "0.0 | 1.0 | 0.0 | 0.0 | 1.0"]
    );
}

#[test]
fn empty_parquet_file_writes_every_output_with_null_metrics() {
    let c = Case::quiet().task("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, name: Accuracy}\n");
    let b = text_batch(&[("id", vec![]), ("answer", vec![]), ("output", vec![])]);
    write_parquet(&c.path("empty.parquet"), &[b], None);
    c.succeeds(&["t.yaml", "--input", "empty.parquet"]);
    assert_eq!(files_in(&c.path("out")), OUTPUT_FILES);
    let scores = parquet_rows_and_columns(&c.path("out/scores.parquet"));
    assert_eq!(
        scores,
        (
            0,
            vec!["id".to_owned(), "string_equals__is_correct".to_owned(),]
        )
    );
    let metrics = read_parquet(&c.path("out/metrics.parquet"));
    let lines = metric_lines(&metrics);
    assert!(!lines.is_empty());
    // Every figure is null over zero rows, except counts, which are 0.
    for l in &lines {
        assert!(
            l.ends_with("|null|0") || (l.contains("|count|") && l.ends_with("|0|0")),
            "{l}"
        );
    }
    assert_eq!(
        lines[0],
        "string_equals|string_equals|Accuracy|mean|is_correct|value|∅|null|0"
    );
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(c.path("out/run.json")).unwrap()).unwrap();
    assert_eq!(run["rows_scored"], 0);
    assert_eq!(run["inputs"][0]["rows"], 0);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(c.path("out/metrics.json")).unwrap())
            .unwrap();
    assert_eq!(m["rows"], 0);
    assert_eq!(
        m["scorers"][0]["metrics"][0]["value"],
        serde_json::Value::Null
    );
    assert_eq!(m["scorers"][0]["metrics"][0]["n"], 0);
    assert_eq!(
        parquet_rows_and_columns(&c.path("out/confusion.parquet")).0,
        0
    );
}

/// Rows and column names from the footer (works for files with no row group).
fn parquet_rows_and_columns(path: &Path) -> (i64, Vec<String>) {
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let m = r.metadata().file_metadata();
    let cols = m
        .schema_descr()
        .root_schema()
        .get_fields()
        .iter()
        .map(|f| f.name().to_owned())
        .collect();
    (m.num_rows(), cols)
}

/// A file with one column `deep`: an int64 inside `levels` nested structs (so at depth
/// `levels + 1`), beside `answer` and `output`.
fn deep_struct_file(path: &Path, levels: usize) {
    write_deep_parquet(path, levels, |deep| {
        let answers: ArrayRef = Arc::new(StringArray::from(vec!["x", "y"]));
        vec![
            ("deep", deep),
            ("answer", answers.clone()),
            ("output", answers),
        ]
    });
}

/// A schema nested thousands deep overflows the decoder's stack; anything deeper than 64
/// levels is refused when the file is opened. The deepest allowed schema, 64 levels (63
/// structs around a leaf), is read, kept and written.
#[test]
fn schemas_nested_too_deep_are_refused_before_the_decoder_recurses() {
    let c = Case::quiet().task(QA_TASK);
    // 5,000 levels overflow the main thread's stack in parquet-rs without the check.
    for levels in [64, 500, 5000] {
        deep_struct_file(&c.path("deep.parquet"), levels);
        let err = c.fails(&["t.yaml", "--input", "deep.parquet"]);
        assert_eq!(
            err,
            "error: deep.parquet: unsupported schema: the schema nests deeper than 64 levels\nhint: flatten the deepest columns, or drop those the task does not use\n"
        );
    }
    deep_struct_file(&c.path("ok.parquet"), 63);
    c.succeeds(&["t.yaml", "--input", "ok.parquet", "--keep", "deep"]);
    let (rows, columns) = parquet_rows_and_columns(&c.path("out/scores.parquet"));
    assert_eq!(rows, 2);
    assert!(columns.contains(&"deep".to_owned()), "{columns:?}");
}

/// A file name holding control characters (an escape sequence, a carriage return, a newline)
/// is shown escaped: no message moves the terminal's cursor or forges a line.
#[test]
fn control_characters_in_a_file_name_are_shown_escaped() {
    let case = Case::quiet().task(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n",
    );
    case.write("in/x\u{1b}[2J\rred\nline.parquet", "not parquet at all");
    let err = case.fails(&["t.yaml", "--input", "in"]);
    assert_eq!(
        err,
        "error: in/x\\u{1b}[2J\\rred\\nline.parquet: not a readable Parquet file: Parquet error: Invalid Parquet file. Corrupt footer\nhint: the file may be truncated, still being written, or not Parquet at all\n"
    );
}
