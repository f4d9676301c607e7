#!/usr/bin/env python3
"""A/B of two evalscore release binaries on the benchmark job and the template job.

    python3 scripts/bench/ab.py BASE_BIN NEW_BIN [ROUNDS] [--data FILE]

Runs scripts/bench/job.yaml and job_template.yaml over FILE (default
bench-data/syn_10000000.parquet, made by run_bench.py) with each binary, in alternation
(round 1: base then new, round 2: new then base, ...), `--threads 2 --keep id`, each as a
fresh process under /usr/bin/time. Prints per job the medians of wall time and peak RSS and
the ratios new/base. Copy both binaries to a fresh folder first: a binary whose pages are
already in the page cache in another state can differ in RSS by about 1 MiB.
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
JOBS = {"job": ROOT / "scripts/bench/job.yaml", "template": ROOT / "scripts/bench/job_template.yaml"}


def run(binary: str, task: Path, data: Path) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(dir=data.parent) as d:
        cmd = ["/usr/bin/time", "-f", "%e %M", binary, "run", str(task), "--input", str(data),
               "--out", d + "/o", "--quiet", "--threads", "2", "--keep", "id"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(p.stderr)
        wall, rss = p.stderr.strip().splitlines()[-1].split()
        return float(wall), int(rss) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("rounds", nargs="?", type=int, default=7)
    ap.add_argument("--data", type=Path, default=ROOT / "bench-data/syn_10000000.parquet")
    a = ap.parse_args()
    res = {(j, b): [] for j in JOBS for b in ("base", "new")}
    subprocess.run(["cat", str(a.data)], stdout=subprocess.DEVNULL, check=True)
    for r in range(a.rounds):
        order = [("base", a.base), ("new", a.new)]
        if r % 2:
            order.reverse()
        for j, task in JOBS.items():
            for name, b in order:
                res[(j, name)].append(run(b, task, a.data))
    for j in JOBS:
        bw, nw = (statistics.median(w for w, _ in res[(j, x)]) for x in ("base", "new"))
        br, nr = (statistics.median(m for _, m in res[(j, x)]) for x in ("base", "new"))
        print(f"{j:9s} wall base {bw:.3f}s new {nw:.3f}s ratio {nw / bw:.3f} | "
              f"rss base {br:.1f} MiB new {nr:.1f} MiB ratio {nr / br:.3f}")


if __name__ == "__main__":
    main()
