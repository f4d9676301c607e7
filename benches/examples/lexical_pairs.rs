//! One graded measure over the first N pairs of a Parquet file (`output`, `reference`
//! columns), on one core: the time of the scoring loop alone (the engine's call,
//! `evalscore_kernels::graded`, over batches of 8,192 rows), printed in seconds; the scores
//! are written to OUT as little-endian f64. `scripts/bench/lexical_bench.py` runs it against
//! the reference libraries.
//!
//! ```sh
//! cargo run --release -p evalscore-benches --example lexical_pairs -- FILE MEASURE N OUT
//! ```
//!
//! MEASURE: `f1`, `rouge1`, `rouge2`, `rougeL`, `bleu`, `chrf` or `levenshtein`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use arrow::array::{Array, ArrayRef};
use arrow::compute::concat;
use evalscore_kernels::{graded, Batch, Expected, Lexical, RougeVariant, TextColumn};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use std::time::Instant;

const BATCH: usize = 8_192;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, file, measure, n, out] = &args[..] else {
        eprintln!("usage: lexical_pairs FILE MEASURE N OUT");
        std::process::exit(2);
    };
    let measure = match measure.as_str() {
        "f1" => Lexical::F1,
        "bleu" => Lexical::Bleu,
        "chrf" => Lexical::Chrf,
        "levenshtein" => Lexical::Levenshtein,
        v => Lexical::Rouge(RougeVariant::from_name(v).expect("a measure")),
    };
    let n: usize = n.parse().expect("a row count");
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).expect("the file"))
            .expect("a Parquet file");
    let fields = builder.schema().fields();
    let wanted: Vec<usize> = (0..fields.len())
        .filter(|&i| matches!(fields[i].name().as_str(), "output" | "reference"))
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
    let reader = builder
        .with_projection(mask)
        .with_limit(n)
        .build()
        .expect("reader");
    let (mut outputs, mut refs): (Vec<ArrayRef>, Vec<ArrayRef>) = (Vec::new(), Vec::new());
    for b in reader {
        let b = b.expect("a batch");
        outputs.push(b.column_by_name("output").expect("output").clone());
        refs.push(b.column_by_name("reference").expect("reference").clone());
    }
    let cat = |v: &[ArrayRef]| concat(&v.iter().map(|a| a.as_ref()).collect::<Vec<_>>()).unwrap();
    let (outputs, refs) = (cat(&outputs), cat(&refs));
    let rows = outputs.len();
    let mut scores = Vec::with_capacity(rows);
    let start = Instant::now();
    for at in (0..rows).step_by(BATCH) {
        let len = BATCH.min(rows - at);
        let (o, r) = (outputs.slice(at, len), refs.slice(at, len));
        let col = TextColumn::new(o.as_ref(), "output").expect("text");
        let got = graded(
            Batch::new(col, None, len),
            Expected::PerRow(r.as_ref()),
            measure,
            0.5,
        )
        .expect("kernel");
        scores.extend_from_slice(got.score.as_ref().expect("a graded score").values());
    }
    let secs = start.elapsed().as_secs_f64();
    let bytes: Vec<u8> = scores.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(out, bytes).expect("write the scores");
    println!("{secs:.6} {rows}");
}
