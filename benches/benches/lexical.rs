//! Graded and newer check kernels: `f1`, `rouge` (1, 2, L), `bleu`, `chrf`, `levenshtein`
//! on sentence pairs (a 6-18 word answer against a reference sharing part of its words), and
//! `numeric_match`, `includes_all`, `not_regex`, `contains_json` on short answers; each over
//! Utf8, LargeUtf8 and Utf8View values, on fixed-seed batches.

use arrow::array::{ArrayRef, StringArray};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use evalscore_benches::{as_layout, config, Rng, LAYOUTS};
use evalscore_kernels::{
    contains_json, graded, includes_all, not_regex, numeric_match, Batch, Expected, Lexical,
    Needles, RougeVariant, TextColumn, Tolerance,
};

/// Rows of the sentence batches (the lexical measures cost microseconds per row).
const SENTENCE_ROWS: usize = 8_192;

const VOCAB: [&str; 24] = [
    "the",
    "model",
    "answer",
    "is",
    "Paris",
    "capital",
    "of",
    "France",
    "because",
    "energy",
    "increases",
    "when",
    "temperature",
    "rises,",
    "so",
    "42",
    "units",
    "are",
    "needed.",
    "café",
    "naïve",
    "東京",
    "and",
    "therefore",
];

/// (prediction, reference) sentence columns.
fn sentences(seed: u64, rows: usize) -> (StringArray, StringArray) {
    let mut rng = Rng::new(seed);
    let mut preds = Vec::with_capacity(rows);
    let mut refs = Vec::with_capacity(rows);
    for _ in 0..rows {
        let n = 6 + rng.below(13) as usize;
        let words: Vec<&str> = (0..n)
            .map(|_| VOCAB[rng.below(VOCAB.len() as u64) as usize])
            .collect();
        let mut reference: Vec<&str> = words
            .iter()
            .copied()
            .filter(|_| rng.below(10) < 7)
            .collect();
        for _ in 0..rng.below(4) {
            reference.push(VOCAB[rng.below(VOCAB.len() as u64) as usize]);
        }
        preds.push(words.join(" "));
        refs.push(reference.join(" "));
    }
    (StringArray::from(preds), StringArray::from(refs))
}

fn text(a: &ArrayRef) -> TextColumn<'_> {
    TextColumn::new(a.as_ref(), "bench").expect("text")
}

fn graded_bench(c: &mut Criterion) {
    let (preds, refs) = sentences(48, SENTENCE_ROWS);
    let mut g = c.benchmark_group("graded");
    g.throughput(Throughput::Elements(SENTENCE_ROWS as u64));
    for (name, t) in LAYOUTS {
        let p = as_layout(&preds, &t);
        let r = as_layout(&refs, &t);
        for (label, m) in [
            ("f1", Lexical::F1),
            ("rouge1", Lexical::Rouge(RougeVariant::Rouge1)),
            ("rouge2", Lexical::Rouge(RougeVariant::Rouge2)),
            ("rougeL", Lexical::Rouge(RougeVariant::RougeL)),
            ("bleu", Lexical::Bleu),
            ("chrf", Lexical::Chrf),
            ("levenshtein", Lexical::Levenshtein),
        ] {
            g.bench_function(format!("{label}/{name}"), |bn| {
                bn.iter(|| {
                    graded(
                        black_box(Batch::new(text(&p), None, SENTENCE_ROWS)),
                        Expected::PerRow(r.as_ref()),
                        m,
                        0.5,
                    )
                    .expect("kernel")
                })
            });
        }
    }
    g.finish();
}

/// Rows of the short-answer batch.
const ROWS: usize = 65_536;

fn checks_bench(c: &mut Criterion) {
    let mut rng = Rng::new(49);
    let mut out = Vec::with_capacity(ROWS);
    let mut want = Vec::with_capacity(ROWS);
    for _ in 0..ROWS {
        let n = rng.below(2000);
        out.push(match rng.below(4) {
            0 => format!("The answer is {n}."),
            1 => format!("{{\"answer\": {n}, \"unit\": \"kg\"}}"),
            2 => format!("Sorry, I think it is ${},{:03}", n / 100, n % 1000),
            _ => format!("{n}"),
        });
        want.push(format!("{}", if rng.below(3) == 0 { n + 1 } else { n }));
    }
    let out = StringArray::from(out);
    let want = StringArray::from(want);
    let pattern = evalscore_kernels::pattern::SearchPattern::new(r"(?i)\bsorry\b").expect("re");
    let needles = Needles::new(["answer", "is"], None);
    let mut g = c.benchmark_group("more_checks");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, t) in LAYOUTS {
        let o = as_layout(&out, &t);
        let w = as_layout(&want, &t);
        g.bench_function(format!("numeric_match/{name}"), |bn| {
            bn.iter(|| {
                numeric_match(
                    black_box(Batch::new(text(&o), None, ROWS)),
                    text(&w),
                    Tolerance::default(),
                )
                .expect("kernel")
            })
        });
        g.bench_function(format!("includes_all/{name}"), |bn| {
            bn.iter(|| {
                includes_all(
                    black_box(Batch::new(text(&o), None, ROWS)),
                    Expected::Fixed(&needles),
                )
                .expect("kernel")
            })
        });
        g.bench_function(format!("not_regex/{name}"), |bn| {
            bn.iter(|| not_regex(black_box(Batch::new(text(&o), None, ROWS)), &pattern))
        });
        g.bench_function(format!("contains_json/{name}"), |bn| {
            bn.iter(|| contains_json(black_box(Batch::new(text(&o), None, ROWS)), None))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = graded_bench, checks_bench
}
criterion_main!(benches);
