//! Kernel micro-benchmarks: `string_equals` and `string_equals_mcqa` over Utf8, LargeUtf8 and
//! Utf8View inputs (and a dictionary ground truth), on one fixed-seed batch of 64k rows.

use arrow::array::{ArrayRef, DictionaryArray};
use arrow::datatypes::Int32Type;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use evalscore_benches::{as_layout, batch, config, LAYOUTS, ROWS};
use evalscore_kernels::{string_equals, string_equals_mcqa, to_text, Batch, Choices, TextColumn};
use std::sync::Arc;

fn text(a: &ArrayRef) -> TextColumn<'_> {
    TextColumn::new(a.as_ref(), "bench").expect("text")
}

fn string_equals_bench(c: &mut Criterion) {
    let b = batch(42, ROWS);
    let mut g = c.benchmark_group("string_equals");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, t) in LAYOUTS {
        let out = as_layout(&b.output, &t);
        let ans = as_layout(&b.answer, &t);
        g.bench_function(format!("column_vs_column/{name}"), |bn| {
            bn.iter(|| {
                string_equals(black_box(Batch::new(text(&out), None, ROWS)), text(&ans))
                    .expect("kernel")
            })
        });
        g.bench_function(format!("column_vs_literal/{name}"), |bn| {
            bn.iter(|| {
                let lit = TextColumn::scalar(Some("B"));
                string_equals(black_box(Batch::new(text(&out), None, ROWS)), lit).expect("kernel")
            })
        });
    }
    // A dictionary-encoded ground truth (how parquet's `answer` column may arrive).
    let dict: DictionaryArray<Int32Type> = b.answer.iter().collect();
    g.bench_function("column_vs_dictionary/utf8", |bn| {
        bn.iter(|| {
            let output: ArrayRef = Arc::new(b.output.clone());
            let dict = to_text(&(Arc::new(dict.clone()) as ArrayRef), "bench").expect("text");
            string_equals(
                black_box(Batch::new(text(&output), None, ROWS)),
                text(&dict),
            )
            .expect("kernel")
        })
    });
    g.finish();
}

fn mcqa_bench(c: &mut Criterion) {
    let b = batch(43, ROWS);
    let fixed: Vec<String> = ["A", "B", "C", "D"].iter().map(|s| s.to_string()).collect();
    let mut g = c.benchmark_group("string_equals_mcqa");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, t) in LAYOUTS {
        let out = as_layout(&b.output, &t);
        let ans = as_layout(&b.answer, &t);
        let (o, a) = (
            TextColumn::new(out.as_ref(), "output").expect("text"),
            TextColumn::new(ans.as_ref(), "answer").expect("text"),
        );
        g.bench_function(format!("list_choices/{name}"), |bn| {
            bn.iter(|| {
                string_equals_mcqa(
                    black_box(o),
                    black_box(a),
                    Choices::PerRow(&b.choices),
                    ROWS,
                )
                .expect("kernel")
            })
        });
        g.bench_function(format!("fixed_choices/{name}"), |bn| {
            bn.iter(|| {
                string_equals_mcqa(black_box(o), black_box(a), Choices::Fixed(&fixed), ROWS)
                    .expect("kernel")
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = string_equals_bench, mcqa_bench
}
criterion_main!(benches);
