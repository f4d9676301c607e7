//! The columns of the synthetic files and the row pieces both profiles share (`synthetic`
//! writes the default rows, `export` the export-shaped ones).

use std::fmt::Write as _;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Builder, ListBuilder, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use crate::rng::{Rng, WORDS};

pub(crate) const LETTERS: [&str; 5] = ["A", "B", "C", "D", "E"];
pub(crate) const LOWER: [&str; 5] = ["a", "b", "c", "d", "e"];

pub fn schema() -> SchemaRef {
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("prompt", DataType::Utf8, true),
        Field::new("output", DataType::Utf8, true),
        Field::new("answer", DataType::Utf8, true),
        Field::new("choices", DataType::List(item), true),
        Field::new("choices_json", DataType::Utf8, true),
        Field::new("label_gt", DataType::Utf8, true),
        Field::new("label_pred", DataType::Utf8, true),
    ]))
}

/// Column builders for one batch.
pub(crate) struct Builders {
    pub(crate) id: Int64Builder,
    pub(crate) prompt: StringBuilder,
    pub(crate) output: StringBuilder,
    pub(crate) answer: StringBuilder,
    pub(crate) choices: ListBuilder<StringBuilder>,
    pub(crate) choices_json: StringBuilder,
    pub(crate) label_gt: StringBuilder,
    pub(crate) label_pred: StringBuilder,
}

impl Builders {
    pub(crate) fn new(rows: usize) -> Self {
        let item = Arc::new(Field::new("item", DataType::Utf8, true));
        Builders {
            id: Int64Builder::with_capacity(rows),
            prompt: StringBuilder::with_capacity(rows, rows * 420),
            output: StringBuilder::with_capacity(rows, rows * 8),
            answer: StringBuilder::with_capacity(rows, rows),
            choices: ListBuilder::with_capacity(
                StringBuilder::with_capacity(rows * 4, rows * 4),
                rows,
            )
            .with_field(item),
            choices_json: StringBuilder::with_capacity(rows, rows * 17),
            label_gt: StringBuilder::with_capacity(rows, rows * 3),
            label_pred: StringBuilder::with_capacity(rows, rows * 3),
        }
    }

    pub(crate) fn finish(mut self, schema: SchemaRef) -> Result<RecordBatch, ArrowError> {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(self.id.finish()),
            Arc::new(self.prompt.finish()),
            Arc::new(self.output.finish()),
            Arc::new(self.answer.finish()),
            Arc::new(self.choices.finish()),
            Arc::new(self.choices_json.finish()),
            Arc::new(self.label_gt.finish()),
            Arc::new(self.label_pred.finish()),
        ];
        RecordBatch::try_new(schema, cols)
    }
}

/// Appends at least one space-separated word, until the pending value of `b`
/// (which started at byte offset `row_start`) is at least `target` bytes long.
pub(crate) fn append_words(b: &mut StringBuilder, rng: &mut Rng, row_start: usize, target: usize) {
    let mut first = true;
    while first || b.values_slice().len() - row_start < target {
        if !first {
            b.push_str(" ");
        }
        b.push_str(rng.pick(&WORDS));
        first = false;
    }
}

/// Small extension so the builder can be used like a `String`.
pub(crate) trait PushStr {
    fn push_str(&mut self, s: &str);
}

impl PushStr for StringBuilder {
    fn push_str(&mut self, s: &str) {
        // `fmt::Write` on the builder never fails.
        let _ = self.write_str(s);
    }
}

/// Appends a multiple-choice prompt with `n_choices` options:
/// "Question 17: <stem>? A. <opt> B. <opt> C. <opt> D. <opt> Answer:".
/// Total length is 200..=~600 bytes: cumulative byte goals for the stem (2/5)
/// and the options (3/5 shared), then the 8-byte " Answer:" suffix.
pub(crate) fn mcqa_prompt(p: &mut StringBuilder, rng: &mut Rng, id: u64, n_choices: usize) {
    let body = rng.range(200, 585) as usize - 8;
    let row_start = p.values_slice().len();
    let _ = write!(p, "Question {id}: ");
    let mut goal = body * 2 / 5;
    append_words(p, rng, row_start, goal);
    p.push_str("?");
    for (i, letter) in LETTERS[..n_choices].iter().enumerate() {
        goal = body - body * 3 * (n_choices - 1 - i) / (5 * n_choices);
        p.push_str(" ");
        p.push_str(letter);
        p.push_str(". ");
        append_words(p, rng, row_start, goal);
    }
    p.append_value(" Answer:");
}

/// Appends the ground-truth letter (null when `answer` is) and the first `n_choices` (3 to 5)
/// letters as the row's `choices` list and as its JSON text.
pub(crate) fn mcqa_answer_and_choices(b: &mut Builders, answer: Option<usize>, n_choices: usize) {
    const JSON: [&str; 3] = [
        r#"["A","B","C"]"#,
        r#"["A","B","C","D"]"#,
        r#"["A","B","C","D","E"]"#,
    ];
    b.answer.append_option(answer.map(|a| LETTERS[a]));
    for letter in &LETTERS[..n_choices] {
        b.choices.values().append_value(letter);
    }
    b.choices.append(true);
    b.choices_json.append_value(JSON[n_choices - 3]);
}
