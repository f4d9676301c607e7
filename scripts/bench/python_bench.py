#!/usr/bin/env python3
"""The Python package against the CLI, and the Spark path against Spark SQL, on the benchmark
job (job.yaml: string_equals, MCQA, a yes/no confusion matrix) over the benchmark file.

usage: python_bench.py [--rows 1000000] [--runs 3]

Needs `pip install ./python` (a release build: the default of `pip install`) plus pyspark in
the running Python, and Java 17 for Spark. Makes bench-data/syn_N.parquet with evalscore-gen
when absent (as run_bench.py does).

- in-memory: `task.score(table)` on a pyarrow Table already read into memory (the read is not
  timed), against `evalscore run` on the same rows from the file (whole process: reading,
  scoring, writing the five files). Per-row speed = rows / wall time.
- Spark on local[2]: `evalscore.spark.score(df, task)` and writing its score rows to Parquet,
  against Spark SQL computing the same per-row scores (written to Parquet) and the same
  aggregates (accuracy counts, MCQA validity, tp/fp/tn/fn) as a Spark user would: one
  SELECT for the scores, the aggregates over the written scores and the two label columns.
  Both start from the same `spark.read.parquet` and run in alternation in one SparkSession.

Every run's aggregates must agree, or the script stops with exit code 1. Prints a Markdown
table (medians) for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run_bench  # noqa: E402  (the benchmark file and the CLI build)

JOB = HERE / "job.yaml"


def aggregates_of(res) -> dict:
    """The job's aggregates from evalscore's metrics.json content."""
    scorers = {s["key"]: s for s in res["scorers"]}

    def metric(key: str, name: str) -> dict:
        return next(m for m in scorers[key]["metrics"] if m["name"] == name)

    se, mc = metric("string_equals", "Accuracy"), metric("string_equals_mcqa", "MCQA Accuracy")
    freq = metric("string_equals_mcqa", "frequency")
    counts = {f["label"]: int(f["value"]) for f in freq["figures"] if f["stat"] == "count"}
    cls = {f["stat"]: f["value"] for f in metric("labels", "labels")["figures"]}
    return {
        "rows": res["rows"],
        "se_correct": round(se["value"] * se["n"]),
        "mcqa_correct": round(mc["value"] * mc["n"]),
        "valid": counts.get("VALID", 0),
        "invalid": counts.get("INVALID", 0),
        **{k: int(cls[k]) for k in ["tp", "fp", "tn", "fn"]},
    }


def spark_sql_job(spark, src: str, out: str) -> dict:
    df = spark.read.parquet(src)
    df.createOrReplaceTempView("src")
    spark.sql(
        """
        SELECT id,
          CASE WHEN output = answer THEN 1.0 ELSE 0.0 END AS string_equals__is_correct,
          CASE WHEN v AND substr(output, 1, 1) = answer THEN 1.0 ELSE 0.0 END
            AS string_equals_mcqa__is_correct,
          CASE WHEN v THEN 'VALID' ELSE 'INVALID' END AS string_equals_mcqa__completion_validity
        FROM (SELECT id, output, answer,
                coalesce(output <> '' AND array_contains(choices, substr(output, 1, 1)), false) AS v
              FROM src)
        """
    ).write.mode("overwrite").option("compression", "zstd").parquet(out)
    s = spark.read.parquet(out)
    s.createOrReplaceTempView("scores")
    a = spark.sql(
        """
        SELECT count(*) AS rows,
          CAST(sum(string_equals__is_correct) AS BIGINT) AS se_correct,
          CAST(sum(string_equals_mcqa__is_correct) AS BIGINT) AS mcqa_correct,
          count_if(string_equals_mcqa__completion_validity = 'VALID') AS valid,
          count_if(string_equals_mcqa__completion_validity = 'INVALID') AS invalid
        FROM scores
        """
    ).collect()[0].asDict()
    c = spark.sql(
        """
        SELECT count_if(label_gt = 'yes' AND label_pred = 'yes') AS tp,
               count_if(label_gt = 'no' AND label_pred = 'yes') AS fp,
               count_if(label_gt = 'no' AND label_pred = 'no') AS tn,
               count_if(label_gt = 'yes' AND label_pred = 'no') AS fn
        FROM src
        """
    ).collect()[0].asDict()
    return {k: int(v) for k, v in {**a, **c}.items()}


def evalscore_spark_job(spark, task, src: str, out: str) -> dict:
    import evalscore.spark

    df = spark.read.parquet(src)
    scores, res = evalscore.spark.score(df, task, keep=["id"])
    scores.write.mode("overwrite").option("compression", "zstd").parquet(out)
    return aggregates_of(res.to_dict())


def timed(f):
    t0 = time.perf_counter()
    r = f()
    return time.perf_counter() - t0, r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-spark", action="store_true")
    args = ap.parse_args()

    import pyarrow.parquet as pq

    import evalscore

    if evalscore._evalscore._debug_build:
        sys.exit(
            "python_bench.py: the installed evalscore is a debug build (scripts/python-test.sh "
            "installs one); install a release build first: pip install ./python"
        )
    src = run_bench.ensure_file(args.rows)
    run_bench.ensure_binaries()
    task = evalscore.Task.from_yaml(JOB)
    table = pq.read_table(src)
    tmp = Path(tempfile.mkdtemp(prefix="evalscore-pybench-"))
    results: dict[str, list[float]] = {}
    aggs: dict[str, dict] = {}

    def record(name: str, wall: float, agg: dict) -> None:
        results.setdefault(name, []).append(wall)
        if name in aggs and aggs[name] != agg:
            sys.exit(f"{name}: aggregates changed between runs")
        aggs[name] = agg
        print(f"  {name:<22} {wall:7.2f} s", flush=True)

    for r in range(args.runs):
        print(f"round {r + 1}/{args.runs}", flush=True)
        wall, res = timed(lambda: task.score(table, keep=["id"]))
        record("task.score (memory)", wall, aggregates_of(res.to_dict()))
        out = tmp / "cli"
        cmd = [str(run_bench.EVALSCORE), "run", str(JOB), "--input", str(src), "--out", str(out),
               "--threads", "2", "--overwrite", "--quiet"]
        wall, _ = timed(lambda: subprocess.run(cmd, check=True))
        record("evalscore run (file)", wall, run_bench.evalscore_aggregates(out))

    if not args.skip_spark:
        from pyspark.sql import SparkSession

        spark = (SparkSession.builder.master("local[2]").appName("evalscore-bench")
                 .config("spark.ui.enabled", "false").config("spark.driver.memory", "4g")
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        for r in range(args.runs):
            print(f"spark round {r + 1}/{args.runs}", flush=True)
            wall, agg = timed(lambda: evalscore_spark_job(spark, task, str(src), str(tmp / "es")))
            record("evalscore.spark", wall, agg)
            wall, agg = timed(lambda: spark_sql_job(spark, str(src), str(tmp / "sql")))
            record("Spark SQL", wall, agg)
        spark.stop()

    base = {k: v for k, v in aggs.items()}
    first = next(iter(base.values()))
    for name, agg in base.items():
        if agg != first:
            sys.exit(f"aggregates differ: {name} {agg} vs {first}")
    print(f"\nall tools agree: {first}\n")
    print("| path | wall median (s) | min-max (s) | rows/s |")
    print("| --- | ---: | ---: | ---: |")
    for name, walls in results.items():
        med = statistics.median(walls)
        print(f"| {name} | {med:.2f} | {min(walls):.2f}-{max(walls):.2f} | {args.rows / med / 1e6:.2f} M |")
    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"\ntask.score / evalscore run: {med['task.score (memory)'] / med['evalscore run (file)']:.2f}x")
    if "Spark SQL" in med:
        print(f"evalscore.spark / Spark SQL: {med['evalscore.spark'] / med['Spark SQL']:.2f}x")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
