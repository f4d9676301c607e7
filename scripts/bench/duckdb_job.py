#!/usr/bin/env python3
"""The benchmark job in DuckDB, written the way a DuckDB user would.

usage: duckdb_job.py INPUT.parquet OUT_DIR [--threads 2]

- Per-row scores: one scan of the input, `COPY (SELECT ...) TO 'scores.parquet'
  (FORMAT parquet, COMPRESSION zstd)`; DuckDB keeps insertion order, so rows stay in input order.
- Aggregates: accuracy and validity counts are computed from the just-written scores file (a
  small, 4-column file), and the yes/no confusion matrix from the two dictionary-encoded label
  columns of the input: the second statement reads only those columns, which is what a DuckDB
  user would do rather than re-scan output/answer/choices or materialise the scores in memory.
- Writes OUT_DIR/aggregates.json.
"""
from __future__ import annotations

import json
import os
import sys
import time

import duckdb


def sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def httpfs_extension() -> str | None:
    """The `httpfs` extension file of the `duckdb-ext-httpfs` PyPI package, when it is
    installed for this DuckDB version (DuckDB itself downloads extensions from its own site
    at run time, which the benchmark machine cannot reach)."""
    import glob
    import importlib.util

    spec = importlib.util.find_spec("duckdb_ext")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        found = glob.glob(f"{loc}/extensions/v{duckdb.__version__}/*/httpfs.duckdb_extension")
        if found:
            return found[0]
    return None


def s3_setup(con: "duckdb.DuckDBPyConnection") -> None:
    """storage_bench.py: S3 from the same AWS_* variables evalscore and Polars read. With the
    httpfs extension, DuckDB's own reader through an S3 secret; without it, fsspec's s3fs."""
    env = os.environ
    ext = httpfs_extension()
    if ext:
        con.execute(f"LOAD {sql_str(ext)}")
        endpoint = env["AWS_ENDPOINT_URL"]
        con.execute(
            f"""CREATE SECRET bench (TYPE s3, KEY_ID {sql_str(env["AWS_ACCESS_KEY_ID"])},
                SECRET {sql_str(env["AWS_SECRET_ACCESS_KEY"])},
                REGION {sql_str(env.get("AWS_REGION", "us-east-1"))},
                ENDPOINT {sql_str(endpoint.split("://", 1)[1])}, URL_STYLE 'path',
                USE_SSL {str(endpoint.startswith("https://")).lower()})"""
        )
        return
    import s3fs

    con.register_filesystem(s3fs.S3FileSystem(
        key=env["AWS_ACCESS_KEY_ID"], secret=env["AWS_SECRET_ACCESS_KEY"],
        endpoint_url=env["AWS_ENDPOINT_URL"],
        client_kwargs={"region_name": env.get("AWS_REGION", "us-east-1")}))


def main() -> None:
    args = sys.argv[1:]
    threads = 2
    if "--threads" in args:
        i = args.index("--threads")
        threads = int(args[i + 1])
        del args[i : i + 2]
    src, out = args
    scores = f"{out}/scores.parquet"
    con = duckdb.connect()
    con.execute(f"SET threads={threads}")
    if src.startswith("s3://"):
        s3_setup(con)
    t0 = time.perf_counter()
    con.execute(
        f"""
        COPY (
          SELECT
            id,
            CASE WHEN output = answer THEN 1.0 ELSE 0.0 END AS string_equals__is_correct,
            CASE WHEN v AND substr(output, 1, 1) = answer THEN 1.0 ELSE 0.0 END
              AS string_equals_mcqa__is_correct,
            CASE WHEN v THEN 'VALID' ELSE 'INVALID' END
              AS string_equals_mcqa__completion_validity
          FROM (
            SELECT id, output, answer,
              coalesce(output <> '' AND list_contains(choices, substr(output, 1, 1)), false) AS v
            FROM read_parquet({sql_str(src)})
          )
        ) TO {sql_str(scores)} (FORMAT parquet, COMPRESSION zstd)
        """
    )
    t1 = time.perf_counter()
    row = con.execute(
        f"""
        SELECT s.*, c.* FROM (
          SELECT count(*) AS rows,
                 sum(string_equals__is_correct)::BIGINT AS se_correct,
                 sum(string_equals_mcqa__is_correct)::BIGINT AS mcqa_correct,
                 count(*) FILTER (string_equals_mcqa__completion_validity = 'VALID') AS valid,
                 count(*) FILTER (string_equals_mcqa__completion_validity = 'INVALID') AS invalid
          FROM read_parquet({sql_str(scores)})
        ) s, (
          SELECT count(*) FILTER (label_gt = 'yes' AND label_pred = 'yes') AS tp,
                 count(*) FILTER (label_gt = 'no' AND label_pred = 'yes') AS fp,
                 count(*) FILTER (label_gt = 'no' AND label_pred = 'no') AS tn,
                 count(*) FILTER (label_gt = 'yes' AND label_pred = 'no') AS fn
          FROM read_parquet({sql_str(src)})
        ) c
        """
    ).fetchone()
    t2 = time.perf_counter()
    names = ["rows", "se_correct", "mcqa_correct", "valid", "invalid", "tp", "fp", "tn", "fn"]
    agg = {k: int(v) for k, v in zip(names, row)}
    tp, fp, fn = agg["tp"], agg["fp"], agg["fn"]
    agg["se_accuracy"] = agg["se_correct"] / agg["rows"]
    agg["mcqa_accuracy"] = agg["mcqa_correct"] / agg["rows"]
    agg["precision"] = tp / (tp + fp) if tp + fp else None
    agg["recall"] = tp / (tp + fn) if tp + fn else None
    p, r = agg["precision"], agg["recall"]
    agg["f1"] = 2 * p * r / (p + r) if p and r else None
    agg["phases_s"] = {"copy_scores": t1 - t0, "aggregates": t2 - t1}
    with open(f"{out}/aggregates.json", "w") as f:
        json.dump(agg, f, indent=1)


if __name__ == "__main__":
    main()
