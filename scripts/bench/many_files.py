#!/usr/bin/env python3
"""Many small files against one big file: the benchmark job per row (see BENCHMARKS.md).

    python scripts/bench/many_files.py [--one bench-data/syn_10000000.parquet]
        [--data /work/bench-data/many] [--files 10000] [--runs 3] [--threads 2]
        [--bin new=target/dist/evalscore --bin old=/path/to/older/evalscore] [--references]

1. Splits the one file (made by `evalscore-gen synthetic`, as run_bench.py does; generated
   with it when absent) into `--files` Parquet files of equal rows (1,000 for 10M rows and
   10,000 files), written by pyarrow with the generator's codec (zstd) under
   DATA/files_FILESxROWS/part_NNNNN.parquet, once (kept for later runs; remove it to
   regenerate). The rows, columns and values are the one file's, so per row the two inputs
   cost the same work.
2. Runs the job (scripts/bench/job.yaml, as run_bench.py) of every binary over both inputs,
   `--runs` rounds in alternation (round 1: every binary on every input once, round 2: ...),
   each a fresh process under /usr/bin/time.
3. Prints a Markdown table: wall median, rows/s, peak RSS per binary and input, and the
   ratio of the many files' rows/s to the one file's (the target is at least 0.8), and checks
   that both inputs give the same metrics.json figures (scores are equal row for row: the
   rows are the same, in the same order).
4. With `--references`, other tools over the same two inputs in the same rounds, for how far
   their per-row speed falls from one file to the 10,000: DuckDB and Polars running the same
   job (scripts/bench/duckdb_job.py, polars_job.py, reading `FOLDER/*.parquet`; their
   aggregates checked equal across the two inputs), and pyarrow only reading the job's
   columns (pyarrow_floor.py, the folder as one pyarrow dataset).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_bench  # noqa: E402  (the shared measure/alternate helpers)


def split(one: Path, files: int, out: Path) -> Path:
    import pyarrow.parquet as pq

    src = pq.ParquetFile(one)
    rows = src.metadata.num_rows
    per = rows // files
    if per * files != rows:
        sys.exit(f"{one} has {rows} rows, not a multiple of {files}")
    folder = out / f"files_{files}x{per}"
    if folder.exists():
        return folder
    tmp = folder.with_suffix(".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    print(f"splitting {one} into {files} files of {per} rows in {folder} ...", flush=True)
    t0 = time.perf_counter()
    n = 0
    for rg in range(src.num_row_groups):
        table = src.read_row_group(rg)
        for at in range(0, table.num_rows, per):
            pq.write_table(table.slice(at, per), tmp / f"part_{n:05d}.parquet",
                           compression="zstd", row_group_size=per)
            n += 1
    tmp.rename(folder)
    print(f"  done in {time.perf_counter() - t0:.1f} s", flush=True)
    return folder


# --references: name -> (script in scripts/bench, whether it runs the job into an out folder).
REFERENCES = {
    "duckdb": ("duckdb_job.py", True),
    "polars": ("polars_job.py", True),
    "pyarrow-read": ("pyarrow_floor.py", False),
}


def slug(key: str) -> str:
    """A job's name as a folder name."""
    return key.replace(" ", "_").replace(":", "")


def figures(out: Path) -> dict:
    m = json.loads((out / "metrics.json").read_text())
    return {"rows": m["rows"],
            "scorers": [[(x["name"], x.get("value")) for x in s["metrics"]] for s in m["scorers"]]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--one", type=Path, default=None,
                    help="the one big file (default: bench-data/syn_10000000.parquet, generated "
                         "if absent)")
    ap.add_argument("--data", type=Path, default=Path("/work/bench-data/many"),
                    help="where the small files are written (outside the repository)")
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--references", action="store_true",
                    help="also time DuckDB, Polars (the job) and pyarrow (reading only) over "
                         "both inputs")
    ap.add_argument("--bin", action="append", default=[],
                    help="NAME=PATH of an evalscore binary (repeatable; default: "
                         "new=target/dist/evalscore)")
    a = ap.parse_args()
    one = a.one or run_bench.ensure_file(10_000_000)
    many = split(one, a.files, a.data)
    import pyarrow.parquet as pq
    rows = pq.ParquetFile(one).metadata.num_rows
    bins = dict(b.split("=", 1) for b in a.bin) or {"new": str(run_bench.EVALSCORE)}
    out = a.data / "out"
    out.mkdir(parents=True, exist_ok=True)
    inputs = {"one file": one, f"{a.files} files": many}
    jobs = {}
    for b, path in bins.items():
        run_bench.EVALSCORE = Path(path)
        for name, src in inputs.items():
            key = f"{b}: {name}"
            jobs[key] = (run_bench.evalscore_cmd("job.yaml")(src, out / slug(key), a.threads), out)
    refs = REFERENCES if a.references else {}
    for tool, (script, with_out) in refs.items():
        for name, src in inputs.items():
            key = f"{tool}: {name}"
            # DuckDB and Polars read a folder's files through a glob.
            where = f"{src}/*.parquet" if src.is_dir() and with_out else src
            jobs[key] = (run_bench.py_cmd(script, with_out)(where, out / slug(key), a.threads),
                         out)
            (out / slug(key)).mkdir(parents=True, exist_ok=True)
    res = run_bench.alternate("many", jobs, a.runs)
    for b in bins:
        got = [figures(out / slug(f"{b}: {name}")) for name in inputs]
        if got[0] != got[1]:
            sys.exit(f"{b}: the two inputs give different metrics:\n{got[0]}\n{got[1]}")
    for tool, (_, with_out) in refs.items():
        if with_out:
            got = [{k: v for k, v in run_bench.python_aggregates(out / slug(f"{tool}: {name}"))
                    .items() if k != "phases_s"} for name in inputs]
            if got[0] != got[1]:
                sys.exit(f"{tool}: the two inputs give different aggregates:\n{got[0]}\n{got[1]}")
    lines = ["| binary or tool | input | rows | wall median (s) | min-max (s) | rows/s | peak RSS (MiB) "
             "| rows/s vs one file |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for b in list(bins) + list(refs):
        base = None
        for name in inputs:
            r = res[f"{b}: {name}"]
            walls = [w for w, _ in r]
            med = statistics.median(walls)
            rate = rows / med
            base = base or rate
            lines.append(f"| {b} | {name} | {rows} | {med:.2f} | {min(walls):.2f}-{max(walls):.2f} "
                         f"| {run_bench.fmt_rate(rate)} | {max(m for _, m in r):.0f} "
                         f"| {rate / base:.2f}x |")
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
