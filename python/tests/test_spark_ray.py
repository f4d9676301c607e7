"""Spark (local[2], mapInArrow over several partitions) and Ray (local) against the CLI's
figures and per-row scores on the same rows."""

from __future__ import annotations

import json
import os
import pickle
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalscore
from conftest import dict_without_run, without_run
import evalscore.ray
import evalscore.spark


def cli_figures(cli_out: Path):
    return (
        pq.read_table(cli_out / "metrics.parquet"),
        pq.read_table(cli_out / "confusion.parquet"),
        json.loads((cli_out / "metrics.json").read_text()),
        pq.read_table(cli_out / "scores.parquet").sort_by("id"),
    )


def assert_figures(res: evalscore.Result, cli_out: Path) -> pa.Table:
    metrics, confusion, js, scores = cli_figures(cli_out)
    assert res.metrics.schema.equals(metrics.schema)
    assert without_run(res.metrics).to_pylist() == without_run(metrics).to_pylist()
    assert without_run(res.confusion).to_pylist() == without_run(confusion).to_pylist()
    assert dict_without_run(res.to_dict()) == dict_without_run(js)
    return scores


def test_task_pickles_for_executors(task, table):
    again = pickle.loads(pickle.dumps(task))
    assert dict_without_run(again.score(table.slice(0, 100)).to_dict()) == dict_without_run(
        task.score(table.slice(0, 100)).to_dict()
    )


def test_spark_matches_the_cli(spark, task, parquet_file, cli_out):
    df = spark.read.parquet(str(parquet_file)).repartition(5)
    assert df.rdd.getNumPartitions() == 5
    scores_df, res = evalscore.spark.score(df, task, keep=["id"])
    want = assert_figures(res, cli_out)
    got = scores_df.toArrow().sort_by("id") if hasattr(scores_df, "toArrow") else pa.Table.from_pandas(scores_df.toPandas()).sort_by("id")
    assert got.column_names == want.column_names
    assert got.num_rows == want.num_rows == 25_000
    for name in want.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


def test_spark_with_large_var_types_and_small_batches(spark, task, parquet_file, cli_out):
    spark.conf.set("spark.sql.execution.arrow.useLargeVarTypes", "true")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "3000")
    try:
        df = spark.read.parquet(str(parquet_file)).repartition(4)
        scores_df, res = evalscore.spark.score(df, task)
        assert_figures(res, cli_out)
        assert scores_df.count() == 25_000
    finally:
        spark.conf.unset("spark.sql.execution.arrow.useLargeVarTypes")
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")


def test_spark_task_errors_before_any_job(spark, parquet_file):
    df = spark.read.parquet(str(parquet_file)).drop("answer")
    task = evalscore.Task.from_yaml(Path(__file__).parent / "task.yaml")
    with pytest.raises(evalscore.EvalscoreError, match="`answer`"):
        evalscore.spark.score(df, task)


def test_ray_matches_the_cli(ray_local, task, table, cli_out):
    ds = ray_local.data.from_arrow(table).repartition(5)
    scores_ds, res = evalscore.ray.score(ds, task, keep=["id"])
    want = assert_figures(res, cli_out)
    got = pa.concat_tables(
        [pa.table(b) for b in scores_ds.iter_batches(batch_format="pyarrow", batch_size=None)]
    ).sort_by("id")
    assert got.column_names == want.column_names
    for name in want.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


def test_ray_keeps_the_rows_a_task_filter_matches(ray_local, task, table):
    """A `filter:` over a data column: Ray's blocks keep the rows it matches, and the figures
    are those of the same task without the filter over those rows alone."""
    import pyarrow.compute as pc

    filtered = evalscore.Task.from_str('filter: "subject in (\'math\', \'law\')"\n' + task.text)
    ds = ray_local.data.from_arrow(table).repartition(3)
    scores_ds, res = evalscore.ray.score(ds, filtered, keep=["id"])
    rows = table.filter(pc.field("subject") != "art")
    assert 0 < rows.num_rows < table.num_rows
    want = task.score(rows, keep=["id"])
    got = pa.concat_tables(
        [pa.table(b) for b in scores_ds.iter_batches(batch_format="pyarrow", batch_size=None)]
    ).sort_by("id")
    assert got.column("id").to_pylist() == want.scores.column("id").to_pylist()
    assert without_run(res.metrics).to_pylist() == without_run(want.metrics).to_pylist()


BOOTSTRAP = """definition:
  output_column: output
  scorers:
    - type: string_equals
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct, interval: bootstrap, replicates: 200, seed: 3, group_by: [subject]}
"""


def test_bootstrap_intervals_match_across_spark_partitions_and_ray_blocks(
    spark, ray_local, table, parquet_file
):
    """A Poisson bootstrap's figures are the same however the rows are split: in one
    process, over 3 or 7 Spark partitions, and over 4 Ray blocks."""
    task = evalscore.Task.from_str(BOOTSTRAP)
    want = without_run(task.score(table).metrics).to_pylist()
    lows = [r["value"] for r in want if r["stat"] == "ci_low"]
    assert len(lows) > 1 and all(v is not None for v in lows)
    for parts in (3, 7):
        df = spark.read.parquet(str(parquet_file)).repartition(parts)
        _, res = evalscore.spark.score(df, task)
        assert without_run(res.metrics).to_pylist() == want, parts
    ds = ray_local.data.from_arrow(table).repartition(4)
    _, res = evalscore.ray.score(ds, task)
    assert without_run(res.metrics).to_pylist() == want
