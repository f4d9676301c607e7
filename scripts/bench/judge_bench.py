#!/usr/bin/env python3
"""Judge pipeline benchmark (BENCHMARKS.md, "Model-graded scorers").

    python3 scripts/bench/judge_bench.py [--fresh-rows 100000] [--cached-rows 1000000] [--threads 2]
    python3 scripts/bench/judge_bench.py --pairwise [--fresh-rows 100000]

1. Builds target/dist/evalscore and evalscore-gen if missing, and generates
   bench-data/syn_N_rg100k.parquet (the benchmark generator's rows, row groups of 100,000
   rows, so that both workers judge) for both sizes.
2. Starts `evalscore-gen judge-server` (an OpenAI-compatible server that answers every request
   at once) on 127.0.0.1.
3. Fresh: scores --fresh-rows rows with scripts/bench/judge_job.yaml (concurrency 64) into an
   empty cache: judged rows/s (every row one request) and peak RSS.
4. Fills the cache for --cached-rows rows (one untimed run), then times a fully cached rerun of
   the same rows: rows/s and peak RSS, and checks that it sent no request.
With --pairwise, step 3 only, with scripts/bench/judge_pairwise_job.yaml instead: every row a
distinct pair asked both ways (`swap: true`, two requests per pair): judged pairs/s.
Wall time is measured around the whole process; peak RSS is /usr/bin/time's maximum resident
set size.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "bench-data"
EVALSCORE = ROOT / "target" / "dist" / "evalscore"
GEN = ROOT / "target" / "dist" / "evalscore-gen"


def build() -> None:
    if not EVALSCORE.exists() or not GEN.exists():
        subprocess.run(
            ["cargo", "build", "--profile", "dist", "-p", "evalscore-cli", "-p", "evalscore-gen"],
            cwd=ROOT,
            check=True,
        )


def data(rows: int) -> Path:
    DATA.mkdir(exist_ok=True)
    # Row groups of 100,000 rows: a row group is one worker's unit, so both cores judge.
    path = DATA / f"syn_{rows}_rg100k.parquet"
    if not path.exists():
        subprocess.run(
            [str(GEN), "synthetic", "--rows", str(rows), "--row-group-size", "100000",
             "--out", str(path)],
            check=True,
        )
    return path


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in KiB, stderr) of one run."""
    start = time.perf_counter()
    p = subprocess.run(
        ["/usr/bin/time", "-f", "RSS_KB=%M"] + cmd, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    rss = next(int(l[7:]) for l in p.stderr.splitlines() if l.startswith("RSS_KB="))
    return wall, rss, p.stderr


def run(url: str, input_: Path, out: Path, cache: Path, threads: int,
        task: str = "judge_job.yaml") -> tuple[float, int, dict]:
    wall, rss, _ = timed(
        [
            str(EVALSCORE), "run", str(HERE / task), "--input", str(input_),
            "--out", str(out), "--overwrite", "--cache", str(cache), "--set", f"url={url}",
            "--threads", str(threads), "--quiet",
        ]
    )
    return wall, rss, json.loads((out / "run.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fresh-rows", type=int, default=100_000)
    ap.add_argument("--cached-rows", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pairwise", action="store_true",
                    help="time the pairwise judge with swap instead (fresh rows only)")
    args = ap.parse_args()
    build()
    if args.pairwise:
        pairwise(args)
        return
    fresh_in, cached_in = data(args.fresh_rows), data(args.cached_rows)
    server = subprocess.Popen([str(GEN), "judge-server"], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip().removeprefix("URL=")
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            wall, rss, rj = run(url, fresh_in, tmp / "fresh", tmp / "fresh.sqlite", args.threads)
            sent = rj["judge"]["models"]["bench"]["requests_sent"]
            missing = sum(rj["missing"].values())  # rows without output send nothing
            assert sent + missing == args.fresh_rows, rj["judge"]
            print(f"| fresh, {args.fresh_rows:,} rows, concurrency 64 | {wall:.1f} s | "
                  f"{args.fresh_rows / wall:,.0f} judged rows/s | {rss / 1024:.0f} MiB |")
            _, fill_rss, _ = run(url, cached_in, tmp / "fill", tmp / "big.sqlite", args.threads)
            print(f"| filling the cache, {args.cached_rows:,} rows | | | {fill_rss / 1024:.0f} MiB |")
            wall, rss, rj = run(url, cached_in, tmp / "cached", tmp / "big.sqlite", args.threads)
            m = rj["judge"]["models"]["bench"]
            missing = sum(rj["missing"].values())
            assert m["requests_sent"] == 0 and m["cache_hits"] + missing == args.cached_rows, m
            print(f"| fully cached rerun, {args.cached_rows:,} rows | {wall:.1f} s | "
                  f"{args.cached_rows / wall:,.0f} rows/s | {rss / 1024:.0f} MiB |")
    finally:
        server.kill()


def pairwise(args: argparse.Namespace) -> None:
    fresh_in = data(args.fresh_rows)
    server = subprocess.Popen([str(GEN), "judge-server"], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip().removeprefix("URL=")
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            wall, rss, rj = run(url, fresh_in, tmp / "fresh", tmp / "fresh.sqlite", args.threads,
                                "judge_pairwise_job.yaml")
            m = rj["judge"]["models"]["bench"]
            sent = m["requests_sent"]
            pairs = args.fresh_rows - sum(rj["missing"].values())
            # A pair whose two answers are equal is the same request both ways: one is sent.
            assert sent + m["deduplicated"] == 2 * pairs, rj["judge"]
            print(f"| pairwise with swap, {pairs:,} fresh pairs ({sent:,} requests), "
                  f"concurrency 64 | {wall:.1f} s | {pairs / wall:,.0f} judged pairs/s | "
                  f"{rss / 1024:.0f} MiB |")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
