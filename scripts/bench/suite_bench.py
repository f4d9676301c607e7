#!/usr/bin/env python3
"""Suite benchmark: one `evalscore run SUITE.yaml` of N tasks against N separate `evalscore run`
processes over the same file (see BENCHMARKS.md, "Suites").

    python3 scripts/bench/suite_bench.py [--input bench-data/syn_10000000.parquet] [--tasks 20]
                                         [--runs 3] [--threads 2] [--bin target/dist/evalscore]
                                         [--mix]

1. Writes a suite of --tasks tasks into a temporary folder: the benchmark job
   (scripts/bench/job.yaml), named job01, job02, ... (with --mix, the job and its template
   variant job_template.yaml in alternation), all over --input (the file run_bench.py generates: `python3
   scripts/bench/run_bench.py --rows 10000000` makes bench-data/syn_10000000.parquet).
2. Runs, --runs times in alternation, after one untimed warm-up read of the file:
   - suite:    `evalscore run SUITE.yaml --out DIR --keep id --threads T` (one process)
   - separate: `evalscore run TASK --input FILE --out DIR/task=NAME --keep id --threads T`
               for every task, one process after the other
   each timed around the process(es) with a monotonic clock; peak RSS from /usr/bin/time
   when it is there (the largest of the separate processes).
3. Checks after the first round that every task's outputs are the same both ways, with the same
   --run-id: scores.parquet byte for byte, metrics.json and run.json equal but for times (and
   run.json's `threads`), metrics.parquet and confusion.parquet equal as tables without
   `run_started_at` (with pyarrow; without it, those two are skipped and the script says so).
   A difference stops the script with exit code 1.
4. Prints a Markdown table: wall median, min-max, peak RSS, and the ratio separate / suite,
   with the load average before and after (the machine should be otherwise idle).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
JOB, TEMPLATE = HERE / "job.yaml", HERE / "job_template.yaml"
TIMES = {"started_at", "finished_at", "wall_seconds", "run_started_at", "threads"}


def timed(cmds: list[list[str]]) -> tuple[float, int | None]:
    """Runs the commands one after the other; gives the wall seconds and the peak RSS (KiB)."""
    time_bin = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    peak = None
    start = time.monotonic()
    for cmd in cmds:
        if time_bin:
            with tempfile.NamedTemporaryFile("r") as f:
                subprocess.run([time_bin, "-f", "%M", "-o", f.name, *cmd], check=True, stdout=subprocess.DEVNULL)
                kib = int(f.read().strip().splitlines()[-1])
                peak = max(peak or 0, kib)
        else:
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start, peak


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in TIMES}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def same_outputs(a: Path, b: Path) -> list[str]:
    """The differences between two output folders, times aside."""
    bad = []
    if (a / "scores.parquet").read_bytes() != (b / "scores.parquet").read_bytes():
        bad.append(f"{a.name}: scores.parquet")
    for name in ["metrics.json", "run.json"]:
        if strip(json.loads((a / name).read_text())) != strip(json.loads((b / name).read_text())):
            bad.append(f"{a.name}: {name}")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return bad
    for name in ["metrics.parquet", "confusion.parquet"]:
        ta, tb = pq.read_table(a / name), pq.read_table(b / name)
        ta, tb = ta.drop(["run_started_at"]), tb.drop(["run_started_at"])
        if not ta.equals(tb) or ta.schema != tb.schema:
            bad.append(f"{a.name}: {name}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", type=Path, default=ROOT / "bench-data" / "syn_10000000.parquet")
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bin", type=Path, default=ROOT / "target" / "dist" / "evalscore")
    ap.add_argument("--mix", action="store_true", help="alternate job.yaml and job_template.yaml")
    args = ap.parse_args()
    if not args.input.exists():
        sys.exit(f"{args.input} is missing: `python3 scripts/bench/run_bench.py --rows 10000000` makes it")
    if not args.bin.exists():
        sys.exit(f"{args.bin} is missing: cargo build --profile dist -p evalscore-cli")
    binary, data = str(args.bin.resolve()), str(args.input.resolve())
    work = Path(tempfile.mkdtemp(prefix="suite-bench-"))
    names = [f"job{i + 1:02d}" for i in range(args.tasks)]
    kinds = [JOB, TEMPLATE] if args.mix else [JOB]
    tasks = [kinds[i % len(kinds)] for i in range(args.tasks)]
    load_before = os.getloadavg()
    suite = work / "suite.yaml"
    suite.write_text(
        f"inputs: [{json.dumps(data)}]\ntasks:\n"
        + "".join(f"  - name: {n}\n    task: {json.dumps(str(t))}\n" for n, t in zip(names, tasks))
    )
    common = ["--keep", "id", "--threads", str(args.threads), "--run-id", "bench", "--overwrite", "--quiet"]
    suite_cmd = [[binary, "run", str(suite), "--out", str(work / "suite"), *common]]
    separate_cmds = [
        [binary, "run", str(t), "--input", data, "--out", str(work / "separate" / f"task={n}"), *common]
        for n, t in zip(names, tasks)
    ]
    # Warm-up: the file in the page cache for both.
    with open(data, "rb") as f:
        while f.read(1 << 24):
            pass
    walls: dict[str, list[float]] = {"suite": [], "separate": []}
    peaks: dict[str, int] = {}
    for r in range(args.runs):
        for mode, cmds in [("suite", suite_cmd), ("separate", separate_cmds)]:
            wall, peak = timed(cmds)
            walls[mode].append(wall)
            if peak:
                peaks[mode] = max(peaks.get(mode, 0), peak)
            print(f"round {r + 1} {mode}: {wall:.2f} s", file=sys.stderr)
        if r == 0:
            bad = []
            for n in names:
                bad += same_outputs(work / "suite" / f"task={n}", work / "separate" / f"task={n}")
            if bad:
                print("outputs differ:\n  " + "\n  ".join(bad), file=sys.stderr)
                return 1
            print(f"outputs of the {args.tasks} tasks agree", file=sys.stderr)
    med = {m: statistics.median(w) for m, w in walls.items()}
    load_after = os.getloadavg()
    what = "job.yaml and job_template.yaml in alternation" if args.mix else "job.yaml"
    print(
        f"\n{args.tasks} tasks ({what}) over {args.input.name}, --threads {args.threads}, "
        f"{args.runs} runs in alternation; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after\n"
    )
    print("| mode | wall median (s) | min-max (s) | peak RSS (MiB) | wall / suite |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for mode in ["suite", "separate"]:
        w = walls[mode]
        rss = f"{peaks[mode] / 1024:.0f}" if mode in peaks else ""
        print(f"| {mode} | {med[mode]:.2f} | {min(w):.2f}-{max(w):.2f} | {rss} | {med[mode] / med['suite']:.2f}x |")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
