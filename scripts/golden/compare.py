#!/usr/bin/env python3
"""Golden cases for `evalscore compare`, computed with statsmodels and scipy.

Writes:
    data/golden/compare/base/scores.parquet   a baseline run's scores (fixture)
    data/golden/compare/new/scores.parquet    a new run's scores (fixture)
    data/golden/compare.json                  expected statistics: `cases` (one
        paired comparison each, fed to the Rust statistics directly) and
        `folders` (the whole comparison of the two fixture folders under
        several option sets, as `evalscore compare` must write it)

References:
    paired t test            scipy.stats.ttest_rel
    McNemar's exact test     statsmodels.stats.contingency_tables.mcnemar(exact=True)
    cluster-robust se, CI, p statsmodels OLS of the differences on a constant,
                             fit(cov_type="cluster", use_t=True): small-sample
                             factor G/(G-1)*(N-1)/(N-K), t with G-1 df
    paired se, CI            OLS of the differences on a constant (t, n-1 df)
    Holm                     statsmodels.stats.multitest.multipletests("holm")
    quantiles (CI, power)    scipy.stats.t.ppf

Deterministic (a fixed seed); with the versions in requirements.txt it
reproduces the files byte for byte.

Usage: pip install -r scripts/golden/requirements.txt && python3 scripts/golden/compare.py
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.stats as st
import statsmodels.api as sm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

SEED = 20251125
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "data" / "golden"
POWER = 0.8

warnings.filterwarnings("ignore", category=RuntimeWarning)


def num(x):
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        raise ValueError("infinite value in golden output")
    return x


def is_binary(values) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def paired(base, new, cluster, confidence, binary=None):
    """The statistics of one paired comparison (pairs with both values present)."""
    base = np.asarray(base, dtype=float)
    new = np.asarray(new, dtype=float)
    n = len(base)
    d = new - base
    if binary is None:
        binary = is_binary(base) and is_binary(new)
    out = {
        "n_pairs": n,
        "base_mean": num(base.mean()) if n else None,
        "new_mean": num(new.mean()) if n else None,
        "diff": num(d.mean()) if n else None,
        "pass_to_fail": int((new < base).sum()),
        "fail_to_pass": int((new > base).sum()),
        "n_clusters": None,
    }
    se = ci_low = ci_high = p = mdd = None
    if cluster is not None:
        groups = np.asarray(cluster)
        g = len(set(groups.tolist()))
        out["n_clusters"] = g
        out["test"] = "cluster_t"
        if n >= 2 and g >= 2:
            r = sm.OLS(d, np.ones(n)).fit(
                cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
            )
            assert r.df_resid_inference == g - 1
            se = r.bse[0]
            lo, hi = r.conf_int(alpha=1 - confidence)[0]
            ci_low, ci_high = lo, hi
            p = r.pvalues[0]
            df = g - 1
    else:
        if n >= 2:
            r = sm.OLS(d, np.ones(n)).fit()
            se = r.bse[0]
            lo, hi = r.conf_int(alpha=1 - confidence)[0]
            ci_low, ci_high = lo, hi
            df = n - 1
        if binary:
            out["test"] = "mcnemar_exact"
            b = int(((base == 1) & (new == 0)).sum())
            c = int(((base == 0) & (new == 1)).sum())
            p = mcnemar([[0, b], [c, 0]], exact=True).pvalue if n else None
        else:
            out["test"] = "paired_t"
            if n >= 2:
                p = st.ttest_rel(new, base).pvalue
    if se is not None and se > 0:
        mdd = (st.t.ppf((1 + confidence) / 2, df) + st.t.ppf(POWER, df)) * se
    elif se is not None:
        mdd = 0.0
    if se is not None and se == 0:
        # Every difference equal: no interval width; ttest_rel's p is NaN for a
        # zero difference and 0 otherwise, statsmodels' conf_int is the point.
        ci_low = ci_high = d.mean()
    out.update(
        diff_se=num(se),
        ci_low=num(ci_low),
        ci_high=num(ci_high),
        p_value=num(p),
        min_detectable_diff=num(mdd),
    )
    return out


def verdict(row, confidence, max_drop):
    p, diff = row["p_value"], row["diff"]
    if p is None or diff is None or not p < 1 - confidence:
        return "tied"
    if diff < -max_drop:
        return "regressed"
    if diff > max_drop:
        return "improved"
    return "tied"


def holm(rows):
    idx = [i for i, r in enumerate(rows) if r["p_value"] is not None]
    if idx:
        adj = multipletests([rows[i]["p_value"] for i in idx], method="holm")[1]
        for i, a in zip(idx, adj):
            rows[i]["p_value_holm"] = num(a)
    for r in rows:
        r.setdefault("p_value_holm", None)


# ---------------------------------------------------------------------------
# direct cases
# ---------------------------------------------------------------------------


def cases(rng):
    out = []

    def add(name, base, new, cluster=None, confidence=0.95):
        exp = paired(base, new, cluster, confidence)
        out.append(
            {
                "name": name,
                "base": [float(x) for x in base],
                "new": [float(x) for x in new],
                "cluster": None if cluster is None else [str(c) for c in cluster],
                "confidence": confidence,
                "expected": exp,
            }
        )

    b = rng.integers(0, 2, 40)
    n = np.where(rng.random(40) < 0.2, 1 - b, b)
    add("binary_40", b, n)
    b = (rng.random(5000) < 0.7).astype(int)
    n = np.where(rng.random(5000) < 0.08, (rng.random(5000) < 0.3).astype(int), b)
    add("binary_5000_small_p", b, n)
    add("binary_5000_c90", b, n, confidence=0.9)
    b = (rng.random(3000) < 0.5).astype(int)
    n = b.copy()
    flip = rng.choice(3000, 700, replace=False)
    n[flip] = 1 - n[flip]
    add("binary_many_flips", b, n)
    add("binary_no_flips", [1, 0, 1, 1], [1, 0, 1, 1])
    add("binary_one_flip", [1, 0, 1, 1], [0, 0, 1, 1])
    add("binary_single_pair", [1], [0])
    b = rng.random(200)
    n = np.clip(b + rng.normal(0.03, 0.1, 200), 0, 1)
    add("continuous_200", b, n)
    add("continuous_200_c99", b, n, confidence=0.99)
    add("continuous_constant_diff", [0.5, 0.25, 0.75], [0.75, 0.5, 1.0])
    add("continuous_two_pairs", [0.2, 0.4], [0.3, 0.9])
    cl = rng.integers(0, 12, 200)
    add("continuous_200_clustered", b, n, cluster=cl)
    b = (rng.random(600) < 0.6).astype(int)
    n = np.where(rng.random(600) < 0.15, 1 - b, b)
    cl = np.repeat(np.arange(60), 10)
    add("binary_600_clustered_60", b, n, cluster=cl)
    add("binary_600_clustered_60_c80", b, n, cluster=cl, confidence=0.8)
    add("clustered_two_clusters", [1, 0, 1, 0, 1], [0, 0, 1, 1, 0], cluster=["a", "a", "b", "b", "b"])
    return out


# ---------------------------------------------------------------------------
# fixture folders
# ---------------------------------------------------------------------------

SUBJECTS = ["algebra", "biology", "chemistry", "history"]


def folders(rng):
    n_rows = 160
    ids = np.arange(n_rows)
    subject = rng.choice(SUBJECTS, n_rows).astype(object)
    subject[rng.choice(n_rows, 6, replace=False)] = None
    passage = rng.integers(0, 25, n_rows)
    b_correct = (rng.random(n_rows) < 0.75).astype(float)
    # Chemistry got worse in the new run.
    p_flip = np.where(subject == "chemistry", 0.45, 0.08)
    n_correct = np.where(rng.random(n_rows) < p_flip, 0.0, b_correct)
    n_correct = np.where((rng.random(n_rows) < 0.05), 1.0, n_correct)
    b_f1 = np.round(rng.random(n_rows), 4)
    n_f1 = np.round(np.clip(b_f1 + rng.normal(-0.02, 0.15, n_rows), 0, 1), 4)
    b_f1_null = rng.random(n_rows) < 0.04
    n_f1_null = rng.random(n_rows) < 0.04

    base_ids = ids[:150]
    new_ids = ids[7:]
    base_order = rng.permutation(base_ids)
    new_order = rng.permutation(new_ids)

    def table(order, correct, f1, f1_null, extra):
        cols = {
            "id": pa.array(order, pa.int64()),
            "subject": pa.array([subject[i] for i in order], pa.string()),
            "passage": pa.array([int(passage[i]) for i in order], pa.int64()),
            "exact__is_correct": pa.array([correct[i] for i in order], pa.float64()),
            "f1__score": pa.array(
                [None if f1_null[i] else float(f1[i]) for i in order], pa.float64()
            ),
            "mcqa__completion_validity": pa.array(
                ["valid" if correct[i] else "invalid" for i in order], pa.string()
            ),
        }
        cols.update(extra(order))
        return pa.table(cols)

    base = table(
        base_order,
        b_correct,
        b_f1,
        b_f1_null,
        lambda o: {"judge__score": pa.array([float(i % 5) for i in o], pa.float64())},
    )
    new = table(new_order, n_correct, n_f1, n_f1_null, lambda o: {})
    for name, t in (("base", base), ("new", new)):
        d = OUT / "compare" / name
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(t, d / "scores.parquet", compression="zstd")

    common = sorted(set(base_ids.tolist()) & set(new_ids.tolist()))
    only_base = sorted(set(base_ids.tolist()) - set(new_ids.tolist()))
    only_new = sorted(set(new_ids.tolist()) - set(base_ids.tolist()))
    columns = {
        "exact__is_correct": (b_correct, n_correct, None, None),
        "f1__score": (b_f1, n_f1, b_f1_null, n_f1_null),
    }

    def compare(cluster, group_by, confidence, max_drop):
        rows = []
        for col, (bv, nv, bnull, nnull) in columns.items():
            present = [
                i for i in common if not (bnull is not None and (bnull[i] or nnull[i]))
            ]
            binary = is_binary([bv[i] for i in present]) and is_binary(
                [nv[i] for i in present]
            )
            groups = [None]
            if group_by:
                groups += sorted({subject[i] for i in ids if subject[i] is not None})
            for g in groups:
                def member(i):
                    return g is None or subject[i] == g

                sel = [i for i in present if member(i)]
                r = paired(
                    [bv[i] for i in sel],
                    [nv[i] for i in sel],
                    None if cluster is None else [passage[i] for i in sel],
                    confidence,
                    binary=binary,
                )
                r["column"] = col
                r["group"] = g
                r["only_base"] = sum(1 for i in only_base if member(i))
                r["only_new"] = sum(1 for i in only_new if member(i))
                r["missing_pairs"] = sum(1 for i in common if member(i)) - len(sel)
                chosen = set(sel)
                r["pass_to_fail_keys"] = [
                    int(i) for i in base_order if i in chosen and nv[i] < bv[i]
                ][:100]
                rows.append(r)
        holm(rows)
        for r in rows:
            r["verdict"] = verdict(r, confidence, max_drop or 0.0)
        return {
            "options": {
                "cluster": cluster,
                "group_by": group_by,
                "confidence": confidence,
                "max_drop": max_drop,
            },
            "rows": rows,
        }

    return [
        compare(None, None, 0.95, None),
        compare(None, "subject", 0.95, 0.02),
        compare("passage", "subject", 0.9, 0.05),
    ], {"only_base": only_base, "only_new": only_new}


def main():
    rng = np.random.default_rng(SEED)
    c = cases(rng)
    f, only = folders(rng)
    doc = {
        "generator": "scripts/golden/compare.py",
        "power": POWER,
        "cases": c,
        "folders": {"key": "id", "only_keys": only, "runs": f},
    }
    path = OUT / "compare.json"
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
