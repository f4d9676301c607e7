#!/usr/bin/env python3
"""The benchmark job in Polars, written the way a Polars user would.

usage: polars_job.py INPUT.parquet OUT_DIR [--threads 2]

- Per-row scores: `scan_parquet` + lazy expressions + `sink_parquet(compression="zstd")` on the
  streaming engine (order kept, so rows stay in input order). POLARS_MAX_THREADS is set before
  polars is imported.
- Aggregates: as in duckdb_job.py, accuracy and validity counts from the just-written scores
  file, and the yes/no confusion matrix from the two label columns of the input (projection
  pushdown reads only those), both collected together on the streaming engine.
- Writes OUT_DIR/aggregates.json.
"""
import json
import os
import sys
import time

args = sys.argv[1:]
threads = 2
if "--threads" in args:
    i = args.index("--threads")
    threads = int(args[i + 1])
    del args[i : i + 2]
os.environ["POLARS_MAX_THREADS"] = str(threads)

import polars as pl  # noqa: E402  (after POLARS_MAX_THREADS)


def scan(path: str) -> pl.LazyFrame:
    if path.startswith("s3://"):
        # storage_bench.py: the same AWS_* settings evalscore reads, passed explicitly.
        return pl.scan_parquet(path, storage_options={
            "aws_access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"],
            "aws_region": os.environ.get("AWS_REGION", "us-east-1"),
            "aws_endpoint_url": os.environ["AWS_ENDPOINT_URL"],
            "aws_allow_http": "true",
        })
    return pl.scan_parquet(path)


def main() -> None:
    src, out = args
    scores = f"{out}/scores.parquet"
    t0 = time.perf_counter()
    output, answer = pl.col("output"), pl.col("answer")
    first = output.str.slice(0, 1)
    valid = ((output != "") & pl.col("choices").list.contains(first)).fill_null(False)
    (
        scan(src)
        .select(
            "id",
            (output == answer).fill_null(False).cast(pl.Float64).alias("string_equals__is_correct"),
            (valid & (first == answer)).fill_null(False).cast(pl.Float64)
            .alias("string_equals_mcqa__is_correct"),
            pl.when(valid).then(pl.lit("VALID")).otherwise(pl.lit("INVALID"))
            .alias("string_equals_mcqa__completion_validity"),
        )
        .sink_parquet(scores, compression="zstd")
    )
    t1 = time.perf_counter()
    s = pl.scan_parquet(scores).select(
        pl.len().alias("rows"),
        pl.col("string_equals__is_correct").sum().cast(pl.Int64).alias("se_correct"),
        pl.col("string_equals_mcqa__is_correct").sum().cast(pl.Int64).alias("mcqa_correct"),
        (pl.col("string_equals_mcqa__completion_validity") == "VALID").sum().alias("valid"),
        (pl.col("string_equals_mcqa__completion_validity") == "INVALID").sum().alias("invalid"),
    )
    gt, pred = pl.col("label_gt"), pl.col("label_pred")
    c = scan(src).select(
        ((gt == "yes") & (pred == "yes")).sum().alias("tp"),
        ((gt == "no") & (pred == "yes")).sum().alias("fp"),
        ((gt == "no") & (pred == "no")).sum().alias("tn"),
        ((gt == "yes") & (pred == "no")).sum().alias("fn"),
    )
    sdf, cdf = pl.collect_all([s, c], engine="streaming")
    t2 = time.perf_counter()
    agg = {k: int(v) for k, v in {**sdf.row(0, named=True), **cdf.row(0, named=True)}.items()}
    tp, fp, fn = agg["tp"], agg["fp"], agg["fn"]
    agg["se_accuracy"] = agg["se_correct"] / agg["rows"]
    agg["mcqa_accuracy"] = agg["mcqa_correct"] / agg["rows"]
    agg["precision"] = tp / (tp + fp) if tp + fp else None
    agg["recall"] = tp / (tp + fn) if tp + fn else None
    p, r = agg["precision"], agg["recall"]
    agg["f1"] = 2 * p * r / (p + r) if p and r else None
    agg["phases_s"] = {"sink_scores": t1 - t0, "aggregates": t2 - t1}
    with open(f"{out}/aggregates.json", "w") as f:
        json.dump(agg, f, indent=1)


if __name__ == "__main__":
    main()
