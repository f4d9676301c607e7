//! Metric-state micro-benchmarks: `MetricState::update` and `merge` for `mean`, `min`, `max`
//! and `std_dev` (0/1 scores), `frequency` (VALID/INVALID labels) and the classification
//! states (binary, multiclass, precision; answer vs first letter of the output), with text
//! inputs as Utf8, LargeUtf8 and Utf8View; one fixed-seed batch of 64k rows.

use arrow::array::Array;
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use evalscore_benches::{as_layout, batch, config, LAYOUTS, ROWS};
use evalscore_metrics::{ClassMode, Confusion, Extremum, Frequency, Mean, MetricState, StdDev};

fn mean_bench(c: &mut Criterion) {
    let b = batch(44, ROWS);
    let mut g = c.benchmark_group("mean");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("update/f64", |bn| {
        let mut s = MetricState::new(Mean::new(0.95));
        bn.iter(|| {
            s.update(&[black_box(&b.scores as &dyn Array)])
                .expect("update")
        })
    });
    let mut other = MetricState::new(Mean::new(0.95));
    other.update(&[&b.scores as &dyn Array]).expect("update");
    // A merge is one operation, whatever the rows behind the state.
    g.throughput(Throughput::Elements(1));
    g.bench_function("merge", |bn| {
        let mut s = MetricState::new(Mean::new(0.95));
        bn.iter(|| s.merge(black_box(&other)).expect("merge"))
    });
    g.finish();
}

fn numeric_bench(c: &mut Criterion) {
    let b = batch(48, ROWS);
    let mut g = c.benchmark_group("numeric");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, kind) in [
        ("min", MetricState::new(Extremum::min())),
        ("max", MetricState::new(Extremum::max())),
        ("std_dev", MetricState::new(StdDev::default())),
    ] {
        g.bench_function(format!("{name}/update/f64"), |bn| {
            let mut s = kind.clone();
            bn.iter(|| {
                s.update(&[black_box(&b.scores as &dyn Array)])
                    .expect("update")
            })
        });
    }
    g.finish();
}

fn classification_bench(c: &mut Criterion) {
    let b = batch(49, ROWS);
    // Predictions: the first letter of each output (null when the output is null or empty).
    let pred: arrow::array::StringArray = b
        .output
        .iter()
        .map(|o| o.and_then(|s| s.get(..1)))
        .collect();
    let binary = MetricState::new(Confusion::new(
        ClassMode::Binary,
        Some("A".into()),
        Some("B".into()),
        None,
        0.95,
    ));
    let multiclass = MetricState::new(Confusion::new(
        ClassMode::Multiclass,
        None,
        None,
        None,
        0.95,
    ));
    let precision = MetricState::new(Confusion::new(
        ClassMode::Precision,
        Some("A".into()),
        None,
        None,
        0.95,
    ));
    let mut g = c.benchmark_group("classification");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, t) in LAYOUTS {
        let gt = as_layout(&b.answer, &t);
        let pr = as_layout(&pred, &t);
        for (label, kind) in [
            ("binary", &binary),
            ("multiclass", &multiclass),
            ("precision_any_negative", &precision),
        ] {
            g.bench_function(format!("{label}/update/{name}"), |bn| {
                let mut s = kind.clone();
                bn.iter(|| {
                    s.update(&[black_box(gt.as_ref() as &dyn Array), pr.as_ref()])
                        .expect("update")
                })
            });
        }
    }
    let mut other = multiclass.clone();
    other
        .update(&[&b.answer as &dyn Array, &pred as &dyn Array])
        .expect("update");
    g.throughput(Throughput::Elements(1));
    g.bench_function("multiclass/merge", |bn| {
        bn.iter_batched(
            || multiclass.clone(),
            |mut s| {
                s.merge(black_box(&other)).expect("merge");
                s
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn frequency_bench(c: &mut Criterion) {
    let b = batch(45, ROWS);
    let mut g = c.benchmark_group("frequency");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, t) in LAYOUTS {
        let labels = as_layout(&b.validity, &t);
        g.bench_function(format!("update/{name}"), |bn| {
            let mut s = MetricState::new(Frequency::default());
            bn.iter(|| {
                s.update(&[black_box(labels.as_ref() as &dyn Array)])
                    .expect("update")
            })
        });
    }
    // Merging a state with a few distinct labels (the usual case) into a fresh one.
    let mut other = MetricState::new(Frequency::default());
    other.update(&[&b.validity as &dyn Array]).expect("update");
    other.update(&[&b.answer as &dyn Array]).expect("update");
    g.throughput(Throughput::Elements(1));
    g.bench_function("merge", |bn| {
        bn.iter_batched(
            || MetricState::new(Frequency::default()),
            |mut s| {
                s.merge(black_box(&other)).expect("merge");
                s
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = mean_bench, numeric_bench, frequency_bench, classification_bench
}
criterion_main!(benches);
