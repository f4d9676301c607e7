//! Metric-state micro-benchmarks: `MetricState::update` and `merge` for `mean` (with and
//! without a Poisson bootstrap), `min`, `max` and `std_dev` (0/1 scores), `frequency`
//! (VALID/INVALID labels) and the classification states (binary, multiclass, precision;
//! answer vs first letter of the output), with text inputs as Utf8, LargeUtf8 and Utf8View;
//! the pairwise (with the length-controlled win rate), agreement, ranking and code metrics
//! (`judging`); one fixed-seed batch of 64k rows.

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
    // The Poisson bootstrap: every row's weights in each replicate, from its key.
    let keys = arrow::array::Int64Array::from_iter_values(0..ROWS as i64);
    for replicates in [100, 1000] {
        use evalscore_metrics::bootstrap::Bootstrap;
        use evalscore_metrics::types::mean::MeanMetric;
        use evalscore_metrics::{Kind, Setup};
        let boot = Some(Bootstrap {
            replicates,
            seed: 0,
        });
        let state = MeanMetric.state(&boot, &Setup { confidence: 0.95 });
        g.bench_function(format!("update/bootstrap-{replicates}"), |bn| {
            let mut s = MetricState::new(state.clone());
            bn.iter(|| {
                s.update(&[black_box(&b.scores as &dyn Array), &keys])
                    .expect("update")
            })
        });
    }
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

/// The pairwise, agreement, ranking and code metrics: verdicts and label pairs from the
/// batch's text columns, scores and truths from its 0/1 scores and a derived probability.
fn judging_bench(c: &mut Criterion) {
    use evalscore_metrics::types::agreement::{
        AgreementOptions, Weights, COHEN_KAPPA, KRIPPENDORFF, MATTHEWS,
    };
    use evalscore_metrics::types::bradley_terry::{BradleyTerryMetric, BtOptions};
    use evalscore_metrics::types::correlation::{KendallMetric, PearsonMetric, SpearmanMetric};
    use evalscore_metrics::types::length_controlled::{LcOptions, LengthControlledMetric};
    use evalscore_metrics::types::pass_at_k::{Ks, PassAtKMetric};
    use evalscore_metrics::types::ranking::{
        RankingOptions, AVERAGE_PRECISION, BRIER, CALIBRATION, ROC_AUC,
    };
    use evalscore_metrics::types::win_rate::{Verdicts, WinRateMetric, WinRateOptions};
    use evalscore_metrics::{Kind, NoOptions, Setup};
    let b = batch(50, ROWS);
    let setup = Setup { confidence: 0.95 };
    // Verdicts A, B, tie from the first letter of the output; models from the answer.
    let verdict: arrow::array::StringArray = b
        .output
        .iter()
        .map(|o| {
            o.and_then(|s| s.get(..1)).map(|l| match l {
                "A" => "A",
                "B" => "B",
                _ => "tie",
            })
        })
        .collect();
    let model_b: arrow::array::StringArray = b
        .answer
        .iter()
        .map(|a| a.map(|a| if a == "A" { "B" } else { "A" }))
        .collect();
    // A probability with 1,000 distinct values, from the row's position and score.
    let prob: arrow::array::Float64Array = b
        .scores
        .iter()
        .enumerate()
        .map(|(i, s)| s.map(|s| (0.5 * s + (i % 500) as f64 / 1000.0).min(1.0)))
        .collect();
    let agreement = AgreementOptions {
        labels: None,
        weights: Weights::None,
    };
    let ranking = RankingOptions { bins: 10 };
    let states: Vec<(&str, MetricState, Vec<&dyn Array>)> = vec![
        (
            "win_rate",
            MetricState::new(WinRateMetric.state(&WinRateOptions::default(), &setup)),
            vec![&verdict],
        ),
        (
            "cohen_kappa",
            MetricState::new(COHEN_KAPPA.state(&agreement, &setup)),
            vec![&b.answer, &verdict],
        ),
        (
            "matthews_corrcoef",
            MetricState::new(MATTHEWS.state(&agreement, &setup)),
            vec![&b.answer, &verdict],
        ),
        (
            "krippendorff_alpha",
            MetricState::new(KRIPPENDORFF.state(&agreement, &setup)),
            vec![&b.answer, &verdict],
        ),
        (
            "pearson",
            MetricState::new(PearsonMetric.state(&NoOptions, &setup)),
            vec![&prob, &b.scores],
        ),
        (
            "spearman",
            MetricState::new(SpearmanMetric.state(&NoOptions, &setup)),
            vec![&prob, &b.scores],
        ),
        (
            "kendall_tau",
            MetricState::new(KendallMetric.state(&NoOptions, &setup)),
            vec![&prob, &b.scores],
        ),
        (
            "roc_auc",
            MetricState::new(ROC_AUC.state(&ranking, &setup)),
            vec![&prob, &b.scores],
        ),
        (
            "average_precision",
            MetricState::new(AVERAGE_PRECISION.state(&ranking, &setup)),
            vec![&prob, &b.scores],
        ),
        (
            "brier_score",
            MetricState::new(BRIER.state(&ranking, &setup)),
            vec![&prob, &b.scores],
        ),
        (
            "expected_calibration_error",
            MetricState::new(CALIBRATION.state(&ranking, &setup)),
            vec![&prob, &b.scores],
        ),
        (
            "pass_at_k",
            MetricState::new(PassAtKMetric.state(&Ks(vec![1, 10]), &setup)),
            vec![&b.scores, &b.answer],
        ),
        (
            "bradley_terry",
            MetricState::new(BradleyTerryMetric.state(
                &BtOptions {
                    verdicts: Verdicts::default(),
                    replicates: 0,
                    seed: 0,
                },
                &setup,
            )),
            vec![&verdict, &b.answer, &model_b],
        ),
    ];
    let mut g = c.benchmark_group("judging");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, state, inputs) in &states {
        g.bench_function(format!("{name}/update"), |bn| {
            let mut s = state.clone();
            bn.iter(|| s.update(black_box(inputs)).expect("update"))
        });
    }
    // It keeps every row, up to its limit: each fold starts from an empty state. The answers
    // are the output (A) and the answer letter (B), the difficulty the probability.
    let lc = MetricState::new(LengthControlledMetric.state(
        &LcOptions {
            verdicts: Verdicts::default(),
            difficulty: true,
        },
        &setup,
    ));
    let lc_inputs: Vec<&dyn Array> = vec![&verdict, &b.output, &b.answer, &prob];
    g.bench_function("length_controlled_win_rate/update", |bn| {
        bn.iter_batched(
            || lc.clone(),
            |mut s| {
                s.update(black_box(&lc_inputs)).expect("update");
                s
            },
            BatchSize::SmallInput,
        )
    });
    // Its fit at finish: the cross-validation over the batch's distinct rows.
    let mut full = lc.clone();
    full.update(&lc_inputs).expect("update");
    g.bench_function("length_controlled_win_rate/finish", |bn| {
        bn.iter(|| black_box(&full).finish())
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = mean_bench, numeric_bench, frequency_bench, classification_bench, judging_bench
}
criterion_main!(benches);
