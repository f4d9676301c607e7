#!/usr/bin/env python3
"""`evalscore compare` of two large runs against DuckDB doing the same join and figures (see
BENCHMARKS.md, "Comparing two runs").

    python3 scripts/bench/compare_bench.py [--rows 10000000] [--runs 5] [--threads 2]
                                           [--bin target/dist/evalscore] [--old-bin OTHER]
                                           [--cases same,shuffled]

1. Makes two inputs with `evalscore-gen synthetic --rows N` (seeds 42 and 43: the same ids in
   the same order, other model outputs) into bench-data/, and scores each with one
   `string_equals` field (`--keep id`): bench-data/compare_N/base and .../new, two runs of one
   export. For the `shuffled` case, .../shuffled holds the new run's scores.parquet with its
   rows in another order (DuckDB, `ORDER BY hash(id)`). Made once, kept for later runs.
2. Runs, --runs times in alternation (each a fresh process, timed around it, peak RSS from
   /usr/bin/time), per case:
   - evalscore:  `evalscore compare BASE NEW --out DIR --overwrite` (one thread per core; the
                 machine's cores are --threads)
   - old:        the same with --old-bin, when given (a build to compare figures and time with)
   - duckdb:     a Python process running one query with `SET threads = T`: the join of the two
                 scores.parquet on `id`, the pairs with both values present, their count, the
                 two means, the mean difference, its standard error (stddev_samp / sqrt(n)) and
                 the pass-to-fail and fail-to-pass counts.
3. Checks after the first round: the counts equal and the figures within 1e-9 (relative) of
   evalscore's compare.json (DuckDB sums in parallel, in another order), and with --old-bin,
   compare.json and compare.parquet byte for byte the same as the old build's. A difference
   stops the script with exit code 1.
4. Prints a Markdown table: wall median, min-max, CPU median (user + system), peak RSS (the
   largest of the rounds), and each tool's wall time over evalscore's, with the load average
   (`uptime`) before and after.
"""
from __future__ import annotations

import argparse
import json
import math
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
COLUMN = "string_equals__is_correct"
TASK = """definition:
  output_column: output
  scorers:
    - type: string_equals
      ground_truth: "{{ sample.answer }}"
"""

DUCKDB = r"""
import json, sys, time
import duckdb
base, new, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
con = duckdb.connect()
con.execute(f"SET threads = {threads}")
con.execute("SET enable_progress_bar = false")
row = con.execute(f'''
    SELECT count(*), avg(b), avg(n), avg(n - b), stddev_samp(n - b) / sqrt(count(*)),
           count(*) FILTER (WHERE n < b), count(*) FILTER (WHERE n > b)
    FROM (SELECT x."{COLUMN}" AS b, y."{COLUMN}" AS n
          FROM read_parquet('{base}') x JOIN read_parquet('{new}') y USING (id))
    WHERE b IS NOT NULL AND n IS NOT NULL AND NOT isnan(b) AND NOT isnan(n)
''').fetchone()
names = ["n_pairs", "base_mean", "new_mean", "diff", "diff_se", "pass_to_fail", "fail_to_pass"]
print(json.dumps({**dict(zip(names, row)), "query_seconds": time.perf_counter() - t0}))
""".replace("{COLUMN}", COLUMN)


def run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, **kw)


def measure(argv: list[str]) -> tuple[float, float, float, str]:
    """Runs argv in a fresh process: wall seconds, CPU seconds (user + system), peak RSS
    (MiB), stdout."""
    with tempfile.NamedTemporaryFile("r") as usage:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", usage.name, *argv],
                           capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode not in (0, 1):
            sys.exit(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stderr}")
        kib, user, system = usage.read().strip().splitlines()[-1].split()
    return wall, float(user) + float(system), int(kib) / 1024, p.stdout


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def make_runs(a, binary: str, gen: str) -> Path:
    """bench-data/compare_N/{base,new,shuffled}: made once."""
    data = ROOT / "bench-data"
    folder = data / f"compare_{a.rows}"
    task = folder / "task.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    task.write_text(TASK)
    for name, seed in [("base", 42), ("new", 43)]:
        if (folder / name / "run.json").exists():
            continue
        src = data / f"syn_{a.rows}_seed{seed}.parquet"
        if not src.exists():
            print(f"generating {src} ...", flush=True)
            run([gen, "synthetic", "--rows", str(a.rows), "--seed", str(seed), "--out", str(src)])
        print(f"scoring {src} into {folder / name} ...", flush=True)
        run([binary, "run", str(task), "--input", str(src), "--out", str(folder / name),
             "--keep", "id", "--threads", str(a.threads), "--overwrite", "--quiet"])
    shuffled = folder / "shuffled" / "scores.parquet"
    if "shuffled" in a.cases and not shuffled.exists():
        import duckdb

        shuffled.parent.mkdir(exist_ok=True)
        duckdb.connect().execute(
            f"COPY (SELECT * FROM read_parquet('{folder / 'new' / 'scores.parquet'}') "
            f"ORDER BY hash(id)) TO '{shuffled}' (FORMAT parquet, COMPRESSION zstd)")
    return folder


def check(case: str, got: dict, duck: dict) -> list[str]:
    """evalscore's overall row against DuckDB's figures."""
    row = next(r for r in got["comparisons"] if r["column"] == COLUMN and r["group"] is None)
    bad = []
    for k in ["n_pairs", "pass_to_fail", "fail_to_pass"]:
        if row[k] != duck[k]:
            bad.append(f"{case}: {k} evalscore {row[k]} duckdb {duck[k]}")
    for k in ["base_mean", "new_mean", "diff", "diff_se"]:
        if not math.isclose(row[k], duck[k], rel_tol=1e-9, abs_tol=1e-12):
            bad.append(f"{case}: {k} evalscore {row[k]!r} duckdb {duck[k]!r}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bin", type=Path, default=ROOT / "target" / "dist" / "evalscore")
    ap.add_argument("--gen", type=Path, default=ROOT / "target" / "dist" / "evalscore-gen")
    ap.add_argument("--old-bin", type=Path, help="another build: figures compared byte for byte")
    ap.add_argument("--cases", default="same,shuffled")
    a = ap.parse_args()
    a.cases = a.cases.split(",")
    for b in [a.bin, a.gen, a.old_bin]:
        if b is not None and not b.exists():
            sys.exit(f"{b} is missing: cargo build --profile dist -p evalscore-cli -p evalscore-gen")
    binary = str(a.bin.resolve())
    folder = make_runs(a, binary, str(a.gen.resolve()))
    base = folder / "base"
    news = {"same": folder / "new", "shuffled": folder / "shuffled"}
    work = Path(tempfile.mkdtemp(prefix="compare-bench-"))
    tools = {"evalscore": binary}
    if a.old_bin:
        tools["old"] = str(a.old_bin.resolve())
    before = load()
    times: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    problems: list[str] = []
    for r in range(a.runs):
        for case in a.cases:
            new = news[case]
            order = list(tools) + ["duckdb"]
            if r % 2:
                order.reverse()
            for tool in order:
                if tool == "duckdb":
                    argv = [sys.executable, "-c", DUCKDB, str(base / "scores.parquet"),
                            str(new / "scores.parquet"), str(a.threads)]
                else:
                    argv = [tools[tool], "compare", str(base), str(new), "--out",
                            str(work / f"{case}-{tool}"), "--overwrite"]
                wall, cpu, rss, out = measure(argv)
                times.setdefault((case, tool), []).append((wall, cpu, rss))
                if r == 0 and tool == "duckdb":
                    (work / f"{case}-duckdb.json").write_text(out)
            if r == 0:
                got = json.loads((work / f"{case}-evalscore" / "compare.json").read_text())
                duck = json.loads((work / f"{case}-duckdb.json").read_text())
                problems += check(case, got, duck)
                if a.old_bin:
                    for f in ["compare.json", "compare.parquet"]:
                        x = (work / f"{case}-evalscore" / f).read_bytes()
                        y = (work / f"{case}-old" / f).read_bytes()
                        if x != y:
                            problems.append(f"{case}: {f} differs from the old build's")
                if problems:
                    print("\n".join(problems), file=sys.stderr)
                    return 1
    after = load()
    print(f"\n{a.rows:,} rows, {a.runs} rounds, --threads {a.threads}; figures checked\n")
    print(f"load before: {before}\nload after:  {after}\n")
    print("| case | tool | wall median (s) | min-max (s) | CPU median (s) | peak RSS (MiB) "
          "| wall / evalscore |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for case in a.cases:
        ref = statistics.median(w for w, _, _ in times[(case, "evalscore")])
        for tool in list(tools) + ["duckdb"]:
            ws = [w for w, _, _ in times[(case, tool)]]
            cpu = statistics.median(c for _, c, _ in times[(case, tool)])
            rss = max(m for _, _, m in times[(case, tool)])
            med = statistics.median(ws)
            print(f"| {case} | {tool} | {med:.2f} | {min(ws):.2f}-{max(ws):.2f} | {cpu:.2f} "
                  f"| {rss:.0f} | {med / ref:.2f}x |")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
