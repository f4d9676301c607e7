#!/usr/bin/env python3
"""Generate golden test cases for evalscore's classification metrics and
confidence intervals, computed with independent libraries (scikit-learn,
statsmodels, scipy, numpy).

Writes:
    data/golden/classification.json   binary and multiclass cases
    data/golden/intervals.json        mean / std / CI cases

Deterministic: every random choice comes from one numpy Generator with a
fixed seed, and the hand-written cases are fixed. Re-running with the pinned
versions (scripts/golden/requirements.txt) reproduces the files byte for byte.

Usage (from the repository root, or anywhere):
    pip install -r scripts/golden/requirements.txt
    python3 scripts/golden/make_golden.py

See data/golden/README.md for the format and the semantics.
"""

from __future__ import annotations

import json
import math
import platform
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy
import scipy.stats
import sklearn
import statsmodels
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import (
    accuracy_score,
    confusion_matrix,
    precision_recall_fscore_support,
)
from statsmodels.stats.proportion import proportion_confint

SEED = 20240611
GENERATOR = "scripts/golden/make_golden.py"
ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "data" / "golden"

# zero_division=np.nan is the whole point: undefined ratios must come out as
# NaN (then null), so the warnings sklearn raises for them are expected noise.
warnings.filterwarnings("ignore", category=UndefinedMetricWarning)
warnings.filterwarnings("ignore", category=RuntimeWarning)
# confusion_matrix warns about a 1x1 matrix even when labels= is passed (a
# multiclass case whose only class is the one seen); the shape is right.
warnings.filterwarnings("ignore", message="A single label was found")


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def num(x):
    """A float for JSON: NaN/None -> None; infinities are a bug here."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        raise ValueError("infinite value in golden output")
    return x


def wilson(count: int, nobs: int, alpha: float = 0.05):
    """(low, high) Wilson interval, or (None, None) when nobs == 0.

    Classification uses alpha=0.05 literally; intervals.json passes
    alpha = 1 - confidence (for 0.95 that is 0.05000000000000004, which moves
    the last digit or so of some bounds).
    """
    if nobs == 0:
        return None, None
    lo, hi = proportion_confint(int(count), int(nobs), alpha=alpha, method="wilson")
    return num(lo), num(hi)


def cells(cm: np.ndarray, classes: list[str]):
    """Non-zero confusion-matrix cells sorted by (actual, predicted) string."""
    out = []
    for i, actual in enumerate(classes):
        for j, predicted in enumerate(classes):
            c = int(cm[i, j])
            if c != 0:
                out.append({"actual": actual, "predicted": predicted, "count": c})
    out.sort(key=lambda d: (d["actual"], d["predicted"]))
    return out


def versions():
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
        "scipy": scipy.__version__,
        "statsmodels": statsmodels.__version__,
    }


# --------------------------------------------------------------------------
# binary classification
# --------------------------------------------------------------------------


def binary_expected(gt, pred, positive, negative):
    vocab = (positive, negative)
    keep = [
        (g, p)
        for g, p in zip(gt, pred)
        if g is not None and p is not None and g in vocab and p in vocab
    ]
    excluded = len(gt) - len(keep)
    support = len(keep)
    exp = {"support": support, "excluded": excluded}

    if support == 0:
        exp.update(
            tp=0, fp=0, tn=0, fn=0,
            accuracy=None, precision=None, recall=None, f1_score=None,
            accuracy_ci_low=None, accuracy_ci_high=None,
            precision_ci_low=None, precision_ci_high=None,
            recall_ci_low=None, recall_ci_high=None,
            confusion_matrix=[],
        )
        return exp

    y_true = [g for g, _ in keep]
    y_pred = [p for _, p in keep]
    labels = [negative, positive]
    cm = confusion_matrix(y_true, y_pred, labels=labels)
    tn, fp, fn, tp = (int(v) for v in cm.ravel())
    accuracy = accuracy_score(y_true, y_pred)
    precision, recall, f1, _ = precision_recall_fscore_support(
        y_true,
        y_pred,
        average="binary",
        pos_label=positive,
        zero_division=np.nan,
    )
    a_lo, a_hi = wilson(tp + tn, support)
    p_lo, p_hi = wilson(tp, tp + fp)
    r_lo, r_hi = wilson(tp, tp + fn)
    exp.update(
        tp=tp, fp=fp, tn=tn, fn=fn,
        accuracy=num(accuracy),
        precision=num(precision),
        recall=num(recall),
        f1_score=num(f1),
        accuracy_ci_low=a_lo, accuracy_ci_high=a_hi,
        precision_ci_low=p_lo, precision_ci_high=p_hi,
        recall_ci_low=r_lo, recall_ci_high=r_hi,
        confusion_matrix=cells(cm, labels),
    )
    return exp


def binary_case(name, gt, pred, positive, negative):
    return {
        "name": name,
        "kind": "binary",
        "input": {
            "gt": list(gt),
            "pred": list(pred),
            "positive": positive,
            "negative": negative,
        },
        "expected": binary_expected(gt, pred, positive, negative),
    }


BINARY_VOCABS = [
    ("yes", "no"),
    ("pos", "neg"),
    ("true", "false"),
    ("1", "0"),
    ("A", "B"),
    ("spam", "ham"),
    ("Yes", "No"),
]


def random_binary_column(rng, n, positive, negative, p_pos, p_null, p_oov):
    out = []
    for _ in range(n):
        u = rng.random()
        if u < p_null:
            out.append(None)
        elif u < p_null + p_oov:
            out.append(str(rng.choice(["maybe", "", positive.upper() + "!", "n/a"])))
        else:
            out.append(positive if rng.random() < p_pos else negative)
    return out


def random_binary_pred(rng, gt, positive, negative, p_correct, p_null, p_oov):
    out = []
    for g in gt:
        u = rng.random()
        if u < p_null:
            out.append(None)
        elif u < p_null + p_oov:
            out.append("maybe")
        elif g in (positive, negative) and rng.random() < p_correct:
            out.append(g)
        else:
            out.append(positive if rng.random() < 0.5 else negative)
    return out


def binary_cases(rng):
    cases = []
    # --- explicit edge cases -------------------------------------------
    cases.append(binary_case("bin_single_row_tp", ["yes"], ["yes"], "yes", "no"))
    cases.append(binary_case("bin_single_row_tn", ["no"], ["no"], "yes", "no"))
    cases.append(binary_case("bin_single_row_fp", ["no"], ["yes"], "yes", "no"))
    cases.append(binary_case("bin_single_row_fn", ["yes"], ["no"], "yes", "no"))
    cases.append(binary_case("bin_empty_input", [], [], "yes", "no"))
    cases.append(
        binary_case(
            "bin_no_included_rows",
            [None, "maybe", "yes", "no", "YES"],
            ["yes", "no", None, "maybe", "yes"],
            "yes",
            "no",
        )
    )
    cases.append(
        binary_case(
            "bin_all_rows_positive_perfect",
            ["yes"] * 7, ["yes"] * 7, "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_all_rows_negative_perfect",  # precision, recall, f1 all undefined
            ["no"] * 6, ["no"] * 6, "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_positive_never_predicted",  # precision undefined, recall 0
            ["yes", "no", "yes", "no", "no"],
            ["no", "no", "no", "no", "no"],
            "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_positive_never_true",  # recall undefined, precision 0
            ["no", "no", "no", "no"],
            ["yes", "no", "yes", "no"],
            "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_negative_never_predicted",
            ["yes", "no", "yes", "no"],
            ["yes", "yes", "yes", "yes"],
            "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_perfect",
            ["yes", "no", "no", "yes", "yes", "no", "yes"],
            ["yes", "no", "no", "yes", "yes", "no", "yes"],
            "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_all_wrong",
            ["yes", "no", "no", "yes", "yes", "no"],
            ["no", "yes", "yes", "no", "no", "yes"],
            "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_nulls_and_maybe",
            ["yes", None, "no", "maybe", "yes", "no", "yes", None, "no"],
            ["yes", "no", None, "yes", "maybe", "no", "no", None, "yes"],
            "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_case_sensitive_values",  # "Yes"/"NO" are out of vocabulary
            ["yes", "Yes", "no", "NO", "yes", "no"],
            ["yes", "yes", "no", "no", "no", "yes"],
            "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_empty_string_is_oov",
            ["yes", "", "no", "yes"],
            ["", "yes", "no", "yes"],
            "yes", "no",
        )
    )
    cases.append(
        binary_case(
            "bin_positive_sorts_after_negative",  # positive "b" > negative "a"
            ["b", "a", "b", "a", "b"],
            ["b", "b", "a", "a", "b"],
            "b", "a",
        )
    )
    cases.append(
        binary_case(
            "bin_positive_sorts_before_negative",  # positive "a" < negative "b"
            ["b", "a", "b", "a", "b"],
            ["b", "b", "a", "a", "b"],
            "a", "b",
        )
    )

    # --- random cases -----------------------------------------------------
    sizes = [2, 3, 5, 8, 10, 13, 20, 25, 37, 50, 64, 77, 100, 128, 150, 200,
             250, 300, 333, 400, 450, 500, 500, 1, 4, 9]
    for i, n in enumerate(sizes):
        positive, negative = BINARY_VOCABS[i % len(BINARY_VOCABS)]
        p_pos = float(rng.choice([0.05, 0.2, 0.5, 0.8, 0.95]))
        p_correct = float(rng.choice([0.0, 0.3, 0.6, 0.85, 0.97, 1.0]))
        dirty = i % 3 == 0
        p_null = 0.08 if dirty else 0.0
        p_oov = 0.05 if dirty else 0.0
        gt = random_binary_column(rng, n, positive, negative, p_pos, p_null, p_oov)
        pred = random_binary_pred(rng, gt, positive, negative, p_correct, p_null, p_oov)
        tag = "dirty" if dirty else "clean"
        cases.append(
            binary_case(f"bin_random_{i:02d}_n{n}_{tag}", gt, pred, positive, negative)
        )
    return cases


# --------------------------------------------------------------------------
# multiclass classification
# --------------------------------------------------------------------------


def multiclass_expected(gt, pred, labels):
    if labels is not None:
        vocab = set(labels)
        keep = [
            (g, p)
            for g, p in zip(gt, pred)
            if g is not None and p is not None and g in vocab and p in vocab
        ]
        classes = list(labels)
    else:
        keep = [(g, p) for g, p in zip(gt, pred) if g is not None and p is not None]
        # classes = distinct values of either field over the *included* rows
        classes = sorted({g for g, _ in keep} | {p for _, p in keep})
    excluded = len(gt) - len(keep)
    support = len(keep)
    exp = {"classes": classes, "support": support, "excluded": excluded}

    if support == 0:
        exp.update(
            accuracy=None, accuracy_ci_low=None, accuracy_ci_high=None,
            per_class=[
                {"class": c, "precision": None, "recall": None,
                 "f1_score": None, "support": 0}
                for c in classes
            ],
        )
        for avg in ("macro", "micro", "weighted"):
            exp[f"{avg}_precision"] = None
            exp[f"{avg}_recall"] = None
            exp[f"{avg}_f1_score"] = None
        exp["confusion_matrix"] = []
        return exp

    y_true = [g for g, _ in keep]
    y_pred = [p for _, p in keep]
    accuracy = accuracy_score(y_true, y_pred)
    correct = sum(1 for g, p in keep if g == p)
    a_lo, a_hi = wilson(correct, support)
    exp.update(accuracy=num(accuracy), accuracy_ci_low=a_lo, accuracy_ci_high=a_hi)

    p, r, f, s = precision_recall_fscore_support(
        y_true, y_pred, average=None, labels=classes, zero_division=np.nan
    )
    exp["per_class"] = [
        {
            "class": c,
            "precision": num(p[k]),
            "recall": num(r[k]),
            "f1_score": num(f[k]),
            "support": int(s[k]),
        }
        for k, c in enumerate(classes)
    ]
    for avg in ("macro", "micro", "weighted"):
        ap, ar, af, _ = precision_recall_fscore_support(
            y_true, y_pred, average=avg, labels=classes, zero_division=np.nan
        )
        exp[f"{avg}_precision"] = num(ap)
        exp[f"{avg}_recall"] = num(ar)
        exp[f"{avg}_f1_score"] = num(af)
    cm = confusion_matrix(y_true, y_pred, labels=classes)
    exp["confusion_matrix"] = cells(cm, classes)
    return exp


def multiclass_case(name, gt, pred, labels=None):
    return {
        "name": name,
        "kind": "multiclass",
        "input": {
            "gt": list(gt),
            "pred": list(pred),
            "labels": None if labels is None else list(labels),
        },
        "expected": multiclass_expected(gt, pred, labels),
    }


MC_VOCABS = [
    ["cat", "dog", "pig"],
    ["A", "B", "C", "D"],
    ["positive", "neutral", "negative"],
    ["1", "2", "3", "4", "5"],
    ["a", "B", "c", "D", "e", "F"],  # mixed case: byte order puts upper first
    ["red", "green", "blue", "yellow", "black", "white", "gray", "brown"],
    ["x", "y"],
]


def random_mc_rows(rng, n, vocab, p_correct, p_null, p_oov, skew):
    k = len(vocab)
    if skew:
        w = np.array([2.0 ** (-j) for j in range(k)])
    else:
        w = np.ones(k)
    w = w / w.sum()
    gt, pred = [], []
    for _ in range(n):
        g = str(vocab[int(rng.choice(k, p=w))])
        if rng.random() < p_correct:
            pv = g
        else:
            pv = str(vocab[int(rng.integers(k))])
        u = rng.random()
        if u < p_null:
            if rng.random() < 0.5:
                g = None
            else:
                pv = None
        elif u < p_null + p_oov:
            if rng.random() < 0.5:
                g = "maybe"
            else:
                pv = "maybe"
        gt.append(g)
        pred.append(pv)
    return gt, pred


def multiclass_cases(rng):
    cases = []
    mc = multiclass_case
    # --- explicit edge cases -------------------------------------------
    cases.append(mc("mc_single_row", ["cat"], ["cat"]))
    cases.append(mc("mc_single_row_wrong", ["cat"], ["dog"]))
    cases.append(mc("mc_single_row_labels", ["cat"], ["dog"], ["cat", "dog", "pig"]))
    cases.append(mc("mc_empty_input", [], []))
    cases.append(mc("mc_empty_input_labels", [], [], ["a", "b", "c"]))
    cases.append(mc("mc_all_null", [None, "a", None], ["a", None, None]))
    cases.append(
        mc("mc_no_included_rows_labels",
           ["maybe", None, "a", "zzz"], ["a", "b", "maybe", "b"], ["a", "b"])
    )
    cases.append(mc("mc_all_one_class_perfect", ["dog"] * 9, ["dog"] * 9))
    cases.append(
        mc("mc_all_one_class_labels", ["dog"] * 5, ["dog"] * 5, ["cat", "dog", "pig"])
    )
    cases.append(
        mc("mc_class_never_predicted",
           ["a", "b", "c", "a", "b", "c", "c"],
           ["a", "b", "a", "a", "b", "b", "a"])
    )
    cases.append(
        mc("mc_class_never_true",
           ["a", "b", "a", "b", "a"],
           ["a", "c", "c", "b", "a"])
    )
    cases.append(
        mc("mc_label_never_seen",  # "d" in labels, in neither field
           ["a", "b", "c", "a"], ["a", "c", "c", "b"], ["a", "b", "c", "d"])
    )
    cases.append(
        mc("mc_nulls_and_maybe_no_labels",  # "maybe" becomes a class
           ["a", None, "b", "maybe", "c", "a", "b"],
           ["a", "b", None, "a", "maybe", "a", "c"])
    )
    cases.append(
        mc("mc_nulls_and_maybe_labels",  # "maybe" excluded
           ["a", None, "b", "maybe", "c", "a", "b"],
           ["a", "b", None, "a", "maybe", "a", "c"],
           ["a", "b", "c"])
    )
    cases.append(
        mc("mc_value_only_in_excluded_row",  # "z" is only in a row with a null
           ["a", "z", "b", "a"], ["a", None, "b", "b"])
    )
    cases.append(
        mc("mc_perfect",
           ["x", "y", "z", "x", "y", "z", "z"],
           ["x", "y", "z", "x", "y", "z", "z"])
    )
    cases.append(
        mc("mc_all_wrong",
           ["x", "y", "z", "x", "y", "z"],
           ["y", "z", "x", "z", "x", "y"])
    )
    cases.append(
        mc("mc_all_wrong_disjoint_predictions",  # every class has p or r undefined
           ["a", "a", "a", "b"], ["c", "c", "d", "d"])
    )
    cases.append(
        mc("mc_weighted_all_zero_weights",
           # with labels ["b","c"] the only non-nan precisions belong to
           # classes of support 0 -> sklearn falls back to an unweighted mean
           ["a", "a", "a"], ["b", "c", "b"], ["a", "b", "c"])
    )
    cases.append(
        mc("mc_labels_unsorted_order",
           ["pig", "cat", "dog", "cat", "pig", "dog"],
           ["pig", "dog", "dog", "cat", "cat", "dog"],
           ["pig", "dog", "cat"])
    )
    cases.append(
        mc("mc_mixed_case_byte_order",
           ["b", "B", "a", "A", "b", "a"],
           ["b", "b", "A", "A", "B", "a"])
    )

    # --- random cases -----------------------------------------------------
    sizes = [2, 3, 6, 10, 15, 20, 30, 45, 60, 80, 100, 125, 160, 200, 240,
             300, 350, 400, 450, 500, 500, 7, 12]
    for i, n in enumerate(sizes):
        vocab = MC_VOCABS[i % len(MC_VOCABS)]
        p_correct = float(rng.choice([0.0, 0.25, 0.5, 0.75, 0.9, 1.0]))
        dirty = i % 3 == 1
        p_null = 0.07 if dirty else 0.0
        p_oov = 0.05 if dirty else 0.0
        skew = i % 2 == 0
        gt, pred = random_mc_rows(rng, n, vocab, p_correct, p_null, p_oov, skew)
        use_labels = i % 4 in (1, 2)
        labels = None
        if use_labels:
            labels = list(vocab)
            if i % 8 == 1:
                labels = labels + ["unused"]
            if i % 8 == 2 and len(labels) > 2:
                labels = labels[:-1]  # drop a class: its rows are excluded
            perm = rng.permutation(len(labels))
            labels = [labels[int(j)] for j in perm]
        tag = ("dirty" if dirty else "clean") + ("_labels" if use_labels else "")
        cases.append(mc(f"mc_random_{i:02d}_n{n}_{tag}", gt, pred, labels))
    return cases


# --------------------------------------------------------------------------
# intervals
# --------------------------------------------------------------------------


def interval_expected(values, confidence):
    n = len(values)
    exp = {"n": n}
    if n == 0:
        exp.update(mean=None, std_dev=None, stderr=None,
                   ci_low=None, ci_high=None, method=None)
        return exp
    arr = np.asarray(values, dtype=np.float64)
    mean = float(np.mean(arr))
    if n >= 2:
        std = float(np.std(arr, ddof=1))
        se = std / math.sqrt(n)
    else:
        std = None
        se = None
    exp.update(mean=num(mean), std_dev=num(std), stderr=num(se))
    if all(v == 0.0 or v == 1.0 for v in values):
        count = int(sum(1 for v in values if v == 1.0))
        lo, hi = wilson(count, n, alpha=1.0 - confidence)
        exp.update(ci_low=lo, ci_high=hi, method="wilson")
    else:
        if n >= 2:
            t = float(scipy.stats.t.ppf((1.0 + confidence) / 2.0, n - 1))
            lo, hi = mean - t * se, mean + t * se
            exp.update(ci_low=num(lo), ci_high=num(hi), method="t")
        else:
            exp.update(ci_low=None, ci_high=None, method="t")
    return exp


def interval_case(name, values, confidence=0.95):
    values = [float(v) for v in values]
    return {
        "name": name,
        "input": {"values": values, "confidence": confidence},
        "expected": interval_expected(values, confidence),
    }


def interval_cases(rng):
    ic = interval_case
    cases = [
        ic("iv_empty", []),
        ic("iv_empty_090", [], 0.9),
        ic("iv_single_zero", [0]),
        ic("iv_single_one", [1]),
        ic("iv_single_one_099", [1], 0.99),
        ic("iv_single_continuous", [0.5]),
        ic("iv_single_negative", [-3.25]),
        ic("iv_all_zeros", [0] * 10),
        ic("iv_all_ones", [1] * 10),
        ic("iv_all_zeros_large", [0] * 500),
        ic("iv_all_ones_090", [1] * 25, 0.9),
        ic("iv_n2_binary", [0, 1]),
        ic("iv_n2_continuous", [0.25, 0.75]),
        ic("iv_n2_equal_continuous", [2.5, 2.5]),
        ic("iv_n2_negative_099", [-1.5, -4.0], 0.99),
        ic("iv_constant_continuous", [0.7] * 8),
        ic("iv_binary_small", [1, 0, 1, 1, 0]),
        ic("iv_binary_099", [1, 1, 0, 1, 1, 1, 0, 1, 1, 1], 0.99),
        ic("iv_binary_090", [0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0], 0.9),
        ic("iv_almost_binary", [0, 1, 1, 0, 0.5]),  # one non-binary value -> t
        ic("iv_two_valued_not_binary", [0, 2, 0, 2, 2]),
        ic("iv_negative_values", [-1.0, -2.5, -0.25, -7.0, -3.5, -0.001]),
        ic("iv_mixed_sign", [-10.0, 5.5, 3.25, -2.0, 0.0, 8.75, -1.125]),
        ic("iv_large_magnitude", [1.0e9 + 1.0, 1.0e9 + 3.0, 1.0e9 - 2.0, 1.0e9 + 7.0]),
        ic("iv_huge_spread", [1.0e12, -1.0e12, 3.0e11, 5.0, -7.0e10]),
        ic("iv_tiny_values", [1.0e-9, 2.0e-9, 1.5e-9, 3.0e-9, 2.5e-9], 0.9),
    ]
    # random 0/1 lists of various sizes
    for k, n in enumerate([3, 7, 20, 50, 100, 250, 500]):
        p = float(rng.choice([0.02, 0.1, 0.5, 0.9, 0.98]))
        vals = (rng.random(n) < p).astype(float).tolist()
        conf = [0.95, 0.9, 0.99][k % 3]
        cases.append(ic(f"iv_random_binary_{k:02d}_n{n}", vals, conf))
    # random continuous lists
    for k, n in enumerate([3, 5, 9, 30, 64, 200, 500]):
        kind = k % 4
        if kind == 0:
            vals = rng.random(n)  # scores in [0, 1)
        elif kind == 1:
            vals = rng.normal(50.0, 12.0, n)
        elif kind == 2:
            vals = rng.normal(-1.0e6, 3.0e4, n)  # large, negative
        else:
            vals = rng.exponential(2.0, n)
        conf = [0.95, 0.99, 0.95, 0.9][kind]
        cases.append(ic(f"iv_random_continuous_{k:02d}_n{n}", vals.tolist(), conf))
    return cases


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------


def write(path: Path, cases):
    doc = {"generator": GENERATOR, "versions": versions(), "cases": cases}
    text = json.dumps(doc, indent=1, allow_nan=False, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def main():
    rng = np.random.default_rng(SEED)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    bin_cases = binary_cases(rng)
    mc_cases = multiclass_cases(rng)
    iv_cases = interval_cases(rng)
    for group in (bin_cases + mc_cases, iv_cases):
        names = [c["name"] for c in group]
        assert len(names) == len(set(names)), "duplicate case names"
    p1 = write(OUT_DIR / "classification.json", bin_cases + mc_cases)
    p2 = write(OUT_DIR / "intervals.json", iv_cases)
    print(f"{p1.relative_to(ROOT)}: {len(bin_cases)} binary, {len(mc_cases)} multiclass")
    print(f"{p2.relative_to(ROOT)}: {len(iv_cases)} interval cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
