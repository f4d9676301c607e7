#!/usr/bin/env python3
"""Golden cases for evalscore's `bradley_terry` ratings: Chatbot Arena's `compute_mle_elo`
(its notebook's construction: a logistic regression without intercept or penalty over the
win table, a model's win doubled and a tie counted once each way, SCALE 400, BASE 10,
INIT_RATING 1000), with scikit-learn's `LogisticRegression` run to a tight tolerance.

Writes data/golden/bradley_terry.json; deterministic (one seeded numpy Generator).

    pip install -r scripts/golden/requirements.txt
    python3 scripts/golden/bradley_terry.py

An iterative fit on both sides: evalscore's ratings are compared with these to 1e-4 Elo
points (lbfgs stops about 1e-5 points short of the optimum).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from make_golden import versions

OUT = Path(__file__).resolve().parents[2] / "data" / "golden" / "bradley_terry.json"


def compute_mle_elo(battles, scale=400, base=10, init=1000):
    models = sorted({m for b in battles for m in (b[0], b[1])})
    idx = {m: i for i, m in enumerate(models)}
    p = len(models)
    win = np.zeros((p, p))
    for a, b, w in battles:
        if w == "A":
            win[idx[a], idx[b]] += 2
        elif w == "B":
            win[idx[b], idx[a]] += 2
        else:
            win[idx[a], idx[b]] += 1
            win[idx[b], idx[a]] += 1
    xs, ys, weights = [], [], []
    for i in range(p):
        for j in range(p):
            if i == j or win[i, j] + win[j, i] == 0:
                continue
            row = np.zeros(p)
            row[i], row[j] = math.log(base), -math.log(base)
            xs.append(row); ys.append(1.0); weights.append(win[i, j])
            xs.append(row); ys.append(0.0); weights.append(win[j, i])
    lr = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-12, max_iter=100000)
    lr.fit(np.array(xs), np.array(ys), sample_weight=np.array(weights))
    ratings = scale * lr.coef_[0] + init
    return dict(zip(models, (float(r) for r in ratings)))


def main():
    rng = np.random.default_rng(7)
    cases = []
    while len(cases) < 25:
        m = int(rng.integers(2, 9))
        models = [f"model-{chr(97 + k)}" for k in range(m)]
        strength = rng.normal(0, 1.2, m)
        n = int(rng.integers(40, 1500))
        battles = []
        for _ in range(n):
            a, b = rng.choice(m, 2, replace=False)
            pa = 1 / (1 + 10 ** ((strength[b] - strength[a])))
            r = rng.random()
            w = "tie" if r < 0.1 else ("A" if r < 0.1 + 0.9 * pa else "B")
            battles.append((models[a], models[b], w))
        # The fit exists only when each model both won and lost (strong connectivity);
        # cases here have enough battles, and one that does not is drawn again.
        names = sorted({x for bt in battles for x in bt[:2]})
        beat = {x: set() for x in names}
        for a, b, w in battles:
            if w in ("A", "tie"):
                beat[a].add(b)
            if w in ("B", "tie"):
                beat[b].add(a)
        def reach(start, edges):
            seen, stack = {start}, [start]
            while stack:
                for y in edges[stack.pop()]:
                    if y not in seen:
                        seen.add(y); stack.append(y)
            return seen
        back = {x: {y for y in names if x in beat[y]} for x in names}
        if len(reach(names[0], beat)) < len(names) or len(reach(names[0], back)) < len(names):
            continue
        cases.append({"name": f"bt-{len(cases)}",
                      "battles": [list(b) for b in battles],
                      "ratings": compute_mle_elo(battles)})
    # The example battles (data/examples/battles.jsonl): ratings from the human verdicts,
    # and the judge's agreement with the human.
    rows = [json.loads(line) for line in
            (OUT.parents[1] / "examples" / "battles.jsonl").read_text().splitlines()]
    from sklearn.metrics import cohen_kappa_score
    example = {"ratings": compute_mle_elo([(r["model_a"], r["model_b"], r["human"]) for r in rows]),
               "cohen_kappa": float(cohen_kappa_score([r["human"] for r in rows],
                                                      [r["judge"] for r in rows]))}
    OUT.write_text(json.dumps({"versions": versions(), "cases": cases, "example": example}) + "\n")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
