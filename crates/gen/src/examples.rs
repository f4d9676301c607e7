//! `examples`: small deterministic example inputs with edge cases on fixed row ids.

use std::fmt::Write as _;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, ListBuilder, StringArray, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::json::writer::{LineDelimited, WriterBuilder};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;

use crate::rng::{Rng, WORDS};
use crate::writer_props;

pub const ROW_GROUP_SIZE: usize = 100;
pub const QA_ROWS: i64 = 300;
pub const MCQA_ROWS: i64 = 300;
const QA_SEED: u64 = 0x5141_0001;
const MCQA_SEED: u64 = 0x4D43_0002;

/// The command documented in the generated README.
pub const REGEN_COMMAND: &str =
    "cargo run --release -p evalscore-gen -- examples --out data/examples";

/// An edge case on a fixed row of `qa.parquet`: the model output and, if
/// given, the forced ground truth (`true` = "yes").
struct QaEdge {
    id: i64,
    output: Option<&'static str>,
    truth: Option<bool>,
    note: &'static str,
}

const QA_EDGES: &[QaEdge] = &[
    QaEdge {
        id: 3,
        output: None,
        truth: None,
        note: "null output",
    },
    QaEdge {
        id: 17,
        output: Some(""),
        truth: Some(true),
        note: "empty string",
    },
    QaEdge {
        id: 42,
        output: Some("Yes"),
        truth: Some(true),
        note: "capitalised",
    },
    QaEdge {
        id: 99,
        output: Some("yes "),
        truth: Some(true),
        note: "trailing space (last row of row group 0)",
    },
    QaEdge {
        id: 100,
        output: Some(" no"),
        truth: Some(false),
        note: "leading space (first row of row group 1)",
    },
    QaEdge {
        id: 150,
        output: Some("yes\n"),
        truth: Some(true),
        note: "trailing newline",
    },
    QaEdge {
        id: 199,
        output: Some("YES"),
        truth: Some(true),
        note: "upper case",
    },
    QaEdge {
        id: 200,
        output: Some("sí"),
        truth: Some(true),
        note: "multi-byte (2-byte í), never equals \"yes\"",
    },
    QaEdge {
        id: 299,
        output: Some("是"),
        truth: Some(true),
        note: "multi-byte CJK (3 bytes), last row",
    },
];
const QA_ANSWER_NULL: &[i64] = &[58, 123, 271];
const QA_PRED_MAYBE: &[i64] = &[21, 164, 233];
const QA_PRED_NULL: &[i64] = &[88, 205];

const ABCD: &[&str] = &["A", "B", "C", "D"];
const ABC: &[&str] = &["A", "B", "C"];

/// An edge case on a fixed row of `mcqa.parquet`.
struct McqaEdge {
    id: i64,
    output: Option<&'static str>,
    answer: &'static str,
    choices: &'static [&'static str],
    note: &'static str,
}

const MCQA_EDGES: &[McqaEdge] = &[
    McqaEdge {
        id: 4,
        output: None,
        answer: "A",
        choices: ABCD,
        note: "null output",
    },
    McqaEdge {
        id: 19,
        output: Some(""),
        answer: "B",
        choices: ABCD,
        note: "empty string",
    },
    McqaEdge {
        id: 33,
        output: Some(" C"),
        answer: "C",
        choices: ABCD,
        note: "leading space",
    },
    McqaEdge {
        id: 50,
        output: Some("B. because"),
        answer: "B",
        choices: ABCD,
        note: "letter + explanation",
    },
    McqaEdge {
        id: 99,
        output: Some("b"),
        answer: "B",
        choices: ABCD,
        note: "lower case (last row of row group 0)",
    },
    McqaEdge {
        id: 100,
        output: Some("D) the answer"),
        answer: "D",
        choices: ABCD,
        note: "letter + ')' (first row of row group 1)",
    },
    McqaEdge {
        id: 120,
        output: Some("É"),
        answer: "A",
        choices: ABCD,
        note: "non-ASCII letter (2 bytes)",
    },
    McqaEdge {
        id: 150,
        output: Some("日本"),
        answer: "C",
        choices: ABCD,
        note: "CJK (3 bytes per char)",
    },
    McqaEdge {
        id: 180,
        output: Some("Ä"),
        answer: "A",
        choices: ABCD,
        note: "non-ASCII letter, uppercase of 'ä'",
    },
    McqaEdge {
        id: 199,
        output: Some("🙂 A"),
        answer: "A",
        choices: ABCD,
        note: "4-byte emoji before the letter",
    },
    McqaEdge {
        id: 210,
        output: Some("D"),
        answer: "C",
        choices: ABC,
        note: "letter not among the row's choices [A,B,C]",
    },
    McqaEdge {
        id: 250,
        output: Some("A"),
        answer: "A",
        choices: ABCD,
        note: "plain correct letter",
    },
];
const MCQA_ANSWER_NULL: &[i64] = &[61, 142, 288];
const MCQA_CHOICES_NULL: &[i64] = &[77, 166, 240];

const HISTORY_TRUE: &[&str] = &[
    "Did World War II end in 1945?",
    "Was the Magna Carta sealed in 1215?",
    "Was Napoleon Bonaparte born on Corsica?",
    "Did the Berlin Wall fall in 1989?",
    "Did Columbus first cross the Atlantic in 1492?",
    "Did Apollo 11 land on the Moon in 1969?",
];
const HISTORY_FALSE: &[&str] = &[
    "Did the Western Roman Empire fall in 1776?",
    "Was the printing press invented in the 20th century?",
    "Was Julius Caesar the first emperor of China?",
    "Did the French Revolution begin in 1889?",
    "Was the Treaty of Versailles signed in 1519?",
    "Did the Ottoman Empire rule Japan?",
];
const BIOLOGY_TRUE: &[&str] = &[
    "Do plants perform photosynthesis?",
    "Is DNA a double helix?",
    "Is the heart a muscle?",
    "Are whales mammals?",
    "Is insulin produced in the pancreas?",
    "Do mitochondria have their own DNA?",
];
const BIOLOGY_FALSE: &[&str] = &[
    "Are bats insects?",
    "Do humans have three lungs?",
    "Do mature mammalian red blood cells have a nucleus?",
    "Do fungi perform photosynthesis?",
    "Are spiders insects?",
    "Is the liver part of the nervous system?",
];

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn utf8(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

pub fn qa_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        utf8("question"),
        utf8("subject"),
        utf8("answer"),
        utf8("output"),
        utf8("label_gt"),
        utf8("label_pred"),
    ]))
}

pub fn mcqa_schema() -> SchemaRef {
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        utf8("prompt"),
        utf8("subject"),
        utf8("answer"),
        Field::new("choices", DataType::List(item), true),
        utf8("choices_json"),
        utf8("choices_py"),
        utf8("output"),
    ]))
}

/// Yes/no QA rows (`qa.parquet` / `qa.jsonl`).
pub fn qa_batch() -> Result<RecordBatch, ArrowError> {
    let n = QA_ROWS as usize;
    let mut question = StringBuilder::new();
    let mut subject = StringBuilder::new();
    let mut answer = StringBuilder::new();
    let mut output = StringBuilder::new();
    let mut label_gt = StringBuilder::new();
    let mut label_pred = StringBuilder::new();
    for id in 0..QA_ROWS {
        let mut rng = Rng::for_row(QA_SEED, id as u64);
        let edge = QA_EDGES.iter().find(|e| e.id == id);
        // Draw everything unconditionally so overrides never shift the stream.
        let subj = rng.pick(&["math", "history", "biology"]);
        let drawn_truth = rng.chance(500);
        let (a, b) = (rng.range(2, 60), rng.range(2, 60));
        let delta = rng.pick(&[-10i64, -2, -1, 1, 2, 10]);
        let fact_idx = rng.below(6) as usize;
        let model_correct = rng.chance(800);
        let gt = rng.chance(400);
        let pred_agrees = rng.chance(850);

        let truth = edge.and_then(|e| e.truth).unwrap_or(drawn_truth);
        let q = match subj {
            "math" => {
                let sum = (a + b) as i64;
                let c = if truth { sum } else { sum + delta };
                format!("Is {a} + {b} equal to {c}?")
            }
            "history" => {
                let facts = if truth { HISTORY_TRUE } else { HISTORY_FALSE };
                facts[fact_idx].to_string()
            }
            _ => {
                let facts = if truth { BIOLOGY_TRUE } else { BIOLOGY_FALSE };
                facts[fact_idx].to_string()
            }
        };
        question.append_value(q);
        subject.append_value(subj);
        answer.append_option((!QA_ANSWER_NULL.contains(&id)).then(|| yes_no(truth)));
        match edge {
            Some(e) => output.append_option(e.output),
            None => output.append_value(yes_no(truth == model_correct)),
        }
        label_gt.append_value(yes_no(gt));
        if QA_PRED_MAYBE.contains(&id) {
            label_pred.append_value("maybe");
        } else if QA_PRED_NULL.contains(&id) {
            label_pred.append_null();
        } else {
            label_pred.append_value(yes_no(gt == pred_agrees));
        }
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..QA_ROWS)),
        Arc::new(question.finish()),
        Arc::new(subject.finish()),
        Arc::new(answer.finish()),
        Arc::new(output.finish()),
        Arc::new(label_gt.finish()),
        Arc::new(label_pred.finish()),
    ];
    debug_assert!(cols.iter().all(|c| c.len() == n));
    RecordBatch::try_new(qa_schema(), cols)
}

/// Multiple-choice rows (`mcqa.parquet`).
pub fn mcqa_batch() -> Result<RecordBatch, ArrowError> {
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    let mut prompt = StringBuilder::new();
    let mut subject = StringBuilder::new();
    let mut answer = StringBuilder::new();
    let mut choices = ListBuilder::new(StringBuilder::new()).with_field(item);
    let mut choices_json = StringBuilder::new();
    let mut choices_py = StringBuilder::new();
    let mut output = StringBuilder::new();
    for id in 0..MCQA_ROWS {
        let mut rng = Rng::for_row(MCQA_SEED, id as u64);
        let edge = MCQA_EDGES.iter().find(|e| e.id == id);
        let subj = rng.pick(&["math", "history", "biology", "chemistry"]);
        let three = rng.chance(100);
        let drawn_answer = rng.below(if three { 3 } else { 4 }) as usize;
        let model_correct = rng.chance(700);
        let wrong_draw = rng.next_u64();

        let list: Option<&[&str]> = if MCQA_CHOICES_NULL.contains(&id) {
            None
        } else if let Some(e) = edge {
            Some(e.choices)
        } else {
            Some(if three { ABC } else { ABCD })
        };
        let ans_idx = match edge {
            Some(e) => ABCD.iter().position(|l| *l == e.answer).unwrap_or(0),
            None => drawn_answer,
        };

        // prompt
        let shown = list.unwrap_or(ABCD);
        let mut p = format!("Question {id} ({subj}): Which option best completes: the");
        for _ in 0..rng.range(4, 9) {
            p.push(' ');
            p.push_str(rng.pick(&WORDS));
        }
        p.push('?');
        for letter in shown {
            let _ = write!(p, "\n{letter}. {} {}", rng.pick(&WORDS), rng.pick(&WORDS));
        }
        p.push_str("\nAnswer:");
        prompt.append_value(p);
        subject.append_value(subj);
        answer.append_option((!MCQA_ANSWER_NULL.contains(&id)).then_some(ABCD[ans_idx]));
        match list {
            Some(l) => {
                for x in l {
                    choices.values().append_value(x);
                }
                choices.append(true);
                choices_json.append_value(format!("[\"{}\"]", l.join("\",\"")));
                choices_py.append_value(format!("['{}']", l.join("', '")));
            }
            None => {
                choices.append(false);
                choices_json.append_null();
                choices_py.append_null();
            }
        }
        match edge {
            Some(e) => output.append_option(e.output),
            None if model_correct => output.append_value(ABCD[ans_idx]),
            // a wrong letter, but always one of the row's own choices
            None => {
                let n = shown.len();
                let shift = 1 + (wrong_draw % (n as u64 - 1)) as usize;
                output.append_value(ABCD[(ans_idx + shift) % n]);
            }
        }
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..MCQA_ROWS)),
        Arc::new(prompt.finish()),
        Arc::new(subject.finish()),
        Arc::new(answer.finish()),
        Arc::new(choices.finish()),
        Arc::new(choices_json.finish()),
        Arc::new(choices_py.finish()),
        Arc::new(output.finish()),
    ];
    RecordBatch::try_new(mcqa_schema(), cols)
}

fn write_parquet(path: &Path, batch: &RecordBatch) -> Result<(), Box<dyn std::error::Error>> {
    let props = writer_props(ROW_GROUP_SIZE).build();
    let file = BufWriter::new(File::create(path)?);
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props))?;
    w.write(batch)?;
    let meta = w.close()?;
    eprintln!(
        "wrote {} rows in {} row groups to {}",
        meta.file_metadata().num_rows(),
        meta.num_row_groups(),
        path.display()
    );
    Ok(())
}

fn write_jsonl(path: &Path, batch: &RecordBatch) -> Result<(), Box<dyn std::error::Error>> {
    let file = BufWriter::new(File::create(path)?);
    let mut w = WriterBuilder::new()
        .with_explicit_nulls(true)
        .build::<_, LineDelimited>(file);
    w.write(batch)?;
    w.finish()?;
    eprintln!("wrote {} rows to {}", batch.num_rows(), path.display());
    Ok(())
}

/// `List<Utf8>`-style type name for the README.
pub fn type_name(dt: &DataType) -> String {
    match dt {
        DataType::List(f) => format!(
            "List<{}> (item field \"{}\")",
            type_name(f.data_type()),
            f.name()
        ),
        other => format!("{other:?}"),
    }
}

fn describe_columns(s: &Schema) -> String {
    let mut out = String::new();
    for f in s.fields() {
        let null = if f.is_nullable() {
            "nullable"
        } else {
            "not null"
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {null} |",
            f.name(),
            type_name(f.data_type())
        );
    }
    out
}

fn show(v: Option<&str>) -> String {
    match v {
        None => "null".to_string(),
        Some(s) => format!("`{s:?}`"),
    }
}

fn ids_where(n: usize, pred: impl Fn(usize) -> bool) -> String {
    let ids: Vec<String> = (0..n).filter(|&i| pred(i)).map(|i| i.to_string()).collect();
    if ids.is_empty() {
        "none".to_string()
    } else {
        ids.join(", ")
    }
}

fn col<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a StringArray, ArrowError> {
    b.column_by_name(name)
        .and_then(|c| c.as_string_opt::<i32>())
        .ok_or_else(|| ArrowError::SchemaError(format!("missing utf8 column {name}")))
}

fn opt(a: &StringArray, i: usize) -> Option<&str> {
    a.is_valid(i).then(|| a.value(i))
}

/// README text, with the edge-case lists read back from the generated batches.
fn readme(qa: &RecordBatch, mcqa: &RecordBatch) -> Result<String, ArrowError> {
    let mut r = String::new();
    let _ = writeln!(
        r,
        "# Example inputs\n\n\
         Generated by `evalscore-gen` (crate `crates/gen`); do not edit by hand. Regenerate with:\n\n\
         ```sh\n{REGEN_COMMAND}\n```\n\n\
         Generation is deterministic: rerunning gives byte-identical files. \
         Parquet files are zstd-compressed with row groups of {ROW_GROUP_SIZE} rows \
         (ids 0-99, 100-199, 200-299), `created_by = \"evalscore-gen\"`.\n"
    );

    // qa
    let q_ans = col(qa, "answer")?;
    let q_out = col(qa, "output")?;
    let q_pred = col(qa, "label_pred")?;
    let n = qa.num_rows();
    let _ = writeln!(
        r,
        "## `qa.parquet` — yes/no QA, {n} rows\n\n\
         `answer` is the ground truth, `output` the model output. `label_gt`/`label_pred` \
         are an independent yes/no classification pair. Ordinary rows have `output` exactly \
         \"yes\" or \"no\" (about 80% equal to `answer`).\n\n\
         | column | type | nullability |\n|---|---|---|\n{}",
        describe_columns(&qa.schema())
    );
    let _ = writeln!(
        r,
        "Edge cases in `output`:\n\n| id | output | answer | note |\n|---|---|---|---|"
    );
    for e in QA_EDGES {
        let i = e.id as usize;
        let _ = writeln!(
            r,
            "| {} | {} | {} | {} |",
            e.id,
            show(opt(q_out, i)),
            show(opt(q_ans, i)),
            e.note
        );
    }
    let _ = writeln!(
        r,
        "\nOther edge cases:\n\n\
         - `answer` null: ids {}\n\
         - `label_pred` = \"maybe\": ids {}\n\
         - `label_pred` null: ids {}\n",
        ids_where(n, |i| q_ans.is_null(i)),
        ids_where(n, |i| opt(q_pred, i) == Some("maybe")),
        ids_where(n, |i| q_pred.is_null(i)),
    );
    let _ = writeln!(
        r,
        "## `qa.jsonl` — the same {n} rows as `qa.parquet`\n\n\
         One JSON object per line, keys in column order, nulls written as JSON `null`, \
         non-ASCII written as raw UTF-8 (the newline in id 150 is escaped as `\\n`). \
         Scoring it must give the same result as `qa.parquet`.\n"
    );

    // mcqa
    let m_ans = col(mcqa, "answer")?;
    let m_out = col(mcqa, "output")?;
    let m_json = col(mcqa, "choices_json")?;
    let m_choices = mcqa
        .column_by_name("choices")
        .and_then(|c| c.as_list_opt::<i32>())
        .ok_or_else(|| ArrowError::SchemaError("missing list column choices".into()))?;
    let n = mcqa.num_rows();
    let _ = writeln!(
        r,
        "## `mcqa.parquet` — multiple choice, {n} rows\n\n\
         `answer` is the correct letter, `output` the model output (ordinary rows: a single \
         uppercase letter from the row's choices, about 70% correct). `choices`, `choices_json` (JSON array, e.g. \
         `[\"A\",\"B\",\"C\",\"D\"]`) and `choices_py` (Python literal, e.g. `['A', 'B', 'C', 'D']`) \
         hold the same list; all three are null on the same rows.\n\n\
         | column | type | nullability |\n|---|---|---|\n{}",
        describe_columns(&mcqa.schema())
    );
    let _ = writeln!(
        r,
        "Edge cases in `output`:\n\n| id | output | answer | choices | note |\n|---|---|---|---|---|"
    );
    for e in MCQA_EDGES {
        let i = e.id as usize;
        let _ = writeln!(
            r,
            "| {} | {} | {} | {} | {} |",
            e.id,
            show(opt(m_out, i)),
            show(opt(m_ans, i)),
            opt(m_json, i).unwrap_or("null"),
            e.note
        );
    }
    let _ = writeln!(
        r,
        "\nOther edge cases:\n\n\
         - `answer` null: ids {}\n\
         - `choices` / `choices_json` / `choices_py` null: ids {}\n\
         - `choices` = [\"A\",\"B\",\"C\"] (three choices): ids {}\n",
        ids_where(n, |i| m_ans.is_null(i)),
        ids_where(n, |i| m_choices.is_null(i)),
        ids_where(n, |i| m_choices.is_valid(i)
            && m_choices.value_length(i) == 3),
    );
    Ok(r)
}

pub fn run(out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(out)?;
    let qa = qa_batch()?;
    let mcqa = mcqa_batch()?;
    write_parquet(&out.join("qa.parquet"), &qa)?;
    write_jsonl(&out.join("qa.jsonl"), &qa)?;
    write_parquet(&out.join("mcqa.parquet"), &mcqa)?;
    crate::battles::write(out)?;
    let text = readme(&qa, &mcqa)? + &crate::battles::readme();
    std::fs::write(out.join("README.md"), text)?;
    eprintln!("wrote {}", out.join("README.md").display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_ids_disjoint_from_null_lists() {
        for e in QA_EDGES {
            assert!(!QA_ANSWER_NULL.contains(&e.id), "{}", e.id);
        }
        for e in MCQA_EDGES {
            assert!(!MCQA_ANSWER_NULL.contains(&e.id), "{}", e.id);
            assert!(!MCQA_CHOICES_NULL.contains(&e.id), "{}", e.id);
        }
    }

    #[test]
    fn deterministic() -> Result<(), ArrowError> {
        assert_eq!(qa_batch()?, qa_batch()?);
        assert_eq!(mcqa_batch()?, mcqa_batch()?);
        Ok(())
    }

    #[test]
    fn edge_values_present() -> Result<(), ArrowError> {
        let qa = qa_batch()?;
        let out = col(&qa, "output")?;
        assert!(out.is_null(3));
        assert_eq!(out.value(150), "yes\n");
        assert_eq!(out.value(299), "是");
        let m = mcqa_batch()?;
        let out = col(&m, "output")?;
        assert_eq!(out.value(199), "🙂 A");
        assert_eq!(col(&m, "choices_json")?.value(210), r#"["A","B","C"]"#);
        assert_eq!(col(&m, "choices_py")?.value(210), "['A', 'B', 'C']");
        assert!(col(&m, "choices_py")?.is_null(77));
        // id 210 is the only row whose single-letter output lies outside its choices.
        let json = col(&m, "choices_json")?;
        let outside: Vec<usize> = (0..m.num_rows())
            .filter(|&i| {
                let o = opt(out, i).unwrap_or("");
                o.len() == 1
                    && o.bytes().all(|c| c.is_ascii_uppercase())
                    && json.is_valid(i)
                    && !json.value(i).contains(&format!("\"{o}\""))
            })
            .collect();
        assert_eq!(outside, vec![210]);
        Ok(())
    }
}
