//! Check-family kernel micro-benchmarks: `match`/`includes`/`fuzzy_match` with a
//! per-row expected column and with literal needles, `exact` (with its details strings),
//! `pass_fail`, `regex`, normalized `string_equals`, `valid_json` and `check_injection`, over
//! Utf8, LargeUtf8 and Utf8View inputs, on one fixed-seed batch of 64k rows.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use evalscore_benches::{as_layout, batch, config, LAYOUTS, ROWS};
use evalscore_kernels::{
    check_injection, exact, match_check, pass_fail, regex_check, string_equals, valid_json, Batch,
    Expected, MatchMode, Needles, Normalizer, Step, TextColumn,
};

fn text(a: &arrow::array::ArrayRef) -> TextColumn<'_> {
    TextColumn::new(a.as_ref(), "bench").expect("text")
}

/// The scored batch: `a` as the value, without `normalize:`.
fn value(a: &arrow::array::ArrayRef) -> Batch<'_> {
    Batch::new(text(a), None, ROWS)
}

fn match_bench(c: &mut Criterion) {
    let b = batch(46, ROWS);
    let needles = Needles::new(["answer is", "B"], None);
    let mut g = c.benchmark_group("match_family");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, t) in LAYOUTS {
        let out = as_layout(&b.output, &t);
        let ans = as_layout(&b.answer, &t);
        for (mode, label) in [
            (MatchMode::Prefix, "match"),
            (MatchMode::Substring, "includes"),
            (MatchMode::Fuzzy, "fuzzy_match"),
        ] {
            g.bench_function(format!("{label}/per_row/{name}"), |bn| {
                bn.iter(|| {
                    match_check(
                        black_box(value(&out)),
                        Expected::PerRow(ans.as_ref()),
                        mode,
                        false,
                    )
                    .expect("kernel")
                })
            });
        }
        g.bench_function(format!("includes/literals/{name}"), |bn| {
            bn.iter(|| {
                match_check(
                    black_box(value(&out)),
                    Expected::Fixed(&needles),
                    MatchMode::Substring,
                    false,
                )
                .expect("kernel")
            })
        });
    }
    g.finish();
}

fn exact_family_bench(c: &mut Criterion) {
    let b = batch(47, ROWS);
    let norm = Normalizer::new(vec![Step::Strip, Step::IgnoreCase, Step::IgnorePunctuation]);
    let pattern =
        evalscore_kernels::pattern::SearchPattern::new(r"(?i)answer(?: is)?:?\s*\(?([A-D])\b")
            .expect("re");
    let mut g = c.benchmark_group("exact_family");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, t) in LAYOUTS {
        let out = as_layout(&b.output, &t);
        let ans = as_layout(&b.answer, &t);
        g.bench_function(format!("exact/{name}"), |bn| {
            bn.iter(|| exact(black_box(value(&out)), text(&ans)))
        });
        g.bench_function(format!("pass_fail/{name}"), |bn| {
            bn.iter(|| pass_fail(black_box(value(&out)), text(&ans)))
        });
        g.bench_function(format!("regex/{name}"), |bn| {
            bn.iter(|| regex_check(black_box(value(&out)), &pattern, None))
        });
        g.bench_function(format!("regex_capture_vs_truth/{name}"), |bn| {
            bn.iter(|| regex_check(black_box(value(&out)), &pattern, Some(text(&ans))))
        });
        g.bench_function(format!("string_equals_normalized/{name}"), |bn| {
            bn.iter(|| {
                string_equals(
                    black_box(Batch::new(text(&out), Some(&norm), ROWS)),
                    text(&ans),
                )
            })
        });
        g.bench_function(format!("valid_json/{name}"), |bn| {
            bn.iter(|| valid_json(black_box(value(&out)), None))
        });
        g.bench_function(format!("check_injection/{name}"), |bn| {
            bn.iter(|| check_injection(black_box(value(&out))))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = match_bench, exact_family_bench
}
criterion_main!(benches);
