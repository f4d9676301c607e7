"""Real trees, as PySpark's `partitionBy` and pyarrow's dataset writer write them, with a
column added and a type widened in later partitions and a null partition value, scored by
`evalscore run --union-by-name` and checked row for row (kept columns, partition columns,
scores, types) against DuckDB's `read_parquet(..., hive_partitioning=true,
union_by_name=true)` over the same files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import evalscore
from conftest import cli_binary

duckdb = pytest.importorskip("duckdb")

# One scorer over file columns, one over a partition column, one over the column that only
# later partitions have.
TASK = """definition:
  scorers:
    - type: string_equals
      key: exact
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct}
    - type: string_equals
      key: is_m1
      value: "{{ sample.model }}"
      ground_truth: "m1"
      metrics:
        - {type: mean, field: is_correct}
    - type: string_equals
      key: noted_ok
      value: "{{ sample.judge_note }}"
      ground_truth: "ok"
      metrics:
        - {type: mean, field: is_correct}
"""

# What each score is, in DuckDB's SQL: a null value or ground truth scores 0.0.
SCORES_SQL = """
    CASE WHEN output = answer THEN 1.0::DOUBLE ELSE 0.0::DOUBLE END AS exact__is_correct,
    CASE WHEN model = 'm1' THEN 1.0::DOUBLE ELSE 0.0::DOUBLE END AS is_m1__is_correct,
    CASE WHEN judge_note = 'ok' THEN 1.0::DOUBLE ELSE 0.0::DOUBLE END AS noted_ok__is_correct
"""
SCORES = ["exact__is_correct", "is_m1__is_correct", "noted_ok__is_correct"]


def kind(t: pa.DataType) -> str:
    """A column's type, string layouts as one."""
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    return str(t)


def duckdb_reference(base: Path, columns: list[str]) -> pa.Table:
    glob = (base / "**" / "*.parquet").as_posix()
    sql = f"""SELECT {", ".join(columns)}, {SCORES_SQL}
              FROM read_parquet('{glob}', hive_partitioning = true, union_by_name = true)
              ORDER BY id"""
    con = duckdb.connect()
    try:
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


def run_cli(tmp: Path, inputs: list[str], keep: list[str], *extra: str, env=None) -> pa.Table:
    task = tmp / "task.yaml"
    task.write_text(TASK)
    out = tmp / "out"
    cmd = [str(cli_binary()), "run", str(task), "--out", str(out), "--quiet", "--union-by-name",
           "--keep", ",".join(keep), *extra]
    for i in inputs:
        cmd += ["--input", i]
    subprocess.run(cmd, check=True, env=env)
    return pq.read_table(out / "scores.parquet").sort_by("id")


def assert_same_as_duckdb(got: pa.Table, want: pa.Table, keep: list[str]) -> None:
    assert got.column_names == keep + SCORES
    assert got.num_rows == want.num_rows
    for name in keep + SCORES:
        g, w = got.schema.field(name).type, want.schema.field(name).type
        assert kind(g) == kind(w), (name, g, w)
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


def spark_tree(spark, base: Path) -> None:
    """Two writes into one folder: the second, later, has `id` as a long instead of an int and
    adds `judge_note`. A null `model` is Spark's `__HIVE_DEFAULT_PARTITION__`."""
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    def schema(id_type, *more):
        return StructType(
            [StructField("id", id_type, False)]
            + [StructField(n, StringType()) for n in ("model", "day", "output", "answer", *more)]
        )

    early = [(i, ["m1", "m2", None][i % 3], "2001-02-03", "ab"[i % 2], "a") for i in range(30)]
    spark.createDataFrame(early, schema(IntegerType())).write.partitionBy("model", "day").parquet(
        str(base)
    )
    late = [
        (100 + i, ["m1", "m2"][i % 2], "2001-02-04", "a", "ab"[i % 3 == 0], ["ok", None, "late"][i % 3])
        for i in range(24)
    ]
    spark.createDataFrame(late, schema(LongType(), "judge_note")).write.mode("append").partitionBy(
        "model", "day"
    ).parquet(str(base))


def test_a_spark_tree_matches_duckdb(spark, tmp_path):
    base = tmp_path / "exports"
    spark_tree(spark, base)
    names = [p.name for p in base.rglob("*")]
    assert "_SUCCESS" in names and any(n.endswith(".crc") for n in names)
    assert (base / "model=__HIVE_DEFAULT_PARTITION__").is_dir()
    keep = ["id", "output", "answer", "judge_note", "model", "day"]
    want = duckdb_reference(base, keep)
    assert [kind(f.type) for f in want.schema][:6] == [
        "int64", "string", "string", "string", "string", "date32[day]"
    ]
    got = run_cli(tmp_path, [str(base)], keep, "--recursive")
    assert_same_as_duckdb(got, want, keep)
    assert got.column("model").null_count == 10
    assert got.column("judge_note").null_count == 30 + 8


def test_a_task_filter_scores_a_spark_table_as_a_run_over_its_tree(spark, tmp_path):
    """Spark reads the tree as one table whose partition values are columns (`day` a date):
    the task's `filter:` keeps the same rows in memory that the run over the tree reads."""
    import evalscore.spark

    base = tmp_path / "exports"
    rows = [(i, ["m1", "m2", None][i % 3], ["2001-02-03", "2001-02-04"][i % 2], "ab"[i % 5 == 0], "a", "ok")
            for i in range(60)]
    spark.createDataFrame(rows, "id long, model string, day string, output string, answer string, "
                          "judge_note string").write.partitionBy("model", "day").parquet(str(base))
    text = "filter: \"model = 'm1' and day >= '2001-02-04'\"\n" + TASK
    (tmp_path / "task.yaml").write_text(text)
    out = tmp_path / "out"
    subprocess.run([str(cli_binary()), "run", str(tmp_path / "task.yaml"), "--input", str(base), "--out",
                    str(out), "--quiet", "--union-by-name", "--recursive", "--keep", "id"], check=True)
    df = spark.read.parquet(str(base))
    assert dict((f.name, f.dataType.simpleString()) for f in df.schema.fields)["day"] == "date"
    scores_df, res = evalscore.spark.score(df, evalscore.Task.from_str(text), keep=["id"])
    ids = sorted(r["id"] for r in scores_df.select("id").collect())
    assert ids == [i for i in range(60) if i % 6 == 3]
    assert ids == sorted(pq.read_table(out / "scores.parquet").column("id").to_pylist())
    cli = pq.read_table(out / "metrics.parquet")
    drop = ["run_id", "run_started_at", "labels"]
    assert res.metrics.drop_columns(drop).to_pylist() == cli.drop_columns(drop).to_pylist()


def pyarrow_tree(base: Path) -> None:
    """Two dataset writes into one folder, partitioned by `model` and an integer `day`: the
    second adds `judge_note`, has `weight` as doubles instead of int32, and `output` as large
    strings."""
    early = pa.table(
        {
            "id": pa.array(range(40), pa.int64()),
            "output": pa.array(["ab"[i % 2] for i in range(40)], pa.string()),
            "answer": pa.array(["a"] * 40, pa.string()),
            "weight": pa.array([i % 4 for i in range(40)], pa.int32()),
            "model": pa.array([["m1", "m2", None, "m1"][i % 4] for i in range(40)], pa.string()),
            "day": pa.array([3] * 40, pa.int64()),
        }
    )
    late = pa.table(
        {
            "id": pa.array(range(100, 130), pa.int64()),
            "output": pa.array(["a"] * 30, pa.large_string()),
            "answer": pa.array(["ab"[i % 3 == 0] for i in range(30)], pa.string()),
            "weight": pa.array([i / 4 for i in range(30)], pa.float64()),
            "judge_note": pa.array([["ok", None, "late"][i % 3] for i in range(30)], pa.string()),
            "model": pa.array([["m1", "m2"][i % 2] for i in range(30)], pa.string()),
            "day": pa.array([4 + i % 2 for i in range(30)], pa.int64()),
        }
    )
    for i, t in enumerate([early, late]):
        ds.write_dataset(
            t,
            base,
            format="parquet",
            partitioning=["model", "day"],
            partitioning_flavor="hive",
            basename_template=f"part-{i}-{{i}}.parquet",
            max_rows_per_file=8,
            max_rows_per_group=8,
            existing_data_behavior="overwrite_or_ignore",
        )


def test_a_pyarrow_tree_matches_duckdb(tmp_path):
    base = tmp_path / "exports"
    pyarrow_tree(base)
    assert (base / "model=__HIVE_DEFAULT_PARTITION__" / "day=3").is_dir()
    keep = ["id", "output", "answer", "weight", "judge_note", "model", "day"]
    want = duckdb_reference(base, keep)
    assert [kind(f.type) for f in want.schema][:7] == [
        "int64", "string", "string", "double", "string", "string", "int64"
    ]
    got = run_cli(tmp_path, [str(base / "**" / "*.parquet")], keep)
    assert_same_as_duckdb(got, want, keep)
    assert got.column("model").null_count == 10
    assert got.column("judge_note").null_count == 40 + 10

    # The Python package's run reads the tree alike.
    task = evalscore.Task.from_str(TASK)
    out = tmp_path / "py-out"
    rows = task.run(
        [str(base / "**" / "*.parquet")], out, keep=keep, union_by_name=True
    )
    assert rows == 70
    assert pq.read_table(out / "scores.parquet").sort_by("id").equals(got)

    # Without the option the two writes' files are refused, and the hint names it.
    with pytest.raises(evalscore.EvalscoreError, match="have different schemas") as e:
        task.run([str(base / "**" / "*.parquet")], tmp_path / "refused", keep=keep)
    assert "pass `--union-by-name`" in e.value.hint


def test_a_tree_in_s3_matches_duckdb(tmp_path, moto):
    from pyarrow import fs

    base = tmp_path / "exports"
    pyarrow_tree(base)
    fs.copy_files(str(base), "lake/evals", destination_filesystem=moto.fs)
    env = {**os.environ, **moto.env}
    keep = ["id", "output", "answer", "weight", "judge_note", "model", "day"]
    got = run_cli(tmp_path, ["s3://lake/evals/"], keep, "--recursive", env=env)
    assert_same_as_duckdb(got, duckdb_reference(base, keep), keep)


def test_partition_values_are_typed_as_duckdb_types_them(tmp_path):
    # Folder names of the shapes exports hold: zero-padded months (text), loose dates, signed
    # and hexadecimal integers, a `+` (text).
    folders = [
        ("01", "2026-1-5", "-3", "+5"),
        ("11", "2026-11-25", "0x1F", "7"),
    ]
    base = tmp_path / "t"
    for i, (month, d, n, s) in enumerate(folders):
        folder = base / f"month={month}" / f"d={d}" / f"n={n}" / f"s={s}"
        folder.mkdir(parents=True)
        pq.write_table(
            pa.table({"id": [i], "output": ["a"], "answer": ["a"]}), folder / "part-0.parquet"
        )
    keep = ["id", "month", "d", "n", "s"]
    glob = (base / "**" / "*.parquet").as_posix()
    con = duckdb.connect()
    try:
        want = con.sql(
            f"SELECT {', '.join(keep)} FROM read_parquet('{glob}', hive_partitioning = true) ORDER BY id"
        ).to_arrow_table()
    finally:
        con.close()
    assert [kind(f.type) for f in want.schema] == ["int64", "string", "date32[day]", "int64", "string"]
    task = tmp_path / "task.yaml"
    task.write_text(
        "definition:\n  scorers:\n    - type: string_equals\n"
        '      ground_truth: "{{ sample.answer }}"\n'
    )
    out = tmp_path / "out"
    subprocess.run(
        [str(cli_binary()), "run", str(task), "--input", glob, "--out", str(out), "--quiet",
         "--keep", ",".join(keep)],
        check=True,
    )
    got = pq.read_table(out / "scores.parquet").sort_by("id")
    for name in keep:
        assert kind(got.schema.field(name).type) == kind(want.schema.field(name).type), name
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
    assert got.column("month").to_pylist() == ["01", "11"]
