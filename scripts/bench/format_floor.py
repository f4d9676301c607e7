#!/usr/bin/env python3
"""The files' own floor for "Many files" (see BENCHMARKS.md): how fast any reader could go.

    python scripts/bench/format_floor.py --one ONE.parquet --many FOLDER [--many FOLDER2 ...]
        [--runs 9] [--threads 2] [--evalscore target/dist/evalscore]
        [--gen target/dist/evalscore-gen]

In alternating rounds, each a fresh process:
1. `evalscore-gen format-floor` over the one file and over each folder, with the job's
   columns and without `id` (whose chunks the job may copy as stored instead of decoding
   them), each with and without the SHA-256 of the footers (what run.json records): per
   file one open, one read of the last 8 KiB, the footer parsed, the needed chunks read and
   every page decompressed; no value decoded, nothing scored. Its own wall clock (printed by
   the tool) is taken, not the process's.
2. The benchmark job (scripts/bench/job.yaml, as run_bench.py) over the one file.

Prints the medians and, for each folder and variant, the most the many files can score
against the one file per row: job / (job + floor(many) - floor(one)), since what the floor
adds over the one file no reader of these files avoids, and the rest of the job's work
(decoding, scoring, writing) is the same per row. The "Many files" target is 0.8.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
COLUMNS = "id,output,answer,choices,label_gt,label_pred"
VARIANTS = {
    "all columns, hashed": (COLUMNS, "true"),
    "all columns": (COLUMNS, "false"),
    "without id, hashed": (COLUMNS.replace("id,", ""), "true"),
    "without id": (COLUMNS.replace("id,", ""), "false"),
}


def floor(gen: Path, src: Path, columns: str, hash_: str, threads: int) -> float:
    out = subprocess.run(
        [str(gen), "format-floor", str(src), "--columns", columns, "--hash", hash_,
         "--threads", str(threads)],
        check=True, capture_output=True, text=True).stdout
    wall = [line for line in out.splitlines() if line.startswith("wall ")]
    return float(wall[-1].split()[1])


def job(evalscore: Path, src: Path, out: Path, threads: int) -> float:
    argv = [str(evalscore), "run", str(HERE / "job.yaml"), "--input", str(src), "--out", str(out),
            "--overwrite", "--quiet", "--threads", str(threads), "--keep", "id"]
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", type=Path, required=True)
    ap.add_argument("--many", type=Path, action="append", required=True)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--evalscore", type=Path, default=ROOT / "target/dist/evalscore")
    ap.add_argument("--gen", type=Path, default=ROOT / "target/dist/evalscore-gen")
    a = ap.parse_args()
    for b in (a.evalscore, a.gen):
        if not b.exists():
            sys.exit(f"{b} is missing: cargo build --profile dist -p evalscore-cli -p evalscore-gen")
    inputs = [a.one] + a.many
    floors: dict[tuple[str, Path], list[float]] = {}
    jobs: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.runs):
            for name, (columns, hash_) in VARIANTS.items():
                for src in inputs:
                    floors.setdefault((name, src), []).append(
                        floor(a.gen, src, columns, hash_, a.threads))
            jobs.append(job(a.evalscore, a.one, Path(tmp) / "out", a.threads))
            print(f"  round {r + 1}/{a.runs}: job over the one file {jobs[-1]:.3f} s", flush=True)
    one_job = statistics.median(jobs)
    print(f"\nThe job over {a.one}: median {one_job:.3f} s ({a.runs} runs)\n")
    print("| variant | input | floor median (s) | min (s) | added over the one file (s) | most the many files can score |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name in VARIANTS:
        one = statistics.median(floors[(name, a.one)])
        for src in inputs:
            w = floors[(name, src)]
            med = statistics.median(w)
            if src == a.one:
                print(f"| {name} | {src.name} | {med:.3f} | {min(w):.3f} | | |")
            else:
                added = med - one
                bound = one_job / (one_job + added)
                print(f"| {name} | {src.name} | {med:.3f} | {min(w):.3f} | {added:.3f} | {bound:.2f}x |")


if __name__ == "__main__":
    main()
