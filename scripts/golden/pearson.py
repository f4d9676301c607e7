#!/usr/bin/env python3
"""Golden cases for evalscore's `pearson` on values that defeat raw or plainly centred sums:
a constant side, values near 1e15 whose mean a running sum rounds, an infinite value, values
near 1e160 whose squares overflow. Each case has scipy's `pearsonr` and the exact coefficient
(Python fractions, the square root to 40 digits); the script checks that they agree to
`scipy_within` (1e-12, and 1e-7 near 1e15, where scipy's own centring rounds), so the cases
are ones scipy answers right. A row with an infinite value is left out by
evalscore (an exclusion): its expected figures are scipy's over the other rows, `n` those
rows. A constant side gives null (scipy: nan, with a ConstantInputWarning).

Writes data/golden/pearson.json; deterministic (one seeded numpy Generator).

    pip install -r scripts/golden/requirements.txt
    python3 scripts/golden/pearson.py
"""

from __future__ import annotations

import json
import math
import platform
import warnings
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

OUT = Path(__file__).resolve().parents[2] / "data" / "golden" / "pearson.json"


def exact(x, y):
    """The exact Pearson coefficient of finite x, y, or None when a side is constant."""
    fx, fy = [Fraction(v) for v in x], [Fraction(v) for v in y]
    n = len(fx)
    mx, my = sum(fx) / n, sum(fy) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(fx, fy))
    sxx = sum((a - mx) ** 2 for a in fx)
    syy = sum((b - my) ** 2 for b in fy)
    if sxx == 0 or syy == 0:
        return None
    getcontext().prec = 40
    r2 = sxy * sxy / (sxx * syy)
    r = (Decimal(r2.numerator) / Decimal(r2.denominator)).sqrt()
    return float(r if sxy >= 0 else -r)


def scipy_r(x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = stats.pearsonr(np.array(x), np.array(y)).statistic
    return None if math.isnan(r) else float(r)


def case(name, x, y, scipy_within=1e-12):
    kept = [(a, b) for a, b in zip(x, y) if math.isfinite(a) and math.isfinite(b)]
    kx, ky = [a for a, _ in kept], [b for _, b in kept]
    want, got = exact(kx, ky), scipy_r(kx, ky)
    assert (want is None) == (got is None), name
    if want is not None:
        assert abs(want - got) <= scipy_within, (name, want, got)
    # Values as text (shortest round-trip form, "inf" and "-inf"): JSON has no infinities,
    # and a reader's float parsing need not round correctly.
    text = lambda v: repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    return {"name": name, "x": [text(v) for v in x], "y": [text(v) for v in y],
            "n": len(kept), "scipy": got, "scipy_within": scipy_within, "exact": want}


def main():
    rng = np.random.default_rng(14)
    cases = []
    # A constant side whose running mean is not the constant (0.1 + 0.1 + 0.1 != 0.3).
    cases.append(case("constant-x", [0.1, 0.1, 0.1], [1.0, 2.0, 4.0]))
    cases.append(case("constant-y", [1.0, 5.0, 2.0, 7.0, 3.0, 3.0, 9.0],
                      [0.7] * 7))
    # Values near 1e15 (a step of 0.125, the spacing of doubles there), 2,000 rows spread by
    # about 300. scipy centres on the mean rounded to a double (off by up to 0.06, a part in
    # 5,000 of the spread): its answer is within 1e-7 of the exact one, a running sum's mean
    # (off by units) within 1e-5.
    base = 1e15
    dx = np.round(rng.normal(0, 300, 2000) * 8) / 8
    dy = np.round((0.5 * dx + rng.normal(0, 300, 2000)) * 8) / 8
    cases.append(case("near-1e15", [float(base + v) for v in dx],
                      [float(base + v) for v in dy], scipy_within=1e-7))
    # An infinite value on either side: left out.
    x = [float(v) for v in rng.normal(0, 1, 50)]
    y = [float(0.6 * a + b) for a, b in zip(x, rng.normal(0, 1, 50))]
    x[7], y[20] = math.inf, -math.inf
    cases.append(case("infinite", x, y))
    # Values near 1e160, whose squares overflow doubles.
    x = [float(v) * 1e160 for v in rng.normal(0, 1, 200)]
    y = [float(0.5 * a / 1e160 + b) * 1e160 for a, b in zip(x, rng.normal(0, 1, 200))]
    cases.append(case("near-1e160", x, y))
    # An ordinary case.
    x = [float(v) for v in rng.normal(10, 3, 300)]
    y = [float(-0.3 * a + b) for a, b in zip(x, rng.normal(0, 2, 300))]
    cases.append(case("ordinary", x, y))
    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "scipy": scipy.__version__}
    OUT.write_text(json.dumps({"generator": "scripts/golden/pearson.py", "versions": versions,
                               "cases": cases}, allow_nan=False) + "\n")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
