//! `length_controlled_win_rate`: AlpacaEval 2's length-controlled win rate, as the
//! `alpaca-eval` package's `get_length_controlled_winrate` computes it with its GLM
//! `length_controlled_noreg` (a per-row instruction difficulty given) or
//! `length_controlled_minimal` (none given).
//!
//! Answer A is the evaluated model (AlpacaEval's `output_2`), B the baseline (`output_1`).
//! Each verdict scores A 1, 0.5 (a tie) or 0, the soft label of a logistic regression on
//! `tanh((len(B) - len(A)) / sd)` (lengths in Unicode code points, `sd` the sample standard
//! deviation of that difference over the rows), the difficulty when given, and an intercept,
//! fitted with an L1 penalty whose `C` is chosen by cross-validation ([`crate::glm`]). The
//! length-controlled win rate is the mean over the rows of the fitted probability that A
//! wins with the length term at 0, and `stderr` its standard error of the mean.
//!
//! The state keeps every included row (its score, length difference and difficulty), at
//! most [`MAX_ROWS`], so it merges by concatenation; the rows are sorted before the fit, so
//! the figures do not depend on how they were split into batches. A row whose verdict is
//! null or none of the three labels, or whose answers or difficulty is null (or NaN), is
//! left out and counted as `excluded`.

use crate::accumulator::{first, State};
use crate::dropped::{self, Dropped};
use crate::glm::{fit_cv, fold_of, sigmoid, Row, FEATURES, FOLDS};
use crate::metric_type::{About, Kind, OptionDoc, ParseCx, Setup};
use crate::types::win_rate::{parse_verdicts, Verdicts};
use crate::{Figure, MetricError};
use arrow::array::Array;
use evalscore_task::{MetricReads, TaskError};
use evalscore_text::TextColumn;

/// Most rows a `length_controlled_win_rate` state holds (per group).
pub const MAX_ROWS: usize = 1_000_000;

/// The `length_controlled_win_rate` metric type.
pub struct LengthControlledMetric;

/// Its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LcOptions {
    pub verdicts: Verdicts,
    /// Whether the metric reads a difficulty per row (its fourth input).
    pub difficulty: bool,
}

static ABOUT: About = About {
    name: "length_controlled_win_rate",
    doc: "AlpacaEval 2's length-controlled win rate of answer A (the evaluated model, AlpacaEval's `output_2`) over answer B (the baseline, `output_1`), as the `alpaca-eval` package's `get_length_controlled_winrate` computes it, agreeing with it to 5e-3 percentage points as measured on the golden cases (the package's liblinear stops at a tolerance of 1e-4 where evalscore fits to the optimum, and its cross-validation folds follow row order, where evalscore sorts the rows first; docs/metrics.md says how far each goes): a logistic regression of the verdicts (`field`: `A`, `B` or `tie`, a tie half a win) on the answers' length difference in code points (`output_a`, `output_b`), the instruction's `difficulty` when given (the package's GLM `length_controlled_noreg`, else `length_controlled_minimal`) and an intercept, L1-penalized with `C` chosen by 5-fold cross-validation; `value` is its mean predicted win rate with no length difference, a fraction from 0 to 1 (AlpacaEval prints it times 100). The package's default `length_controlled_v1`, which also regularizes toward gamed baselines from its Hugging Face dataset, is not reproduced. Verdicts that are null or none of the three labels, and rows with a null answer or difficulty, are left out and counted as `excluded`. At most 1,000,000 rows.",
    reads: MetricReads::Lengths,
    options: &[
        OptionDoc::optional(
            "difficulty",
            "the instruction's difficulty, a number per row (a column or a template); without it, the GLM has no difficulty term",
        ),
        OptionDoc::optional(
            "labels",
            "the verdicts' labels, `{a: ..., b: ..., tie: ...}` (default `A`, `B`, `tie`)",
        ),
    ],
    example: "{type: length_controlled_win_rate, field: value, output_a: \"{{ sample.output_a }}\", output_b: \"{{ sample.output_b }}\"}",
    figures: "`value`, `stderr` (the length-controlled win rate and its standard error), `win_rate`, `win_rate_stderr` (the raw ones), `weight_length`, `weight_difficulty`, `weight_intercept` (the fitted coefficients), `c` (the chosen `C`), `wins`, `ties`, `losses`, `excluded`",
    confusion: false,
};

impl Kind for LengthControlledMetric {
    type Options = LcOptions;
    type State = LengthRows;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<LcOptions, TaskError> {
        Ok(LcOptions {
            verdicts: parse_verdicts(cx)?,
            difficulty: cx.get("difficulty").is_some(),
        })
    }

    fn state(&self, options: &LcOptions, _setup: &Setup) -> LengthRows {
        LengthRows {
            verdicts: options.verdicts.clone(),
            with_difficulty: options.difficulty,
            scores: Vec::new(),
            deltas: Vec::new(),
            difficulty: Vec::new(),
            dropped: Dropped::default(),
        }
    }
}

/// The state of a `length_controlled_win_rate`: every included row.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LengthRows {
    verdicts: Verdicts,
    with_difficulty: bool,
    /// Per row, A's score in halves: 2 a win, 1 a tie, 0 a loss.
    scores: Vec<u8>,
    /// Per row, B's length minus A's, in code points (the package's output_1 minus output_2).
    deltas: Vec<i64>,
    /// Per row, the difficulty (empty without one).
    difficulty: Vec<f64>,
    dropped: Dropped,
}

impl State for LengthRows {
    fn reads(&self) -> MetricReads {
        MetricReads::Lengths
    }

    fn metric_type(&self) -> &'static str {
        ABOUT.name
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let verdict = first(inputs)?;
        let needs = if self.with_difficulty { 4 } else { 3 };
        if inputs.len() < needs {
            return Err(MetricError::Invalid(format!(
                "`{}` needs output_a and output_b{}",
                ABOUT.name,
                if self.with_difficulty {
                    " and difficulty"
                } else {
                    ""
                }
            )));
        }
        let difficulty = match self.with_difficulty {
            true => Some(crate::numbers(inputs[3]).map_err(|_| {
                MetricError::Invalid(format!(
                    "the difficulty of `{}` must be numbers, got values of type {}",
                    ABOUT.name,
                    inputs[3].data_type()
                ))
            })?),
            false => None,
        };
        let verdict = crate::values::per_row(verdict)?;
        let (v, a, b) = (
            crate::values::column(&verdict)?,
            TextColumn::new(inputs[1], "answers")?,
            TextColumn::new(inputs[2], "answers")?,
        );
        let labels = &self.verdicts;
        for i in 0..verdict.len() {
            let Some(score) = labels.halves(v.get(i)) else {
                labels.drop_verdict(v.get(i), &mut self.dropped);
                continue;
            };
            let (Some(a), Some(b)) = (a.get(i), b.get(i)) else {
                self.dropped.add(dropped::NULL, 1);
                continue;
            };
            if let Some(d) = &difficulty {
                let Some(d) = d.is_valid(i).then(|| d.value(i)) else {
                    self.dropped.add(dropped::NULL, 1);
                    continue;
                };
                if d.is_nan() {
                    self.dropped.add(dropped::NAN, 1);
                    continue;
                }
                self.difficulty.push(d);
            }
            self.scores.push(score);
            self.deltas
                .push(b.chars().count() as i64 - a.chars().count() as i64);
        }
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        self.scores.extend_from_slice(&other.scores);
        self.deltas.extend_from_slice(&other.deltas);
        self.difficulty.extend_from_slice(&other.difficulty);
        self.dropped.merge(&other.dropped);
    }

    fn exclusion_warning(&self) -> Option<String> {
        let rows = self.scores.len() as u64 + self.dropped.total();
        self.dropped.warning(rows, Some(&self.verdicts.expected()))
    }

    fn check_size(&self) -> Result<(), MetricError> {
        if self.scores.len() > MAX_ROWS {
            return Err(MetricError::Invalid(format!(
                "`{}` has more than {MAX_ROWS} rows, its limit",
                ABOUT.name
            )));
        }
        Ok(())
    }

    fn figures(&self) -> Vec<Figure> {
        let n = self.scores.len();
        let count = |k: u8| self.scores.iter().filter(|s| **s == k).count() as u64;
        let (wins, ties, losses) = (count(2), count(1), count(0));
        let raw = crate::Moments::of_counts(&[(1.0, wins), (0.5, ties), (0.0, losses)]);
        let lc = self.fit();
        let n64 = n as u64;
        let fig = |stat: &str, v: Option<f64>| Figure::new(stat, None, v, n64);
        let weight = |j: usize| lc.as_ref().map(|l| l.w[j]);
        vec![
            fig("value", lc.as_ref().map(|l| l.value)),
            fig("stderr", lc.as_ref().and_then(|l| l.stderr)),
            fig("win_rate", raw.mean()),
            fig(
                "win_rate_stderr",
                raw.std_dev().map(|s| s / (n as f64).sqrt()),
            ),
            fig("weight_length", weight(0)),
            fig(
                "weight_difficulty",
                weight(1).filter(|_| self.with_difficulty),
            ),
            fig("weight_intercept", weight(2)),
            fig("c", lc.as_ref().map(|l| l.c)),
            fig("wins", Some(wins as f64)),
            fig("ties", Some(ties as f64)),
            fig("losses", Some(losses as f64)),
            fig("excluded", Some(self.dropped.total() as f64)),
        ]
    }
}

/// The fitted model and the win rate it predicts.
struct Lc {
    value: f64,
    stderr: Option<f64>,
    w: [f64; FEATURES],
    c: f64,
}

impl LengthRows {
    /// The rows in their canonical order (score, length difference, difficulty), merged
    /// where equal, with their fold counts; `None` when the package's fit cannot run: fewer
    /// rows than folds, or every length difference equal (no standard deviation).
    fn rows(&self) -> Option<Vec<Row>> {
        let n = self.scores.len();
        if n < FOLDS {
            return None;
        }
        // The sample variance from exact integer sums, so the rows' order cannot change it.
        let (sum, sum_sq) = self.deltas.iter().fold((0i128, 0i128), |(s, q), &d| {
            (s + i128::from(d), q + i128::from(d) * i128::from(d))
        });
        let n_i = n as i128;
        let sd = ((n_i * sum_sq - sum * sum) as f64 / (n_i * (n_i - 1)) as f64).sqrt();
        if sd == 0.0 || !sd.is_finite() {
            return None;
        }
        let difficulty = |i: usize| self.difficulty.get(i).copied().unwrap_or(0.0);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| {
            (self.scores[i], self.deltas[i])
                .cmp(&(self.scores[j], self.deltas[j]))
                .then(difficulty(i).total_cmp(&difficulty(j)))
        });
        let mut rows: Vec<Row> = Vec::new();
        let mut last: Option<(u8, i64, u64)> = None;
        for (k, &i) in order.iter().enumerate() {
            let key = (self.scores[i], self.deltas[i], difficulty(i).to_bits());
            if last != Some(key) {
                rows.push(Row {
                    x: [(self.deltas[i] as f64 / sd).tanh(), difficulty(i), 1.0],
                    p: f64::from(self.scores[i]) / 2.0,
                    folds: [0.0; FOLDS],
                });
                last = Some(key);
            }
            if let Some(r) = rows.last_mut() {
                r.folds[fold_of(k, n)] += 1.0;
            }
        }
        Some(rows)
    }

    fn fit(&self) -> Option<Lc> {
        let rows = self.rows()?;
        let fitted = fit_cv(&rows);
        let w = fitted.w;
        // Each row's predicted win with the length term at 0.
        let predicted: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (sigmoid(w[1] * r.x[1] + w[2]), r.total()))
            .collect();
        let n: f64 = predicted.iter().map(|(_, m)| m).sum();
        let value = predicted.iter().map(|(q, m)| q * m).sum::<f64>() / n;
        let ss: f64 = predicted.iter().map(|(q, m)| m * (q - value).powi(2)).sum();
        let stderr = (n > 1.0).then(|| (ss / (n - 1.0)).sqrt() / n.sqrt());
        Some(Lc {
            value,
            stderr,
            w,
            c: fitted.c,
        })
    }
}
