//! Confusion-matrix metrics: binary and multiclass classification, and precision, recall and
//! F1 as single figures, with scikit-learn's `zero_division=np.nan` semantics.

use crate::intervals::wilson;
use crate::values::{column, SeenLabels};
use crate::FoldMemo;
use crate::{Figure, MetricError};
use arrow::array::{Array, ArrayRef, AsArray, Scalar, StringArray, StringViewArray};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::cast;
use arrow::compute::kernels::cmp;
use evalscore_text::{pack_bytes, valid_words};
use std::collections::{BTreeSet, HashMap};

/// Which figures a [`Confusion`] state reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ClassMode {
    Binary,
    Multiclass,
    Precision,
    Recall,
    F1,
}

/// Counts of (actual, predicted) pairs.
///
/// Rows are included when both values are non-null and, for the binary modes, each equals
/// `positive` or `negative` (when `negative` is absent, any non-null value that is not
/// `positive` is a negative); for multiclass, when both are among `labels` (all values when
/// `labels` is absent). Every other row is counted as `excluded`, those with a null label
/// also as `nulls`, and the labels of excluded rows that are not expected are kept in
/// `seen` (bounded, [`crate::values::MAX_SEEN_LABELS`]). Both sides arrive as labels
/// ([`crate::values`]) and the options are labels too, so they compare by value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Confusion {
    counts: Counts,
    nulls: u64,
    seen: SeenLabels,
}

/// The options and counts of a [`Confusion`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Counts {
    mode: ClassMode,
    positive: String,
    negative: Option<String>,
    labels: Option<Vec<String>>,
    confidence: f64,
    #[serde(with = "crate::bytes::sorted_map")]
    cells: HashMap<(String, String), u64>,
    excluded: u64,
}

/// A ratio, null when the denominator is zero.
fn ratio(num: f64, den: f64) -> Option<f64> {
    (den != 0.0).then(|| num / den)
}

/// The labels a metric accepts.
struct Expected {
    positive: String,
    negative: Option<String>,
    labels: Option<Vec<String>>,
    multiclass: bool,
}

impl Expected {
    /// Whether a row with these labels is included.
    fn includes(&self, gt: &str, pred: &str) -> bool {
        self.accepts(gt) && self.accepts(pred)
    }

    /// Whether a label may be in an included row.
    fn accepts(&self, l: &str) -> bool {
        match (self.multiclass, &self.labels, &self.negative) {
            (true, Some(ls), _) => ls.iter().any(|x| x == l),
            (false, _, Some(n)) => l == self.positive || l == n,
            _ => true,
        }
    }
}

impl Confusion {
    pub fn new(
        mode: ClassMode,
        positive: Option<String>,
        negative: Option<String>,
        labels: Option<Vec<String>>,
        confidence: f64,
    ) -> Self {
        let label = |l: String| crate::values::label(&l).into_owned();
        Confusion {
            counts: Counts {
                mode,
                positive: positive.map(label).unwrap_or_default(),
                negative: negative.map(label),
                labels: labels.map(|ls| ls.into_iter().map(label).collect()),
                confidence,
                cells: HashMap::new(),
                excluded: 0,
            },
            nulls: 0,
            seen: SeenLabels::default(),
        }
    }

    /// The options' labels.
    fn expected(&self) -> Expected {
        Expected {
            positive: self.counts.positive.clone(),
            negative: self.counts.negative.clone(),
            labels: self.counts.labels.clone(),
            multiclass: self.counts.mode == ClassMode::Multiclass,
        }
    }

    pub fn update(&mut self, gt: &dyn Array, pred: &dyn Array) -> Result<(), MetricError> {
        self.update_with(gt, pred, None)
    }

    /// [`Confusion::update`]; the binary modes take the 2x2 counts of the same two columns
    /// and labels from `memo` when another metric has counted them for this batch. Both
    /// sides are label columns ([`crate::values::label_array`]).
    pub fn update_with(
        &mut self,
        gt: &dyn Array,
        pred: &dyn Array,
        memo: Option<&FoldMemo>,
    ) -> Result<(), MetricError> {
        let (ga, pa) = (crate::values::per_row(gt)?, crate::values::per_row(pred)?);
        let len = ga.len().min(pa.len());
        let expected = self.expected();
        if self.counts.mode != ClassMode::Multiclass {
            if let Some(neg) = &expected.negative {
                let (pos, neg) = (expected.positive.as_str(), neg.as_str());
                let count = || binary_counts(&ga, &pa, len, pos, neg);
                let shared = memo.and_then(|m| {
                    let tag = format!("{pos}|{neg}");
                    m.pair_counts(gt, pred, &tag, || count().ok())
                });
                let own;
                let counts = match &shared {
                    Some(c) => c.as_ref(),
                    // Alone, or counted again for its error.
                    None => {
                        own = count()?;
                        &own
                    }
                };
                return self.update_binary(&ga, &pa, counts, pos, neg);
            }
        }
        let (g, p) = (column(&ga)?, column(&pa)?);
        // Count borrowed pairs first: one owned key per distinct pair per batch.
        let mut local: HashMap<(&str, &str), u64> = HashMap::new();
        for r in 0..len {
            match (g.get(r), p.get(r)) {
                (Some(a), Some(b)) if expected.includes(a, b) => {
                    *local.entry((a, b)).or_default() += 1
                }
                (Some(a), Some(b)) => {
                    self.counts.excluded += 1;
                    self.note_unexpected(&expected, a, b);
                }
                _ => {
                    self.counts.excluded += 1;
                    self.nulls += 1;
                }
            }
        }
        for ((a, b), c) in local {
            match self.counts.cells.get_mut(&(a.to_owned(), b.to_owned())) {
                Some(x) => *x += c,
                None => {
                    self.counts.cells.insert((a.to_owned(), b.to_owned()), c);
                }
            }
        }
        Ok(())
    }

    fn note_unexpected(&mut self, expected: &Expected, gt: &str, pred: &str) {
        for l in [gt, pred] {
            if !expected.accepts(l) {
                self.seen.note(l);
            }
        }
    }

    /// Adds the two-label case's [`PairCounts`] of `ga` and `pa` ([`binary_counts`]), and
    /// notes the labels of its excluded rows with two non-null labels, whose labels alone
    /// are read.
    fn update_binary(
        &mut self,
        ga: &ArrayRef,
        pa: &ArrayRef,
        counts: &PairCounts,
        pos: &str,
        neg: &str,
    ) -> Result<(), MetricError> {
        let (counts, two_labels) = counts;
        let len = ga.len().min(pa.len());
        let included: u64 = counts.iter().flatten().sum();
        let excluded = len as u64 - included;
        self.counts.excluded += excluded;
        self.nulls += excluded - two_labels.len() as u64;
        if !two_labels.is_empty() {
            let (gc, pc) = (column(ga)?, column(pa)?);
            for &r in two_labels {
                for col in [&gc, &pc] {
                    if let Some(l) = col.get(r as usize).filter(|l| *l != pos && *l != neg) {
                        self.seen.note(l);
                    }
                }
            }
        }
        let names = [neg, pos];
        for (x, row) in counts.iter().enumerate() {
            for (y, &c) in row.iter().enumerate() {
                if c > 0 {
                    *self
                        .counts
                        .cells
                        .entry((names[x].to_owned(), names[y].to_owned()))
                        .or_default() += c;
                }
            }
        }
        Ok(())
    }

    /// Which figures it reports.
    pub fn mode(&self) -> ClassMode {
        self.counts.mode
    }

    /// Distinct (actual, predicted) pairs seen.
    pub fn pairs(&self) -> usize {
        self.counts.cells.len()
    }

    /// Folds `other` in.
    pub fn merge(&mut self, other: &Confusion) {
        self.counts.excluded += other.counts.excluded;
        self.nulls += other.nulls;
        self.seen.merge(&other.seen);
        for (k, c) in &other.counts.cells {
            *self.counts.cells.entry(k.clone()).or_default() += c;
        }
    }

    /// Rows excluded, those with a null label, and the unexpected labels of the others.
    pub fn exclusions(&self) -> (u64, u64, &SeenLabels) {
        (self.counts.excluded, self.nulls, &self.seen)
    }

    /// A sentence on the excluded rows when the metric excluded more than half of the rows
    /// it saw (all of them included): how many, the labels it saw that it did not expect,
    /// and the ones it expected.
    pub fn exclusion_warning(&self) -> Option<String> {
        let total = self.support() + self.counts.excluded;
        if self.counts.excluded == 0 || self.counts.excluded * 2 <= total {
            return None;
        }
        let quoted = |ls: &mut dyn Iterator<Item = &str>| -> Vec<String> {
            ls.map(|l| format!("{l:?}")).collect()
        };
        let seen = self.seen.listed();
        let e = self.expected();
        let expected = match (self.counts.mode, &e.labels, &e.negative) {
            (ClassMode::Multiclass, Some(ls), _) => {
                quoted(&mut ls.iter().map(String::as_str)).join(", ")
            }
            (ClassMode::Multiclass, None, _) => "any label".to_owned(),
            (_, _, Some(n)) => format!("{:?} (positive), {n:?} (negative)", e.positive),
            (_, _, None) => format!("{:?} (positive) or any other label", e.positive),
        };
        Some(format!(
            "excluded {} of {total} rows ({} with a null label); other labels seen: {seen}; expected: {expected}",
            self.counts.excluded, self.nulls
        ))
    }

    fn support(&self) -> u64 {
        self.counts.cells.values().sum()
    }

    /// Non-zero cells as (actual, predicted, count), in byte order of (actual, predicted).
    pub fn cells(&self) -> Vec<(String, String, u64)> {
        let mut v: Vec<(String, String, u64)> = self
            .counts
            .cells
            .iter()
            .filter(|(_, c)| **c > 0)
            .map(|((a, p), c)| (a.clone(), p.clone(), *c))
            .collect();
        v.sort();
        v
    }

    /// Whether this state's confusion matrix belongs in confusion.parquet.
    pub fn has_matrix(&self) -> bool {
        matches!(self.counts.mode, ClassMode::Binary | ClassMode::Multiclass)
    }

    fn binary_counts(&self) -> (u64, u64, u64, u64) {
        let (mut tp, mut fp, mut tn, mut fn_) = (0, 0, 0, 0);
        let positive = &self.counts.positive;
        for ((a, p), c) in &self.counts.cells {
            match (a == positive, p == positive) {
                (true, true) => tp += c,
                (false, true) => fp += c,
                (false, false) => tn += c,
                (true, false) => fn_ += c,
            }
        }
        (tp, fp, tn, fn_)
    }

    pub fn figures(&self) -> Vec<Figure> {
        let n = self.support();
        let fig = |stat: &str, v: Option<f64>| Figure::new(stat, None, v, n);
        let c = self.counts.confidence;
        match self.counts.mode {
            ClassMode::Multiclass => self.multiclass_figures(),
            mode => {
                let (tp, fp, tn, fn_) = self.binary_counts();
                let (tpf, fpf, tnf, fnf) = (tp as f64, fp as f64, tn as f64, fn_ as f64);
                let precision = ratio(tpf, tpf + fpf);
                let recall = ratio(tpf, tpf + fnf);
                let f1 = ratio(2.0 * tpf, 2.0 * tpf + fpf + fnf);
                let ci = |count: f64, nobs: f64| wilson(count, nobs, c);
                let with_ci =
                    |out: &mut Vec<Figure>, name: &str, v: Option<f64>, count: f64, nobs: f64| {
                        out.push(fig(name, v));
                        let iv = ci(count, nobs);
                        let (lo, hi) = if name == "value" {
                            ("ci_low".to_owned(), "ci_high".to_owned())
                        } else {
                            (format!("{name}_ci_low"), format!("{name}_ci_high"))
                        };
                        out.push(fig(&lo, iv.map(|x| x.0)));
                        out.push(fig(&hi, iv.map(|x| x.1)));
                    };
                let mut out = Vec::new();
                match mode {
                    ClassMode::Precision => with_ci(&mut out, "value", precision, tpf, tpf + fpf),
                    ClassMode::Recall => with_ci(&mut out, "value", recall, tpf, tpf + fnf),
                    ClassMode::F1 => out.push(fig("value", f1)),
                    _ => {
                        let nf = n as f64;
                        with_ci(&mut out, "accuracy", ratio(tpf + tnf, nf), tpf + tnf, nf);
                        with_ci(&mut out, "precision", precision, tpf, tpf + fpf);
                        with_ci(&mut out, "recall", recall, tpf, tpf + fnf);
                        out.push(fig("f1_score", f1));
                        for (name, v) in [
                            ("tp", tp),
                            ("fp", fp),
                            ("tn", tn),
                            ("fn", fn_),
                            ("support", n),
                            ("excluded", self.counts.excluded),
                        ] {
                            out.push(fig(name, Some(v as f64)));
                        }
                    }
                }
                out
            }
        }
    }

    /// The classes, in report order: `labels` as given, else the sorted distinct values.
    fn classes(&self) -> Vec<String> {
        match self.expected().labels {
            Some(l) => l,
            None => {
                let set: BTreeSet<&String> =
                    self.counts.cells.keys().flat_map(|(a, p)| [a, p]).collect();
                set.into_iter().cloned().collect()
            }
        }
    }

    fn multiclass_figures(&self) -> Vec<Figure> {
        let n = self.support();
        let fig = |stat: &str, v: Option<f64>| Figure::new(stat, None, v, n);
        let classes = self.classes();
        let mut tp = vec![0u64; classes.len()];
        let mut predicted = vec![0u64; classes.len()];
        let mut actual = vec![0u64; classes.len()];
        let index: HashMap<&str, usize> = classes
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        for ((a, p), c) in &self.counts.cells {
            let (ia, ip) = (index.get(a.as_str()), index.get(p.as_str()));
            if let Some(&i) = ia {
                actual[i] += c;
            }
            if let Some(&i) = ip {
                predicted[i] += c;
            }
            if a == p {
                if let Some(&i) = ia {
                    tp[i] += c;
                }
            }
        }
        let per: Vec<[Option<f64>; 3]> = (0..classes.len())
            .map(|i| {
                let (t, p, a) = (tp[i] as f64, predicted[i] as f64, actual[i] as f64);
                [ratio(t, p), ratio(t, a), ratio(2.0 * t, p + a)]
            })
            .collect();
        let weights: Vec<f64> = actual.iter().map(|&a| a as f64).collect();
        let (st, sp, sa) = (
            tp.iter().sum::<u64>() as f64,
            predicted.iter().sum::<u64>() as f64,
            actual.iter().sum::<u64>() as f64,
        );
        let micro = [ratio(st, sp), ratio(st, sa), ratio(2.0 * st, sp + sa)];
        let mut out = Vec::new();
        let acc = ratio(st, n as f64);
        out.push(fig("accuracy", acc));
        let iv = wilson(st, n as f64, self.counts.confidence);
        out.push(fig("accuracy_ci_low", iv.map(|x| x.0)));
        out.push(fig("accuracy_ci_high", iv.map(|x| x.1)));
        let names = ["precision", "recall", "f1_score"];
        for (k, name) in names.iter().enumerate() {
            let col: Vec<Option<f64>> = per.iter().map(|p| p[k]).collect();
            out.push(fig(&format!("macro_{name}"), nan_average(&col, None)));
        }
        for (k, name) in names.iter().enumerate() {
            out.push(fig(&format!("micro_{name}"), micro[k]));
        }
        for (k, name) in names.iter().enumerate() {
            let col: Vec<Option<f64>> = per.iter().map(|p| p[k]).collect();
            out.push(fig(
                &format!("weighted_{name}"),
                nan_average(&col, Some(&weights)),
            ));
        }
        out.push(fig("support", Some(n as f64)));
        out.push(fig("excluded", Some(self.counts.excluded as f64)));
        for (i, class) in classes.iter().enumerate() {
            for (k, name) in names.iter().enumerate() {
                out.push(Figure::new(name, Some(class.clone()), per[i][k], n));
            }
            out.push(Figure::new(
                "support",
                Some(class.clone()),
                Some(actual[i] as f64),
                n,
            ));
        }
        out
    }
}

/// The two-label case's [`PairCounts`] of the first `len` rows of `ga` and `pa`, without
/// hashing: over two Utf8View columns and labels of at most 12 bytes, one pass over the
/// views ([`view_pair_counts`]); otherwise four comparisons against a scalar (arrow's `eq`
/// kernel) and bitmap intersections counted with popcount.
fn binary_counts(
    ga: &ArrayRef,
    pa: &ArrayRef,
    len: usize,
    pos: &str,
    neg: &str,
) -> Result<PairCounts, MetricError> {
    let (g, p) = (ga.slice(0, len), pa.slice(0, len));
    if let (Some(g), Some(p)) = (g.as_string_view_opt(), p.as_string_view_opt()) {
        if let Some(c) = view_pair_counts(g, p, pos, neg) {
            return Ok(c);
        }
    }
    let (g_pos, g_neg) = (equal_to(&g, pos)?, equal_to(&g, neg)?);
    let (p_pos, p_neg) = (equal_to(&p, pos)?, equal_to(&p, neg)?);
    let count = |a: &BooleanBuffer, b: &BooleanBuffer| (a & b).count_set_bits() as u64;
    let mut odd = !&(&(&g_pos | &g_neg) & &(&p_pos | &p_neg));
    if let Some(v) = NullBuffer::union(g.nulls(), p.nulls()) {
        odd = &odd & v.inner();
    }
    // counts[actual][predicted], 0 = negative, 1 = positive
    let counts = [
        [count(&g_neg, &p_neg), count(&g_neg, &p_pos)],
        [count(&g_pos, &p_neg), count(&g_pos, &p_pos)],
    ];
    Ok((counts, odd.set_indices().map(|r| r as u32).collect()))
}

/// Which rows of a label column equal `v` (arrow's `eq` kernel); a null label is no class.
fn equal_to(a: &ArrayRef, v: &str) -> Result<BooleanBuffer, MetricError> {
    let scalar = cast(&StringArray::from(vec![v]), a.data_type()).map_err(MetricError::Arrow)?;
    let eq = cmp::eq(a, &Scalar::new(scalar)).map_err(MetricError::Arrow)?;
    Ok(match eq.nulls() {
        Some(n) => eq.values() & n.inner(),
        None => eq.values().clone(),
    })
}

/// scikit-learn's `_nanaverage`: the (weighted) mean of the defined values; null when none
/// is defined; the plain mean when every remaining weight is zero.
fn nan_average(values: &[Option<f64>], weights: Option<&[f64]>) -> Option<f64> {
    let kept: Vec<(f64, f64)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (v, weights.map_or(1.0, |w| w[i]))))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let wsum: f64 = kept.iter().map(|(_, w)| w).sum();
    if wsum == 0.0 {
        return Some(kept.iter().map(|(v, _)| v).sum::<f64>() / kept.len() as f64);
    }
    Some(kept.iter().map(|(v, w)| v * w).sum::<f64>() / wsum)
}

/// The view of a label of at most 12 bytes under a mask: a cell equals the label exactly
/// when its view, masked, is the label's. Such a cell is inline, so its length and bytes are
/// in its view; the mask skips the padding after the text; a longer cell differs in length.
fn view_key(v: &str) -> Option<(u128, u128)> {
    if v.len() > 12 {
        return None;
    }
    let want = v.bytes().enumerate().fold(v.len() as u128, |w, (i, b)| {
        w | (u128::from(b) << (32 + 8 * i))
    });
    Some((u128::MAX >> (8 * (12 - v.len())), want))
}

/// The 2x2 counts `[actual][predicted]` (0 = negative, 1 = positive) of two label columns,
/// and the rows excluded with two non-null labels (one of them neither class).
pub(crate) type PairCounts = ([[u64; 2]; 2], Vec<u32>);

/// The [`PairCounts`] of two Utf8View label columns, in one pass over their views, 64 rows
/// at a time; a null label is neither class. `None` when a label is longer than 12 bytes.
fn view_pair_counts(
    g: &StringViewArray,
    p: &StringViewArray,
    pos: &str,
    neg: &str,
) -> Option<PairCounts> {
    let ((pm, pw), (nm, nw)) = (view_key(pos)?, view_key(neg)?);
    if pos.len() <= 4 && neg.len() <= 4 {
        // Length and text sit in the low 64 bits of the view.
        let (pm, pw, nm, nw) = (pm as u64, pw as u64, nm as u64, nw as u64);
        return Some(pair_counts(g, p, |v| {
            let v = v as u64;
            (v & pm == pw, v & nm == nw)
        }));
    }
    Some(pair_counts(g, p, |v| (v & pm == pw, v & nm == nw)))
}

fn pair_counts(
    g: &StringViewArray,
    p: &StringViewArray,
    class: impl Fn(u128) -> (bool, bool),
) -> PairCounts {
    let (g_valid, p_valid) = (
        valid_words(g.nulls(), g.len()),
        valid_words(p.nulls(), p.len()),
    );
    let mut counts = [[0u64; 2]; 2];
    let mut odd_rows = Vec::new();
    // One column at a time: two masks in flight instead of four keep the loop in registers.
    let masks = |views: &[u128]| {
        let (mut pos, mut neg) = ([0u8; 64], [0u8; 64]);
        for (j, &v) in views.iter().enumerate() {
            let (a, b) = class(v);
            pos[j] = u8::from(a);
            neg[j] = u8::from(b);
        }
        (pack_bytes(&pos), pack_bytes(&neg))
    };
    for (w, (gc, pc)) in g.views().chunks(64).zip(p.views().chunks(64)).enumerate() {
        let ((gp, gn), (pp, pn)) = (masks(gc), masks(pc));
        let (gv, pv) = (g_valid[w], p_valid[w]);
        let (gp, gn, pp, pn) = (gp & gv, gn & gv, pp & pv, pn & pv);
        counts[0][0] += u64::from((gn & pn).count_ones());
        counts[0][1] += u64::from((gn & pp).count_ones());
        counts[1][0] += u64::from((gp & pn).count_ones());
        counts[1][1] += u64::from((gp & pp).count_ones());
        // Rows of this chunk: the last one may be short, and its validity words padded.
        let live = u64::MAX >> (64 - gc.len().min(pc.len()));
        let mut odd = live & gv & pv & !((gp | gn) & (pp | pn));
        while odd != 0 {
            odd_rows.push((w * 64) as u32 + odd.trailing_zeros());
            odd &= odd - 1;
        }
    }
    (counts, odd_rows)
}

#[cfg(test)]
mod tests;
