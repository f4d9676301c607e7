#!/usr/bin/env python3
"""Side-by-side benchmark of evalscore, DuckDB and Polars on the benchmark job (see BENCHMARKS.md).

    python3 scripts/bench/run_bench.py [--rows 10000000] [--runs 3] [--threads 2]
                                       [--scaling 1000000,10000000,30000000] [--skip-main]
                                       [--checks] [--many 200x50000] [--profile export]

1. Generates bench-data/syn_N.parquet with the project's generator if it is absent (building
   target/dist/evalscore-gen and evalscore with cargo if they are missing). With
   --profile export, the file is bench-data/export_N.parquet instead, made by
   `evalscore-gen synthetic --profile export`: the same columns shaped like a real evaluation
   export (30% free-text rows with null answer and choices, MCQA outputs with explanations,
   leading spaces, lower case, fullwidth, CJK and combining first characters, 1% null and
   0.5% empty outputs, `Yes`/`maybe`/null labels beside yes/no), so the same job and the same
   checks run on it; every mode below then uses that profile's files, and the report goes to
   bench-data/results_export.md (results_extra_export.md with --skip-main).
2. Runs every tool `--runs` times, in alternation (round 1: every tool once, round 2: ...),
   each as a fresh process under /usr/bin/time, after one untimed warm-up read of the file:
   - evalscore          scripts/bench/job.yaml (the job)
   - duckdb             scripts/bench/duckdb_job.py (one scan + COPY ... zstd, then aggregates)
   - polars             scripts/bench/polars_job.py (scan_parquet, streaming sink_parquet)
   - evalscore-template scripts/bench/job_template.yaml (ground truths `{{ sample.answer | trim }}`)
   - pyarrow-read       scripts/bench/pyarrow_floor.py (read the needed columns, no work)
   - evalscore-read     `evalscore-gen read` (evalscore's reader, same columns, no work)
   - evalscore-read-id  scripts/bench/floor_read_id.yaml (literal compare: reads only `id`)
   - evalscore-decode   scripts/bench/floor_decode.yaml (same columns, literal compares)
3. Checks, after the first round, that evalscore, DuckDB, Polars (and the template variant)
   agree on the aggregate figures and on every per-row score (files compared row by row in id
   order); any difference stops the run with exit code 1.
4. Prints a Markdown table (wall median, min-max, rows/s, peak RSS, ratios to evalscore) and
   writes it to bench-data/results.md.
5. With --many 200x50000, runs the job over 200 generated files of 50k rows and over the one
   --rows file, in alternation, and compares rows/s.
6. With --checks, runs checks_job.yaml (includes, match, regex over the output)
   and checks_baseline.yaml (string_equals alone) in alternation and prints their ratio.
7. With --scaling, runs evalscore alone on files of each size (generated if absent) and
   reports its peak RSS and wall time per size.

Wall time is measured around the whole process (interpreter start and imports included for the
Python tools); peak RSS is /usr/bin/time's maximum resident set size of the process and the
children it waited for (or getrusage(RUSAGE_CHILDREN) in a fresh wrapper process when
/usr/bin/time is missing).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "bench-data"
EVALSCORE = ROOT / "target" / "dist" / "evalscore"
GEN = ROOT / "target" / "dist" / "evalscore-gen"

# Output columns shared by every tool's scores.parquet.
SCORE_COLS = [
    "string_equals__is_correct",
    "string_equals_mcqa__is_correct",
    "string_equals_mcqa__completion_validity",
]
AGG_KEYS = ["rows", "se_correct", "mcqa_correct", "valid", "invalid"]
CLS_KEYS = ["tp", "fp", "tn", "fn"]

# The yes/no classification metric of job.yaml, (scorer key, metric name): evalscore_aggregates()
# reads tp/fp/tn/fn from its figures and the checks compare them with DuckDB's and Polars'.
EVALSCORE_CLS_METRIC: tuple[str, str] | None = ("labels", "labels")


# --------------------------------------------------------------------------------------------
# tools


def evalscore_cmd(task: str):
    def cmd(src: Path, out: Path, threads: int) -> list[str]:
        return [str(EVALSCORE), "run", str(HERE / task), "--input", str(src), "--out", str(out),
                "--overwrite", "--quiet", "--threads", str(threads), "--keep", "id"]
    return cmd


def reader_floor_cmd(src: Path, out: Path, threads: int) -> list[str]:
    # evalscore's own reader over the job's columns: no scorer, no metric, no output.
    return [str(GEN), "read", str(src), "--columns", "id,output,answer,choices,label_gt,label_pred",
            "--threads", str(threads)]


def py_cmd(script: str, with_out: bool = True):
    def cmd(src: Path, out: Path, threads: int) -> list[str]:
        argv = [sys.executable, str(HERE / script), str(src)]
        if with_out:
            argv.append(str(out))
        return argv + ["--threads", str(threads)]
    return cmd


# name -> (argv builder, kind); kind: "job" (checked, in the main table), "variant", "floor".
TOOLS = {
    "evalscore": (evalscore_cmd("job.yaml"), "job"),
    "duckdb": (py_cmd("duckdb_job.py"), "job"),
    "polars": (py_cmd("polars_job.py"), "job"),
    "evalscore-template": (evalscore_cmd("job_template.yaml"), "variant"),
    "pyarrow-read": (py_cmd("pyarrow_floor.py", with_out=False), "floor"),
    "evalscore-read": (reader_floor_cmd, "floor"),
    "evalscore-read-id": (evalscore_cmd("floor_read_id.yaml"), "floor"),
    "evalscore-decode": (evalscore_cmd("floor_decode.yaml"), "floor"),
}


# --------------------------------------------------------------------------------------------
# running and measuring

HAVE_GNU_TIME = Path("/usr/bin/time").exists()
RUSAGE_WRAPPER = (
    "import resource,subprocess,sys;"
    "r=subprocess.run(sys.argv[1:]).returncode;"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,file=sys.stderr);"
    "sys.exit(r)"
)


def measure(argv: list[str], log: Path) -> tuple[float, float]:
    """Runs argv in a fresh process; returns (wall seconds, peak RSS MiB). Fails loudly."""
    rss_file = log.with_suffix(".rss")
    if HAVE_GNU_TIME:
        full = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file)] + argv
    else:
        full = [sys.executable, "-c", RUSAGE_WRAPPER] + argv
    with open(log, "w") as lf:
        t0 = time.perf_counter()
        p = subprocess.run(full, stdout=lf, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"FAILED ({p.returncode}): {' '.join(argv)}\n{p.stderr}\n(stdout in {log})")
    if HAVE_GNU_TIME:
        kib = int(rss_file.read_text().split()[-1])
    else:
        kib = int(p.stderr.strip().splitlines()[-1])
    return wall, kib / 1024.0


def alternate(label: str, jobs: dict[str, tuple[list[str], Path]], runs: int
              ) -> dict[str, list[tuple[float, float]]]:
    """Runs every job once per round, `runs` rounds; job = (argv, log folder)."""
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in jobs}
    for r in range(runs):
        for name, (argv, logs) in jobs.items():
            wall, rss = measure(argv, logs / f"{name.replace(' ', '_')}_{r}.log")
            results[name].append((wall, rss))
            print(f"  {label} round {r + 1}/{runs}  {name:<16} {wall:7.2f} s  {rss:7.0f} MiB",
                  flush=True)
    return results


def ensure_binaries() -> None:
    # Always through cargo (a no-op when both are fresh): `cargo build --profile dist` alone builds
    # only the default member (the CLI), and a stale evalscore-gen would time an old reader
    # as the `evalscore-read` floor.
    if shutil.which("cargo") is None and EVALSCORE.exists() and GEN.exists():
        return
    print("building evalscore and evalscore-gen (cargo build --profile dist) ...", flush=True)
    subprocess.run(["cargo", "build", "--profile", "dist", "-p", "evalscore-cli", "-p", "evalscore-gen"],
                   cwd=ROOT, check=True)


# `evalscore-gen synthetic --profile P` -> the prefix of its files in bench-data/.
PROFILES = {"default": "syn", "export": "export"}


def gen_synthetic_cmd(rows: int, out: Path, profile: str, seed: int | None = None) -> list[str]:
    argv = [str(GEN), "synthetic", "--rows", str(rows), "--out", str(out)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    # Without the flag for the default profile, so that an older evalscore-gen works too.
    return argv + (["--profile", profile] if profile != "default" else [])


def ensure_file(rows: int, profile: str = "default") -> Path:
    DATA.mkdir(exist_ok=True)
    path = DATA / f"{PROFILES[profile]}_{rows}.parquet"
    if path.exists():
        return path
    ensure_binaries()
    tmp = path.with_suffix(".parquet.tmp")
    print(f"generating {path} ({rows} rows) ...", flush=True)
    t0 = time.perf_counter()
    subprocess.run(gen_synthetic_cmd(rows, tmp, profile), check=True)
    tmp.rename(path)
    print(f"  done in {time.perf_counter() - t0:.1f} s, {path.stat().st_size / 2**30:.2f} GiB",
          flush=True)
    return path


# --------------------------------------------------------------------------------------------
# checks


def evalscore_aggregates(out: Path) -> dict:
    m = json.loads((out / "metrics.json").read_text())
    scorers = {s["key"]: s for s in m["scorers"]}
    rows = m["rows"]

    def metric(key: str, name: str) -> dict:
        for x in scorers[key]["metrics"]:
            if x["name"] == name:
                return x
        raise KeyError(f"{key}/{name} not in metrics.json")

    def count_of(mean: float | None, n: int) -> int:
        # a mean of 0/1 scores is exact (double-double sums), so this is the exact count
        c = round((mean or 0.0) * n)
        assert abs(c - (mean or 0.0) * n) < 1e-6 * max(n, 1), (mean, n)
        return c

    se = metric("string_equals", "Accuracy")
    mc = metric("string_equals_mcqa", "MCQA Accuracy")
    freq = metric("string_equals_mcqa", "frequency")
    counts = {f["label"]: int(f["value"]) for f in freq["figures"] if f["stat"] == "count"}
    agg = {
        "rows": rows,
        "se_correct": count_of(se.get("value"), se["n"]),
        "mcqa_correct": count_of(mc.get("value"), mc["n"]),
        "valid": counts.get("VALID", 0),
        "invalid": counts.get("INVALID", 0),
    }
    if EVALSCORE_CLS_METRIC is not None:
        cls = metric(*EVALSCORE_CLS_METRIC)
        figs = {f["stat"]: f["value"] for f in cls["figures"]}
        agg.update({k: int(figs[k]) for k in CLS_KEYS})
    return agg


def python_aggregates(out: Path) -> dict:
    return json.loads((out / "aggregates.json").read_text())


def read_scores(path: Path):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["id"] + SCORE_COLS)
    ids = t.column("id")
    n = t.num_rows
    if n and not pc.all(pc.equal(pc.subtract(ids.slice(1), ids.slice(0, n - 1)), 1)).as_py():
        t = t.sort_by("id")
    cols = {"id": t.column("id").cast(pa.int64())}
    for c in SCORE_COLS:
        col = t.column(c)
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        target = pa.string() if c.endswith("completion_validity") else pa.float64()
        cols[c] = col.cast(target)
    return cols


def check_same(outs: dict[str, Path], aggs: dict[str, dict]) -> None:
    import pyarrow.compute as pc

    problems = []
    ref_name = "evalscore"
    ref = aggs[ref_name]
    for name, agg in aggs.items():
        keys = AGG_KEYS + (CLS_KEYS if all(k in agg for k in CLS_KEYS)
                           and all(k in ref for k in CLS_KEYS) else [])
        for k in keys:
            if agg[k] != ref[k]:
                problems.append(f"aggregate {k}: {name}={agg[k]} but {ref_name}={ref[k]}")
    # The classification figures: DuckDB vs Polars.
    if "duckdb" in aggs and "polars" in aggs:
        for k in CLS_KEYS:
            if aggs["duckdb"][k] != aggs["polars"][k]:
                problems.append(f"aggregate {k}: duckdb={aggs['duckdb'][k]} "
                                f"but polars={aggs['polars'][k]}")
    ref_cols = read_scores(outs[ref_name] / "scores.parquet")
    for name, out in outs.items():
        if name == ref_name:
            continue
        cols = read_scores(out / "scores.parquet")
        for c in ["id"] + SCORE_COLS:
            a, b = ref_cols[c], cols[c]
            if len(a) != len(b):
                problems.append(f"{name}: {c} has {len(b)} rows, {ref_name} has {len(a)}")
                continue
            eq = pc.equal(a, b)
            bad = len(a) - pc.sum(eq.cast("int64")).as_py() if len(a) else 0
            bad += pc.sum(pc.is_null(eq).cast("int64")).as_py() or 0
            if bad:
                first = pc.index(pc.fill_null(eq, False), False).as_py()
                problems.append(
                    f"{name}: {bad} rows differ from {ref_name} in {c}; first at row {first}: "
                    f"{b[first].as_py()!r} vs {a[first].as_py()!r} (id {ref_cols['id'][first]})")
    if problems:
        print("\nCHECK FAILED: the tools disagree", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        sys.exit(1)


# --------------------------------------------------------------------------------------------
# report


def versions() -> dict:
    v = {}
    try:
        v["evalscore"] = subprocess.run([str(EVALSCORE), "--version"], capture_output=True,
                                        text=True).stdout.strip()
    except OSError:
        v["evalscore"] = "?"
    for mod in ["duckdb", "polars", "pyarrow"]:
        try:
            v[mod] = __import__(mod).__version__
        except ImportError:
            v[mod] = "not installed"
    v["python"] = platform.python_version()
    return v


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, {platform.system()} {platform.release()}"


def fmt_rate(r: float) -> str:
    return f"{r / 1e6:.2f} M"


def table(results: dict[str, list[tuple[float, float]]], rows: int) -> str:
    es_wall = statistics.median(w for w, _ in results["evalscore"])
    es_rss = max(m for _, m in results["evalscore"])
    lines = [
        "| tool | kind | wall median (s) | wall min-max (s) | rows/s | peak RSS (MiB) "
        "| wall / evalscore | RSS / evalscore |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, runs in results.items():
        walls = [w for w, _ in runs]
        rss = max(m for _, m in runs)
        med = statistics.median(walls)
        lines.append(
            f"| {name} | {TOOLS[name][1]} | {med:.2f} | {min(walls):.2f}-{max(walls):.2f} "
            f"| {fmt_rate(rows / med)} | {rss:.0f} | {med / es_wall:.2f}x | {rss / es_rss:.2f}x |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tools", default=",".join(TOOLS),
                    help="comma-separated subset of: " + ", ".join(TOOLS))
    ap.add_argument("--scaling", default="",
                    help="comma-separated row counts: evalscore's peak RSS at each size")
    ap.add_argument("--skip-main", action="store_true", help="only the --scaling runs")
    ap.add_argument("--many", default="",
                    help="FILESxROWS, e.g. 200x50000: the job over that many small files vs "
                         "the one --rows file, in alternation (rows/s compared)")
    ap.add_argument("--checks", action="store_true",
                    help="checks_job.yaml (includes, match, regex) vs "
                         "checks_baseline.yaml (string_equals alone), in alternation")
    ap.add_argument("--profile", choices=list(PROFILES), default="default",
                    help="the generated files' shape: default (bench-data/syn_N.parquet) or "
                         "export (bench-data/export_N.parquet, shaped like a real export)")
    a = ap.parse_args()

    ensure_binaries()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    ver = versions()
    header = (f"Measured {started} on {machine()}; threads={a.threads}, runs={a.runs}, "
              f"profile={a.profile}.\n"
              f"Versions: {', '.join(f'{k} {v}' for k, v in ver.items())}.\n")
    report = [f"# evalscore benchmark\n\n{header}"]

    if not a.skip_main:
        src = ensure_file(a.rows, a.profile)
        size = src.stat().st_size / 2**30
        names = [t for t in a.tools.split(",") if t]
        for t in names:
            if t not in TOOLS:
                sys.exit(f"unknown tool {t}")
        if "evalscore" not in names:
            names.insert(0, "evalscore")
        outs = {t: DATA / "out" / t for t in names}
        for o in outs.values():
            o.mkdir(parents=True, exist_ok=True)
        print(f"warm-up read of {src} ({size:.2f} GiB) ...", flush=True)
        measure(TOOLS["pyarrow-read"][0](src, outs["evalscore"], a.threads),
                outs["evalscore"] / "warmup.log")
        results: dict[str, list[tuple[float, float]]] = {t: [] for t in names}
        for r in range(a.runs):
            for t in names:
                argv = TOOLS[t][0](src, outs[t], a.threads)
                wall, rss = measure(argv, outs[t] / f"run{r}.log")
                results[t].append((wall, rss))
                print(f"  round {r + 1}/{a.runs}  {t:<20} {wall:7.2f} s  {rss:7.0f} MiB",
                      flush=True)
            if r == 0:
                checked = [t for t in names if TOOLS[t][1] in ("job", "variant")]
                aggs = {}
                for t in checked:
                    aggs[t] = (evalscore_aggregates(outs[t]) if t.startswith("evalscore")
                               else python_aggregates(outs[t]))
                check_same({t: outs[t] for t in checked}, aggs)
                print(f"  check passed: {', '.join(checked)} agree on aggregates and on every "
                      f"per-row score", flush=True)
                ref = aggs.get("duckdb") or aggs.get("polars")
        md = table(results, a.rows)
        figures = ""
        if ref:
            figures = (
                f"\nFigures (all tools agree): rows {ref['rows']}, string_equals accuracy "
                f"{ref['se_accuracy']:.6f}, mcqa accuracy {ref['mcqa_accuracy']:.6f}, VALID "
                f"{ref['valid']}, INVALID {ref['invalid']}, tp/fp/tn/fn {ref['tp']}/{ref['fp']}/"
                f"{ref['tn']}/{ref['fn']}, precision {ref['precision']:.6f}, recall "
                f"{ref['recall']:.6f}, F1 {ref['f1']:.6f}"
                + ("" if EVALSCORE_CLS_METRIC else
                   " (the confusion matrix is DuckDB vs Polars only)") + ".\n")
        report.append(f"## Job: {a.rows} rows ({src.name}, {size:.2f} GiB)\n\n{md}\n{figures}")
        print("\n" + md + "\n" + figures)

    if a.many:
        files, per = (int(x) for x in a.many.lower().split("x"))
        prefix = "many" if a.profile == "default" else f"{a.profile}_many"
        many = DATA / f"{prefix}_{files}x{per}"
        if not many.exists():
            ensure_binaries()
            tmp = many.with_suffix(".tmp")
            tmp.mkdir(parents=True, exist_ok=True)
            print(f"generating {files} files of {per} rows in {many} ...", flush=True)
            for i in range(files):
                subprocess.run(gen_synthetic_cmd(per, tmp / f"part_{i:04d}.parquet", a.profile,
                                                 seed=1000 + i),
                               check=True, stdout=subprocess.DEVNULL)
            tmp.rename(many)
        big = ensure_file(a.rows, a.profile)
        out = DATA / "out" / "many"
        out.mkdir(parents=True, exist_ok=True)
        inputs = {"one file": (big, a.rows), f"{files} files": (many, files * per)}
        res_by = alternate("many", {name: (TOOLS["evalscore"][0](src, out, a.threads), out)
                                    for name, (src, _) in inputs.items()}, a.runs)
        lines = ["| input | rows | wall median (s) | rows/s | peak RSS (MiB) |",
                 "| --- | ---: | ---: | ---: | ---: |"]
        for name, (src, n) in inputs.items():
            res = res_by[name]
            med = statistics.median(w for w, _ in res)
            lines.append(f"| {name} | {n} | {med:.2f} | {fmt_rate(n / med)} "
                         f"| {max(m for _, m in res):.0f} |")
        md = "\n".join(lines)
        report.append(f"## Many small files vs one file (job.yaml)\n\n{md}\n")
        print("\n" + md)

    if a.checks:
        src = ensure_file(a.rows, a.profile)
        out = DATA / "out" / "checks"
        out.mkdir(parents=True, exist_ok=True)
        runs = alternate("checks", {t: (evalscore_cmd(f"{t}.yaml")(src, out / t, a.threads), out)
                                    for t in ("checks_baseline", "checks_job")}, a.runs)
        med = {t: statistics.median(w for w, _ in v) for t, v in runs.items()}
        lines = ["| task | wall median (s) | rows/s | peak RSS (MiB) | wall / baseline |",
                 "| --- | ---: | ---: | ---: | ---: |"]
        for t, v in runs.items():
            lines.append(f"| {t} | {med[t]:.2f} | {fmt_rate(a.rows / med[t])} "
                         f"| {max(m for _, m in v):.0f} | {med[t] / med['checks_baseline']:.2f}x |")
        md = "\n".join(lines)
        report.append(f"## The check family vs string_equals alone ({a.rows} rows)\n\n{md}\n")
        print("\n" + md)

    if a.scaling:
        lines = ["| rows | file (GiB) | evalscore wall median (s) | rows/s | peak RSS max (MiB) "
                 "| peak RSS per run (MiB) |", "| ---: | ---: | ---: | ---: | ---: | --- |"]
        out = DATA / "out" / "scaling"
        out.mkdir(parents=True, exist_ok=True)
        for n in [int(x) for x in a.scaling.split(",") if x]:
            src = ensure_file(n, a.profile)
            runs = []
            for r in range(a.runs):
                wall, rss = measure(TOOLS["evalscore"][0](src, out, a.threads),
                                    out / f"{n}_{r}.log")
                runs.append((wall, rss))
                print(f"  scaling {n:>10} rows  run {r + 1}: {wall:7.2f} s  {rss:7.0f} MiB",
                      flush=True)
            med = statistics.median(w for w, _ in runs)
            lines.append(f"| {n} | {src.stat().st_size / 2**30:.2f} | {med:.2f} "
                         f"| {fmt_rate(n / med)} | {max(m for _, m in runs):.0f} "
                         f"| {', '.join(f'{m:.0f}' for _, m in runs)} |")
        md = "\n".join(lines)
        report.append(f"## evalscore memory scaling (job.yaml)\n\n{md}\n")
        print("\n" + md)

    DATA.mkdir(exist_ok=True)
    name = ("results" if not a.skip_main else "results_extra") + (
        "" if a.profile == "default" else f"_{a.profile}") + ".md"
    (DATA / name).write_text("\n".join(report))
    print(f"\nwritten to {DATA / name}")


if __name__ == "__main__":
    main()
