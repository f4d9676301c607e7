//! `win_rate`: how often answer A beats answer B over pairwise verdicts (`A`, `B`, `tie`; a
//! pairwise judge's `winner`, or a human's), ties counted half, with an interval.
//!
//! Each verdict scores A 1 (a win), 0.5 (a tie) or 0 (a loss); the win rate is their mean,
//! (wins + ties / 2) / n, and its interval is the mean's: Wilson's when there is no tie
//! (every score 0 or 1), Student's t otherwise, at the task's `confidence`. A null verdict,
//! or one that is none of the three labels, is left out of `n` and counted as `excluded`.

use crate::accumulator::{first, State};
use crate::bootstrap::{self, Bootstrap, Replicates};
use crate::dropped::{self, Dropped};
use crate::metric_type::{About, Kind, OptionDoc, ParseCx, Setup};
use crate::{Figure, MetricError, Moments};
use arrow::array::Array;
use evalscore_task::{MetricReads, TaskError};

/// The `win_rate` metric type.
pub struct WinRateMetric;

/// The labels of the three verdicts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Verdicts {
    pub a: String,
    pub b: String,
    pub tie: String,
}

impl Verdicts {
    /// A verdict's score for answer A, in halves: 2 a win, 1 a tie, 0 a loss; `None` for a
    /// null verdict or one that is none of the three labels.
    pub(crate) fn halves(&self, verdict: Option<&str>) -> Option<u8> {
        match verdict? {
            l if l == self.a => Some(2),
            l if l == self.b => Some(0),
            l if l == self.tie => Some(1),
            _ => None,
        }
    }

    /// Counts a verdict that [`Verdicts::halves`] does not score in `dropped`: a null one,
    /// or one that is none of the three labels.
    pub(crate) fn drop_verdict(&self, verdict: Option<&str>, dropped: &mut Dropped) {
        match verdict {
            None => dropped.add(dropped::NULL, 1),
            Some(l) => dropped.other_label(l),
        }
    }

    /// The three labels, quoted, for warnings.
    pub(crate) fn expected(&self) -> String {
        format!("{:?} (a), {:?} (b), {:?} (tie)", self.a, self.b, self.tie)
    }
}

impl Default for Verdicts {
    fn default() -> Self {
        Verdicts {
            a: "A".to_owned(),
            b: "B".to_owned(),
            tie: "tie".to_owned(),
        }
    }
}

/// Its options: the verdicts' labels, and the bootstrap when it has one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WinRateOptions {
    pub verdicts: Verdicts,
    pub bootstrap: Option<Bootstrap>,
}

static ABOUT: About = About {
    name: "win_rate",
    doc: "The win rate of answer A over answer B in pairwise verdicts (a pairwise judge's `winner`, or a human's): (wins + ties / 2) / n, with an interval at the task's `confidence` (Wilson's without ties, Student's t over the 1 / 0.5 / 0 scores otherwise, or with `interval: bootstrap` a Poisson bootstrap's, as `mean` has). Verdicts that are null or none of the three labels are left out and counted as `excluded`.",
    reads: MetricReads::Labels,
    options: &[
        OptionDoc::optional(
            "labels",
            "the verdicts' labels, `{a: ..., b: ..., tie: ...}` (default `A`, `B`, `tie`)",
        ),
        bootstrap::OPTIONS[0],
        bootstrap::OPTIONS[1],
        bootstrap::OPTIONS[2],
        bootstrap::OPTIONS[3],
    ],
    example: "{type: win_rate, field: value}",
    figures: "`value`, `stderr`, `ci_low`, `ci_high`, `wins`, `ties`, `losses`, `excluded`",
    confusion: false,
};

impl Kind for WinRateMetric {
    type Options = WinRateOptions;
    type State = WinRate;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<WinRateOptions, TaskError> {
        Ok(WinRateOptions {
            verdicts: parse_verdicts(cx)?,
            bootstrap: bootstrap::parse(cx)?,
        })
    }

    fn state(&self, options: &WinRateOptions, setup: &Setup) -> WinRate {
        WinRate {
            verdicts: options.verdicts.clone(),
            bootstrap: options.bootstrap.map(Replicates::new),
            wins: 0,
            ties: 0,
            losses: 0,
            dropped: Dropped::default(),
            confidence: setup.confidence,
        }
    }
}

/// `labels: {a: ..., b: ..., tie: ...}` of a metric over pairwise verdicts (default `A`,
/// `B`, `tie`).
pub(crate) fn parse_verdicts(cx: &ParseCx<'_>) -> Result<Verdicts, TaskError> {
    let Some(n) = cx.get("labels") else {
        return Ok(Verdicts::default());
    };
    let hint = "e.g. `labels: {a: model_a, b: model_b, tie: tie}`";
    let map = n.map("`labels`").map_err(|e| e.with_hint(hint))?;
    map.check_keys(
        &["a", "b", "tie"],
        &format!("`labels` of `{}`", cx.metric_type),
    )?;
    let mut v = Verdicts::default();
    for (key, slot) in [("a", &mut v.a), ("b", &mut v.b), ("tie", &mut v.tie)] {
        if let Some(node) = map.get(key) {
            *slot = crate::values::label(&node.scalar_string(key)?).into_owned();
        }
    }
    if v.a == v.b || v.a == v.tie || v.b == v.tie {
        return Err(n
            .err(format!(
                "the labels `a`, `b` and `tie` of `{}` must differ",
                cx.metric_type
            ))
            .with_hint(hint));
    }
    Ok(v)
}

/// The state of a `win_rate`: the count of each verdict, and the bootstrap's replicates
/// when it has one.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WinRate {
    verdicts: Verdicts,
    bootstrap: Option<Replicates>,
    wins: u64,
    ties: u64,
    losses: u64,
    dropped: Dropped,
    confidence: f64,
}

impl State for WinRate {
    fn reads(&self) -> MetricReads {
        MetricReads::Labels
    }

    fn metric_type(&self) -> &'static str {
        ABOUT.name
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let labels = crate::values::per_row(first(inputs)?)?;
        let column = crate::values::column(&labels)?;
        let v = &self.verdicts;
        let score = |i: usize| v.halves(column.get(i));
        let dropped = &mut self.dropped;
        let mut tally = |(i, s): (usize, Option<u8>)| match s {
            Some(2) => self.wins += 1,
            Some(1) => self.ties += 1,
            Some(_) => self.losses += 1,
            None => v.drop_verdict(column.get(i), dropped),
        };
        match &mut self.bootstrap {
            None => (0..labels.len())
                .map(|i| (i, score(i)))
                .for_each(&mut tally),
            Some(boot) => {
                // Each verdict is read once; the replicates fold the same scores.
                let scores: Vec<Option<u8>> = (0..labels.len()).map(score).collect();
                scores.iter().copied().enumerate().for_each(&mut tally);
                let values = scores.into_iter().map(|s| s.map(|h| f64::from(h) / 2.0));
                boot.update(values, bootstrap::keys(inputs)?)?;
            }
        }
        Ok(())
    }

    fn group_limit(&self) -> usize {
        bootstrap::group_limit(&self.bootstrap)
    }

    fn merge(&mut self, other: &Self) {
        bootstrap::merge(&mut self.bootstrap, &other.bootstrap);
        self.wins += other.wins;
        self.ties += other.ties;
        self.losses += other.losses;
        self.dropped.merge(&other.dropped);
    }

    fn exclusion_warning(&self) -> Option<String> {
        let rows = self.wins + self.ties + self.losses + self.dropped.total();
        self.dropped.warning(rows, Some(&self.verdicts.expected()))
    }

    fn figures(&self) -> Vec<Figure> {
        // The scores' moments: wins of 1, ties of 0.5, losses of 0.
        let m = Moments::of_counts(&[(1.0, self.wins), (0.5, self.ties), (0.0, self.losses)]);
        let n = m.n();
        let mut figures = m.mean_figures(self.confidence);
        if let Some(boot) = &self.bootstrap {
            bootstrap::replace_interval(&mut figures, boot.figures(self.confidence, n));
        }
        let count = |stat: &str, c: u64| Figure::new(stat, None, Some(c as f64), n);
        figures.extend([
            count("wins", self.wins),
            count("ties", self.ties),
            count("losses", self.losses),
            count("excluded", self.dropped.total()),
        ]);
        figures
    }
}
