"""`format="delta"`: runs appended to Delta tables, read back by independent readers: the
`deltalake` package, Polars' `read_delta`, and DuckDB's `delta_scan` (its delta extension,
from PyPI, in a venv of its own that scripts/python-test.sh makes: the extension is built for
one DuckDB version)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import polars as pl
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

import evalscore
from conftest import TASK, sorted_scores

TABLES = ["scores", "metrics", "confusion", "runs"]


@pytest.fixture(scope="module")
def lake(tmp_path_factory, parquet_file: Path, cli_out: Path) -> Path:
    root = tmp_path_factory.mktemp("lake") / "evals"
    task = evalscore.Task.from_yaml(TASK)
    assert task.run([parquet_file], root, format="delta", run_id="n1", labels={"model": "m1"}) == 25_000
    assert task.run([parquet_file], root, format="delta", run_id="n2", labels={"model": "m2"}) == 25_000
    return root


def test_the_tables_are_read_back_by_deltalake_with_the_runs_figures(lake: Path, cli_out: Path):
    for t in TABLES:
        dt = DeltaTable(str(lake / t))
        p = dt.protocol()
        assert (p.min_reader_version, p.min_writer_version) == (1, 2), t
        assert dt.metadata().partition_columns == (["run_id"] if t == "runs" else ["run_id", "task"])
    scores = DeltaTable(str(lake / "scores")).to_pyarrow_table()
    assert scores.num_rows == 50_000
    n1 = scores.filter(pc.equal(scores.column("run_id"), "n1")).drop_columns(["run_id", "task"])
    folder = pq.read_table(cli_out / "scores.parquet")
    assert sorted_scores(n1).to_pylist() == sorted_scores(folder).to_pylist()
    metrics = DeltaTable(str(lake / "metrics")).to_pyarrow_table()
    folder_metrics = pq.read_table(cli_out / "metrics.parquet")
    key = lambda r: (r["scorer"], r["metric"], r["field"], r["stat"], r["label"] or "")
    got = sorted(
        ((key(r), r["value"], r["n"]) for r in metrics.to_pylist() if r["run_id"] == "n2"),
    )
    want = sorted((key(r), r["value"], r["n"]) for r in folder_metrics.to_pylist())
    assert got == want
    assert set(metrics.column("task").to_pylist()) == {"task"}
    runs = DeltaTable(str(lake / "runs")).to_pyarrow_table().sort_by("run_id").to_pylist()
    assert [(r["run_id"], r["task"], r["status"], r["rows"], json.loads(r["labels"])) for r in runs] == [
        ("n1", "task", "succeeded", 25_000, {"model": "m1"}),
        ("n2", "task", "succeeded", 25_000, {"model": "m2"}),
    ]
    assert json.loads(runs[0]["run_json"])["run_id"] == "n1"


def test_polars_reads_the_tables(lake: Path):
    scores = pl.read_delta(str(lake / "scores"))
    assert scores.group_by("run_id").len().sort("run_id").rows() == [("n1", 25_000), ("n2", 25_000)]
    runs = pl.read_delta(str(lake / "runs")).sort("run_id")
    assert runs.select("run_id", "status").rows() == [("n1", "succeeded"), ("n2", "succeeded")]


def test_duckdb_delta_scan_reads_the_tables(lake: Path):
    python = os.environ.get("EVALSCORE_DUCKDB_DELTA_PYTHON")
    assert python, "scripts/python-test.sh sets EVALSCORE_DUCKDB_DELTA_PYTHON (a venv with DuckDB's delta extension)"
    script = f"""
import duckdb, duckdb_extension_delta, os, json
ext = os.path.join(os.path.dirname(duckdb_extension_delta.__file__), "extensions", "v" + duckdb.__version__, "delta.duckdb_extension")
con = duckdb.connect(config={{"allow_unsigned_extensions": "true"}})
con.execute(f"LOAD '{{ext}}'")
root = {json.dumps(str(lake))}
print(json.dumps({{
    "scores": con.sql(f"select run_id, task, count(*) from delta_scan('{{root}}/scores') group by all order by 1").fetchall(),
    "runs": con.sql(f"select run_id, status, rows from delta_scan('{{root}}/runs') order by 1").fetchall(),
    "metrics": con.sql(f"select count(*) from delta_scan('{{root}}/metrics') where run_id = 'n1'").fetchall(),
}}))
"""
    out = subprocess.run([python, "-c", script], check=True, capture_output=True, text=True).stdout
    got = json.loads(out)
    assert got["scores"] == [["n1", "task", 25_000], ["n2", "task", 25_000]]
    assert got["runs"] == [["n1", "succeeded", 25_000], ["n2", "succeeded", 25_000]]
    metrics = DeltaTable(str(lake / "metrics")).to_pyarrow_table()
    assert got["metrics"] == [[sum(1 for r in metrics.column("run_id").to_pylist() if r == "n1")]]


def test_a_rerun_is_refused_and_a_suite_appends_its_tasks(lake: Path, tmp_path: Path, parquet_file: Path):
    task = evalscore.Task.from_yaml(TASK)
    with pytest.raises(evalscore.OutputError, match="run `n1` is already in the `runs` table"):
        task.run([parquet_file], lake, format="delta", run_id="n1")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"inputs: [{json.dumps(str(parquet_file))}]\n"
        "tasks:\n"
        f"  - name: full\n    task: {json.dumps(str(TASK))}\n"
        "  - name: exact\n"
        "    definition:\n"
        "      scorers:\n"
        "        - type: string_equals\n"
        "          key: exact_only\n"
        '          ground_truth: "{{ sample.answer }}"\n'
    )
    record = evalscore.run_suite(suite, lake, run_id="s1", format="delta")
    assert [t["name"] for t in record["tasks"]] == ["full", "exact"]
    assert not (lake / "suite.json").exists()
    runs = DeltaTable(str(lake / "runs")).to_pyarrow_table().to_pylist()
    assert sorted((r["run_id"], r["task"]) for r in runs) == [
        ("n1", "task"), ("n2", "task"), ("s1", "exact"), ("s1", "full"),
    ]
    scores = pl.read_delta(str(lake / "scores"))
    # The suite's `exact` task has its own scorer column: older rows read it as null.
    assert scores.filter(pl.col("run_id") == "n1")["exact_only__is_correct"].null_count() == 25_000
    assert scores.filter(pl.col("run_id") == "s1")["exact_only__is_correct"].null_count() == 25_000
