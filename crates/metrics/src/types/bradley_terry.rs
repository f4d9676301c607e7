//! `bradley_terry`: ratings of models from pairwise battles, as Chatbot Arena computes them:
//! the maximum-likelihood Bradley-Terry fit (what Arena fits with scikit-learn's
//! `LogisticRegression`, no intercept, no penalty), ties counting as half a win each way, on
//! the Elo scale (400 points per factor of 10 in odds) with the ratings' mean at 1000, and
//! intervals from a seeded bootstrap of the battles.
//!
//! The fit is Newton's method on the pairs of models that met ([`crate::bradley_terry_fit`]),
//! at most [`MAX_STEPS`] steps, each costing in proportion to those pairs. It exists when every
//! model both won and lost against the others in the sense that the "beat" graph is strongly
//! connected; otherwise (a model that never lost, or groups of models never compared) the
//! ratings are null. A fit that did not converge (its step limit, or a stop requested by a
//! signal) leaves the ratings null too, with a warning. The state is the count of each outcome
//! per (model A, model B) pair, at most [`MAX_MODELS`] models, so it merges across partitions.
//! The bootstrap draws the battles again with replacement, `replicates` times, from a
//! generator seeded by `seed`, each replicate's fit starting from the ratings; a replicate
//! whose fit does not exist or does not converge is left out. The interval is the replicates'
//! percentiles at the task's `confidence`. Its cost is replicates × (battles draws + a fit).

use crate::accumulator::{first, State};
use crate::bradley_terry_fit::{self as bt, Fit, MAX_STEPS};
use crate::dropped::{self, Dropped};
use crate::metric_type::{About, Kind, OptionDoc, ParseCx, Setup};
use crate::types::win_rate::{parse_verdicts, Verdicts};
use crate::{Figure, MetricError};
use arrow::array::Array;
use evalscore_task::{MetricReads, TaskError};

/// Why a battle of a model against itself is left out.
const SELF_BATTLE: &str = "of a model against itself";
use std::collections::BTreeMap;

/// Most models a `bradley_terry` state holds.
pub const MAX_MODELS: usize = 1_000;

/// The `bradley_terry` metric type.
pub struct BradleyTerryMetric;

/// Its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BtOptions {
    pub verdicts: Verdicts,
    pub replicates: u32,
    pub seed: u64,
}

static ABOUT: About = About {
    name: "bradley_terry",
    doc: "Ratings of models from pairwise battles (`field`: the verdict `A`, `B` or `tie`; `model_a`, `model_b`: the two models, columns or templates), as Chatbot Arena computes them: the maximum-likelihood Bradley-Terry fit, ties half a win each way, on the Elo scale (400, base 10) with a mean of 1000; intervals from a seeded bootstrap of the battles (`replicates`, `seed`) at the task's `confidence`. One row per model (`label`), `n` its battles. Null ratings when the fit does not exist (a model never lost or never won, or models never compared). At most 1,000 models.",
    reads: MetricReads::Battle,
    options: &[
        OptionDoc::optional(
            "labels",
            "the verdicts' labels, `{a: ..., b: ..., tie: ...}` (default `A`, `B`, `tie`)",
        ),
        OptionDoc::optional(
            "replicates",
            "bootstrap replicates for the intervals, 0 for none (default 100)",
        ),
        OptionDoc::optional("seed", "the bootstrap's seed (default 0)"),
    ],
    example: "{type: bradley_terry, field: value, model_a: \"{{ sample.model_a }}\", model_b: \"{{ sample.model_b }}\"}",
    figures: "per model (`label`): `rating`, `ci_low`, `ci_high`",
    confusion: false,
};

impl Kind for BradleyTerryMetric {
    type Options = BtOptions;
    type State = Battles;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<BtOptions, TaskError> {
        Ok(BtOptions {
            verdicts: parse_verdicts(cx)?,
            replicates: cx.whole_number("replicates", 100, 0, 10_000)? as u32,
            seed: cx.whole_number("seed", 0, 0, u64::MAX)?,
        })
    }

    fn state(&self, options: &BtOptions, setup: &Setup) -> Battles {
        Battles {
            verdicts: options.verdicts.clone(),
            replicates: options.replicates,
            seed: options.seed,
            confidence: setup.confidence,
            outcomes: BTreeMap::new(),
            dropped: Dropped::default(),
        }
    }
}

/// Per (model A, model B): A's wins, B's wins, ties.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Battles {
    verdicts: Verdicts,
    replicates: u32,
    seed: u64,
    confidence: f64,
    outcomes: BTreeMap<(String, String), [u64; 3]>,
    /// Battles left out: a null verdict or model, another verdict, a model against itself.
    dropped: Dropped,
}

impl Battles {
    /// The models of the battles, sorted.
    fn models(&self) -> Vec<&str> {
        let mut models: Vec<&str> = self
            .outcomes
            .keys()
            .flat_map(|(a, b)| [a.as_str(), b.as_str()])
            .collect();
        models.sort_unstable();
        models.dedup();
        models
    }

    /// The models, sorted, and the outcome cells by the models' indexes.
    fn cells(&self) -> (Vec<&str>, Cells) {
        let models = self.models();
        let index = |m: &str| models.binary_search(&m).unwrap_or(0);
        let cells = self
            .outcomes
            .iter()
            .map(|((a, b), c)| ((index(a), index(b)), c.map(|x| x as f64)))
            .collect();
        (models, cells)
    }

    /// The fit of all the battles within `max_steps` Newton steps.
    fn fit(&self, max_steps: usize) -> Option<Fit> {
        let (models, cells) = self.cells();
        bt::fit(models.len(), &bt::pairs(&cells).0, None, max_steps)
    }

    /// The warning for a fit that did not converge within `max_steps` Newton steps.
    fn convergence_warning(&self, max_steps: usize) -> Option<String> {
        if crate::interrupt::requested() {
            return None;
        }
        self.fit(max_steps).filter(|f| !f.converged).map(|_| {
            format!(
                "did not converge within {max_steps} Newton steps: its ratings and intervals are null"
            )
        })
    }
}

/// Outcome cells: ((model A, model B), [A's wins, B's wins, ties]).
type Cells = Vec<((usize, usize), [f64; 3])>;

impl State for Battles {
    fn reads(&self) -> MetricReads {
        MetricReads::Battle
    }

    fn metric_type(&self) -> &'static str {
        ABOUT.name
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let verdict = first(inputs)?;
        let missing =
            || MetricError::Invalid("`bradley_terry` needs model_a and model_b".to_owned());
        let per_row = crate::values::per_row;
        let (verdict, a, b) = (
            per_row(verdict)?,
            per_row(*inputs.get(1).ok_or_else(missing)?)?,
            per_row(*inputs.get(2).ok_or_else(missing)?)?,
        );
        let column = crate::values::column;
        let (v, a, b) = (column(&verdict)?, column(&a)?, column(&b)?);
        for i in 0..verdict.len() {
            let (Some(v), Some(a), Some(b)) = (v.get(i), a.get(i), b.get(i)) else {
                self.dropped.add(dropped::NULL, 1);
                continue;
            };
            // Outcome slots: A won, B won, a tie.
            let slot = match self.verdicts.halves(Some(v)) {
                Some(2) => 0,
                Some(0) => 1,
                Some(_) => 2,
                None => {
                    self.dropped.other_label(v);
                    continue;
                }
            };
            if a == b {
                self.dropped.add(SELF_BATTLE, 1);
                continue;
            }
            self.outcomes
                .entry((a.to_owned(), b.to_owned()))
                .or_default()[slot] += 1;
        }
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        for (pair, counts) in &other.outcomes {
            let c = self.outcomes.entry(pair.clone()).or_default();
            for k in 0..3 {
                c[k] += counts[k];
            }
        }
        self.dropped.merge(&other.dropped);
    }

    fn check_size(&self) -> Result<(), MetricError> {
        let models = self.models();
        if models.len() > MAX_MODELS {
            return Err(MetricError::Invalid(format!(
                "`bradley_terry` has more than {MAX_MODELS} models, its limit"
            )));
        }
        Ok(())
    }

    fn exclusion_warning(&self) -> Option<String> {
        let kept: u64 = self.outcomes.values().flatten().sum();
        let rows = kept + self.dropped.total();
        let dropped = self.dropped.warning(rows, Some(&self.verdicts.expected()));
        match (dropped, self.convergence_warning(MAX_STEPS)) {
            (Some(d), Some(c)) => Some(format!("{d}; {c}")),
            (d, c) => d.or(c),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let (models, cells) = self.cells();
        let (pairs, pair_of_cell) = bt::pairs(&cells);
        let fitted = bt::fit(models.len(), &pairs, None, MAX_STEPS).filter(|f| f.converged);
        let ratings = fitted.as_ref().map(Fit::elo);
        let mut battles = vec![0u64; models.len()];
        for &((a, b), c) in &cells {
            let n = c.iter().sum::<f64>() as u64;
            battles[a] += n;
            battles[b] += n;
        }
        // The bootstrap: each replicate draws the battles again with replacement.
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); models.len()];
        if let Some(start) = fitted.as_ref().filter(|_| self.replicates > 0) {
            // Every (cell, outcome) with battles, and the battles up to and through it.
            let outcomes: Vec<(usize, usize)> = cells
                .iter()
                .enumerate()
                .flat_map(|(i, (_, c))| (0..3).filter(move |&k| c[k] > 0.0).map(move |k| (i, k)))
                .collect();
            let mut cumulative = Vec::with_capacity(outcomes.len());
            let mut total = 0u64;
            for &(i, k) in &outcomes {
                total += cells[i].1[k] as u64;
                cumulative.push(total);
            }
            let mut rng = fastrand::Rng::with_seed(self.seed);
            for _ in 0..self.replicates {
                if crate::interrupt::requested() {
                    break;
                }
                let mut drawn = pairs.clone();
                drawn.iter_mut().for_each(|e| (e.wi, e.wj) = (0.0, 0.0));
                for _ in 0..total {
                    let r = rng.u64(0..total);
                    let (i, k) = outcomes[cumulative.partition_point(|&c| c <= r)];
                    let e = &mut drawn[pair_of_cell[i]];
                    // The cell's model A is the pair's first model, or its second.
                    let a_first = cells[i].0 .0 == e.i;
                    match (k, a_first) {
                        (2, _) => {
                            e.wi += 0.5;
                            e.wj += 0.5;
                        }
                        (0, true) | (1, false) => e.wi += 1.0,
                        _ => e.wj += 1.0,
                    }
                }
                let replicate = bt::fit(models.len(), &drawn, Some(&start.theta), MAX_STEPS);
                if let Some(r) = replicate.filter(|f| f.converged) {
                    for (s, x) in samples.iter_mut().zip(r.elo()) {
                        s.push(x);
                    }
                }
            }
        }
        let (lo_q, hi_q) = ((1.0 - self.confidence) / 2.0, (1.0 + self.confidence) / 2.0);
        let mut out = Vec::with_capacity(models.len() * 3);
        for (i, m) in models.iter().enumerate() {
            let label = Some((*m).to_owned());
            let rating = ratings.as_ref().map(|r| r[i]);
            samples[i].sort_by(f64::total_cmp);
            let bound = |q: f64| {
                (!samples[i].is_empty()).then(|| crate::intervals::quantile(&samples[i], q))
            };
            out.push(Figure::new("rating", label.clone(), rating, battles[i]));
            out.push(Figure::new(
                "ci_low",
                label.clone(),
                bound(lo_q),
                battles[i],
            ));
            out.push(Figure::new("ci_high", label, bound(hi_q), battles[i]));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn battles(cells: &[(&str, &str, [u64; 3])]) -> Battles {
        Battles {
            verdicts: Verdicts::default(),
            replicates: 0,
            seed: 0,
            confidence: 0.95,
            outcomes: cells
                .iter()
                .map(|&(a, b, c)| ((a.to_owned(), b.to_owned()), c))
                .collect(),
            dropped: Dropped::default(),
        }
    }

    /// A fit that stops short of the maximum-likelihood ratings is a warning, not a rating.
    #[test]
    fn a_fit_that_did_not_converge_is_a_warning() {
        let b = battles(&[
            ("x", "y", [400, 1, 0]),
            ("y", "z", [2, 3, 0]),
            ("x", "z", [5, 1, 0]),
        ]);
        assert_eq!(
            b.convergence_warning(1).as_deref(),
            Some("did not converge within 1 Newton steps: its ratings and intervals are null")
        );
        assert_eq!(b.convergence_warning(MAX_STEPS), None);
        assert_eq!(b.exclusion_warning(), None);
    }
}
