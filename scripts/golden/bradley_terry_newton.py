#!/usr/bin/env python3
"""Golden cases for evalscore's `bradley_terry` fit on hard battle graphs: the exact
maximum-likelihood Bradley-Terry ratings by Newton's method with a dense Hessian (numpy's
`linalg.solve`), run until a step moves no strength by more than 1e-14.

The cases are the graphs on which an iterative fit that visits every pair per sweep is slow
or stops short: two well-connected groups joined by four battles, a model that lost once in
hundreds of battles, and 200 models each met by a few others. Ties count as half a win each
way; ratings are on the Elo scale (400 points per factor of 10 in odds), mean 1000.

Writes data/golden/bradley_terry_newton.json; deterministic (one seeded numpy Generator).

    pip install -r scripts/golden/requirements.txt
    python3 scripts/golden/bradley_terry_newton.py

Each case's battles are cells `[model_a, model_b, a_wins, b_wins, ties]`, doubled `doublings`
times, and then the cells of `bridge` once.
"""

from __future__ import annotations

import json
import math
import platform
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[2] / "data" / "golden" / "bradley_terry_newton.json"


def newton_elo(cells):
    models = sorted({m for c in cells for m in c[:2]})
    idx = {m: i for i, m in enumerate(models)}
    p = len(models)
    win = np.zeros((p, p))
    for a, b, aw, bw, t in cells:
        win[idx[a], idx[b]] += aw + t / 2
        win[idx[b], idx[a]] += bw + t / 2
    games = win + win.T

    def loglik(theta):
        d = theta[:, None] - theta[None, :]
        # Each ordered pair (i, j) counts i's wins over j once.
        return float(np.sum(win * -np.logaddexp(0.0, -d)))

    theta = np.zeros(p)
    for _ in range(500):
        d = theta[:, None] - theta[None, :]
        s = 1.0 / (1.0 + np.exp(-d))
        grad = np.sum(win - games * s, axis=1)
        w = games * s * (1.0 - s)
        hess = np.diag(w.sum(axis=1)) - w
        # Model 0 pinned at 0: the Hessian without its row and column is positive definite.
        step = np.zeros(p)
        step[1:] = np.linalg.solve(hess[1:, 1:], grad[1:])
        t, base = 1.0, loglik(theta)
        while loglik(theta + t * step) < base - 1e-9 * abs(base) and t > 1e-12:
            t /= 2
        theta = theta + t * step
        if np.max(np.abs(t * step)) < 1e-14:
            break
    else:
        raise SystemExit("Newton did not converge")
    elo = 400.0 / math.log(10.0) * theta
    elo = elo - elo.mean() + 1000.0
    return dict(zip(models, (float(r) for r in elo)))


def draw(rng, strength, a, b, n):
    """`n` battles of a against b: [a_wins, b_wins, ties], a tie one time in ten."""
    pa = 1 / (1 + 10 ** (strength[b] - strength[a]))
    aw = bw = t = 0
    for _ in range(n):
        r = rng.random()
        if r < 0.1:
            t += 1
        elif r < 0.1 + 0.9 * pa:
            aw += 1
        else:
            bw += 1
    return [aw, bw, t]


def two_groups(rng):
    """Two groups of eight, every pair within a group met 300 times, and the bridge between
    them: g0-0 beat g1-0 once and lost once, g0-1 lost to g1-1 twice."""
    names = [f"g{g}-{k}" for g in range(2) for k in range(8)]
    strength = np.concatenate([rng.normal(0, 0.5, 8), rng.normal(1.5, 0.5, 8)])
    cells = []
    for g in range(2):
        for i in range(8):
            for j in range(i + 1, 8):
                a, b = 8 * g + i, 8 * g + j
                cells.append([names[a], names[b], *draw(rng, strength, a, b, 300)])
    return cells, [[names[0], names[8], 1, 1, 0], [names[1], names[9], 0, 2, 0]]


def near_separated(rng):
    """Six models; model-a lost one of its 400 battles."""
    names = [f"model-{c}" for c in "abcdef"]
    strength = rng.normal(0, 0.4, 6)
    cells = []
    for i in range(1, 6):
        for j in range(i + 1, 6):
            cells.append([names[i], names[j], *draw(rng, strength, i, j, 60)])
    for i in range(1, 6):
        cells.append([names[0], names[i], 80 if i > 1 else 79, 1 if i == 1 else 0, 0])
    return cells


def sparse(rng, p=200):
    """`p` models on a ring, each also met by two random others, 3 to 12 battles a pair."""
    names = [f"m{k:03d}" for k in range(p)]
    strength = rng.normal(0, 1.0, p)
    pairs = {(k, (k + 1) % p) for k in range(p)}
    for k in range(p):
        for o in rng.choice(p, 2, replace=False):
            if o != k:
                pairs.add((k, int(o)))
    cells = []
    for a, b in sorted(pairs):
        n = int(rng.integers(3, 13))
        aw, bw, t = draw(rng, strength, a, b, n)
        # Every ring pair both won and lost, so the graph stays strongly connected.
        if (b - a) % p == 1:
            aw, bw = max(aw, 1), max(bw, 1)
        cells.append([names[a], names[b], aw, bw, t])
    return cells


def main():
    rng = np.random.default_rng(52)
    cases = []
    groups, bridge = two_groups(rng)
    # The groups' battles doubled 9 times (each pair met 153,600 times; the state merged with
    # itself), then the bridge's 4 battles: the groups' gap rests on 4 of 4.3 million battles.
    for name, cells, doublings, extra in [("two-groups-joined-by-4", groups, 9, bridge),
                                         ("near-separated", near_separated(rng), 0, []),
                                         ("sparse-200", sparse(rng), 0, [])]:
        whole = [[a, b, x << doublings, y << doublings, t << doublings]
                 for a, b, x, y, t in cells] + extra
        cases.append({"name": name, "cells": cells, "doublings": doublings, "bridge": extra,
                      "ratings": newton_elo(whole)})
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    OUT.write_text(json.dumps({"generator": "scripts/golden/bradley_terry_newton.py",
                               "versions": versions, "cases": cases}, allow_nan=False) + "\n")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
