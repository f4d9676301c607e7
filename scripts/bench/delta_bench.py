#!/usr/bin/env python3
"""The cost of `--format delta`, measured as the other benchmarks are (fresh processes, wall
time and peak RSS, medians of alternating rounds):

1. the benchmark job (scripts/bench/job.yaml over the 10M-row synthetic file) writing a
   folder (`--out DIR --overwrite`) against appending to Delta tables (`--format delta`, a
   new run id each round, into one root that grows as a nightly root does);
2. N nightly appends of a small run (data/examples/qa.parquet, 300 rows) to one root: the
   time of each, so that the last can be set against the first (an append must not read all
   earlier data).

    python3 scripts/bench/delta_bench.py --rows 10000000 --runs 5 --appends 365

Uses target/dist/evalscore and evalscore-gen (built with `cargo build --profile dist` if
missing); `--profile release` uses target/release instead (built beforehand)."""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_bench as rb  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--appends", type=int, default=365)
    ap.add_argument("--profile", choices=["dist", "release"], default="dist")
    args = ap.parse_args()
    if args.profile == "dist":
        rb.ensure_binaries()
    else:
        rb.EVALSCORE = ROOT / "target" / "release" / "evalscore"
        rb.GEN = ROOT / "target" / "release" / "evalscore-gen"
        rb.ensure_binaries = lambda: None
    args.bin = rb.EVALSCORE
    src = rb.ensure_file(args.rows)
    job = str(ROOT / "scripts" / "bench" / "job.yaml")
    work = Path(tempfile.mkdtemp(prefix="delta-bench-"))
    try:
        print(f"machine: {rb.machine()}")
        logs = work / "logs"
        logs.mkdir()
        folder = work / "folder"
        lake = work / "lake"
        results: dict[str, list[tuple[float, float]]] = {"folder": [], "delta": []}
        for r in range(args.runs):
            base = [str(args.bin), "run", job, "--input", str(src), "--threads", str(args.threads), "--quiet"]
            for name, extra in [
                ("folder", ["--out", str(folder), "--overwrite"]),
                ("delta", ["--out", str(lake), "--format", "delta", "--run-id", f"round-{r}"]),
            ]:
                wall, rss = rb.measure(base + extra, logs / f"{name}_{r}.log")
                results[name].append((wall, rss))
                print(f"  round {r + 1}/{args.runs}  {name:<7} {wall:6.3f} s  {rss:6.0f} MiB", flush=True)
        med = {k: statistics.median(w for w, _ in v) for k, v in results.items()}
        rss = {k: statistics.median(m for _, m in v) for k, v in results.items()}
        print(f"\njob, {args.rows:,} rows, {args.runs} alternating rounds (medians):")
        print("| output | wall (s) | peak RSS (MiB) | wall / folder |")
        print("| --- | ---: | ---: | ---: |")
        for k in ("folder", "delta"):
            print(f"| {k} | {med[k]:.3f} | {rss[k]:.0f} | {med[k] / med['folder']:.2f}x |")

        qa_task = str(ROOT / "data" / "examples" / "qa.yaml")
        qa_in = str(ROOT / "data" / "examples" / "qa.parquet")
        nightly = work / "nightly"
        times = []
        for i in range(args.appends):
            argv = [str(args.bin), "run", qa_task, "--input", qa_in, "--out", str(nightly),
                    "--format", "delta", "--run-id", f"night-{i:04d}", "--quiet"]
            wall, _ = rb.measure(argv, logs / "append.log")
            times.append(wall)
        first = statistics.median(times[:5])
        last = statistics.median(times[-5:])
        print(f"\n{args.appends} appends of a 300-row run to one root: the first five {first:.3f} s "
              f"(median), the last five {last:.3f} s: {last / first:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
