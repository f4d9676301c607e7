#!/usr/bin/env python3
"""Golden cases for evalscore's `length_controlled_win_rate`: the `alpaca-eval` package's own
`get_length_controlled_winrate` (alpaca_eval 0.6.6), with its GLMs `length_controlled_noreg`
(a difficulty per row) and `length_controlled_minimal` (none).

The package reads each instruction's difficulty from `df_gamed.csv` of a Hugging Face
dataset (`hf_hub_download`), which this script does not fetch: it replaces
`hf_hub_download` in the module's namespace with a local CSV it writes, one row per
instruction (`index`, `instruction_difficulty`, `model`), so the package's function runs
offline on the case's own difficulties. Each case is run twice: as the package runs it, and
with its GLM's liblinear run to a tolerance of 1e-12 (`glm_info` with `tol`), the exact
optimum evalscore computes; near a tie of two `C`s' cross-validated losses the default
tolerance can choose the other `C`. `fit_LogisticRegressionCV` is wrapped (it is still
the package's) only to record the fitted model's `C_` and coefficients.

The rows are given to the package in evalscore's canonical order (A's score, then B's length
minus A's, then the difficulty), since scikit-learn's `GroupKFold` deals rows to folds by
position. The answers mix one- and two-byte characters, so lengths are code points.

Writes data/golden/length_controlled.json; deterministic (one seeded numpy Generator).

    pip install -r scripts/golden/requirements.txt
    pip install alpaca-eval==0.6.6 --no-deps && pip install patsy python-dotenv datasets
    python3 scripts/golden/length_controlled.py
"""

from __future__ import annotations

import json
import logging
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import alpaca_eval
import alpaca_eval.metrics.glm_winrate as glm
from make_golden import versions

# The tolerance of the second, tight run of the package's function (its GLM's liblinear
# stops at 1e-4 by default), for the exact optimum evalscore computes.
TIGHT = 1e-12

OUT = Path(__file__).resolve().parents[2] / "data" / "golden" / "length_controlled.json"


def text(length: int) -> str:
    """An answer of `length` code points: two-byte `é`s, then `a`s."""
    return "é" * (length // 2) + "a" * (length - length // 2)


def run_package(rows, glm_name, tmp: Path, tol=None):
    """The package's LC win rate of `rows` (verdict, a_len, b_len, difficulty), in order;
    with `tol`, its GLM's liblinear runs to that tolerance instead of its default 1e-4."""
    csv = tmp / "df_gamed.csv"
    pd.DataFrame(
        {
            "index": range(len(rows)),
            "instruction_difficulty": [r[3] for r in rows],
            "model": "gamed",
        }
    ).to_csv(csv, index=False)
    glm.hf_hub_download = lambda **kwargs: str(csv)
    fitted = {}
    original = glm.fit_LogisticRegressionCV

    def recording(*args, **kwargs):
        model = original(*args, **kwargs)
        fitted["model"] = model
        return model

    glm.fit_LogisticRegressionCV = recording
    try:
        pref = {"A": 2.0, "B": 1.0, "tie": 1.5, "tie0": 0.0}
        df = pd.DataFrame(
            {
                "index": range(len(rows)),
                "output_1": [text(r[2]) for r in rows],
                "output_2": [text(r[1]) for r in rows],
                "preference": [pref[r[0]] for r in rows],
                "generator_1": "baseline",
                "generator_2": "model",
            }
        )
        info = None
        if tol is not None:
            info = dict(glm.GLM_INFO[glm_name])
            info["kwargs"] = {**info["kwargs"], "tol": tol, "max_iter": 100_000}
        out = glm.get_length_controlled_winrate(df, glm_name=glm_name, save_weights_dir=None, glm_info=info)
    finally:
        glm.fit_LogisticRegressionCV = original
    model = fitted["model"]
    names = list(model.feature_names_in_)
    coef = dict(zip(names, model.coef_[0]))
    return {
        "length_controlled_winrate": float(out["length_controlled_winrate"]),
        "lc_standard_error": float(out["lc_standard_error"]),
        "win_rate": float(out["win_rate"]),
        "standard_error": float(out["standard_error"]),
        "C_": float(model.C_[0]),
        "weight_length": float(coef["np.tanh(std_delta_len)"]),
        "weight_difficulty": float(coef["instruction_difficulty"]) if "instruction_difficulty" in coef else None,
        "weight_intercept": float(coef["not_gamed_baseline.astype(float)"]),
    }


def simulate(rng, n, *, difficulty, a_shift=0, a_bias=0.0, length_effect=1.5, tie_rate=0.1, spread=300):
    """Rows whose verdicts favour the longer answer (by `length_effect`) and, when given, the
    easier instruction."""
    rows = []
    for _ in range(n):
        a = int(rng.integers(20, 20 + spread)) + a_shift
        b = int(rng.integers(20, 20 + spread))
        d = float(np.round(rng.normal(0, 1), 6)) if difficulty else 0.0
        z = a_bias + length_effect * np.tanh((a - b) / spread) - (0.8 * d if difficulty else 0.0)
        u = rng.random()
        if u < tie_rate:
            v = "tie" if rng.random() < 0.5 else "tie0"
        else:
            v = "A" if rng.random() < 1 / (1 + np.exp(-z)) else "B"
        rows.append((v, a, b, d))
    return rows


def canonical(rows):
    score = {"A": 2, "tie": 1, "tie0": 1, "B": 0}
    return sorted(rows, key=lambda r: (score[r[0]], r[2] - r[1], r[3]))


def main():
    rng = np.random.default_rng(20240417)
    specs = [
        ("noreg_basic", dict(n=200, difficulty=True)),
        ("minimal_basic", dict(n=200, difficulty=False)),
        ("noreg_ties", dict(n=150, difficulty=True, tie_rate=0.45)),
        ("minimal_ties", dict(n=120, difficulty=False, tie_rate=0.5)),
        ("noreg_small", dict(n=12, difficulty=True, length_effect=0.2)),
        ("minimal_small", dict(n=9, difficulty=False, length_effect=0.0)),
        # Seeds of their own, found to make a C below 1 win.
        ("noreg_small_c", dict(seed=4, n=25, difficulty=True, length_effect=0.5, a_bias=0.5)),
        ("noreg_small_c_more", dict(seed=23, n=25, difficulty=True, length_effect=0.5, a_bias=0.5)),
        ("noreg_few", dict(n=40, difficulty=True, length_effect=1.0, a_bias=0.8)),
        ("minimal_few", dict(n=30, difficulty=False, length_effect=2.0, a_bias=-0.6)),
        ("noreg_a_much_longer", dict(n=300, difficulty=True, a_shift=150, a_bias=-0.5, length_effect=3.0)),
        ("minimal_a_much_longer", dict(n=300, difficulty=False, a_shift=150, a_bias=-0.5, length_effect=3.0)),
        ("noreg_b_wins", dict(n=250, difficulty=True, a_bias=-1.5)),
        ("noreg_large", dict(n=2000, difficulty=True, tie_rate=0.05)),
        ("minimal_large", dict(n=2000, difficulty=False, a_bias=0.7)),
    ]
    cases = []
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        for name, spec in specs:
            spec = dict(spec)
            seed = spec.pop("seed", None)
            rows = canonical(simulate(rng if seed is None else np.random.default_rng(seed), **spec))
            glm_name = "length_controlled_noreg" if spec["difficulty"] else "length_controlled_minimal"
            expected = run_package(rows, glm_name, Path(tmp))
            tight = run_package(rows, glm_name, Path(tmp), tol=TIGHT)
            cases.append(
                {
                    "name": name,
                    "glm": glm_name,
                    # [verdict, A's length, B's length, difficulty or null], in order.
                    "rows": [
                        ["tie" if v == "tie0" else v, a, b, d if spec["difficulty"] else None]
                        for v, a, b, d in rows
                    ],
                    "expected": expected,
                    "tight": tight,
                }
            )
            print(
                f"{name}: LC {expected['length_controlled_winrate']:.6f} C_ {expected['C_']:.6g};"
                f" tight LC {tight['length_controlled_winrate']:.6f} C_ {tight['C_']:.6g}"
            )
    doc = {
        "generator": "scripts/golden/length_controlled.py",
        "reference": "alpaca_eval.metrics.glm_winrate.get_length_controlled_winrate",
        "versions": {**versions(), "alpaca-eval": alpaca_eval.__version__},
        "cases": cases,
    }
    OUT.write_text(json.dumps(doc, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
