"""`Task.run` over a Hive-partitioned tree written by pyarrow's dataset writer: `recursive`,
`hive_partitioning` and `where`, as the CLI's `--recursive`, `--hive-partitioning` and
`--where`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import evalscore
from conftest import without_run

TASK = """definition:
  scorers:
    - type: string_equals
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct, group_by: [model]}
"""


@pytest.fixture
def exports(tmp_path: Path) -> Path:
    table = pa.table(
        {
            "id": pa.array([0, 1, 2, 3, 4], pa.int64()),
            "answer": ["a", "b", "c", "d", "e"],
            "output": ["a", "x", "c", "d", "y"],
            "model": ["m1", "m1", "m2", "m2", "m2"],
            "day": pa.array([1, 2, 1, 2, 2], pa.int64()),
        }
    )
    root = tmp_path / "exports"
    ds.write_dataset(table, root, format="parquet", partitioning=["model", "day"], partitioning_flavor="hive")
    return root


def test_where_prunes_the_partitions_read(exports: Path, tmp_path: Path):
    task = evalscore.Task.from_str(TASK)
    out = tmp_path / "out"
    rows = task.run([exports], out, keep=["id", "model", "day"], recursive=True, where="model = 'm2' and day >= 2")
    assert rows == 2
    scores = pq.read_table(out / "scores.parquet")
    assert scores.column("id").to_pylist() == [3, 4]
    assert scores.column("model").to_pylist() == ["m2", "m2"]
    assert scores.column("day").to_pylist() == [2, 2]
    run = json.loads((out / "run.json").read_text())
    assert run["input_partitions"] == {
        "columns": [{"name": "model", "type": "Utf8"}, {"name": "day", "type": "Int64"}],
        "filter": "model = 'm2' and day >= 2",
        "files_listed": 4,
        "files_matched": 1,
    }
    assert [i["partitions"] for i in run["inputs"]] == [{"model": "m2", "day": 2}]
    # Every partition without `where`; a glob needs no `recursive`.
    assert task.run([f"{exports}/**/*.parquet"], tmp_path / "all") == 5


def test_where_errors_carry_the_cli_text(exports: Path, tmp_path: Path):
    task = evalscore.Task.from_str(TASK)
    with pytest.raises(evalscore.InputError) as e:
        task.run([exports], tmp_path / "off", recursive=True, hive_partitioning=False, where="model = 'm1'")
    assert e.value.message == "--where: the inputs have no partition columns to filter on"
    assert e.value.hint == (
        "`--no-hive-partitioning` turns them off; leave it out to read `key=value` folders as columns"
    )
    with pytest.raises(evalscore.InputError) as e:
        task.run([exports], tmp_path / "typo", recursive=True, hive_partitioning=True, where="modle = 'm1'")
    assert e.value.message == (
        "--where: unknown partition column `modle` at column 1; partition columns: model, day"
    )
    assert e.value.hint == "did you mean `model`?"


def test_task_score_keeps_the_rows_its_filter_matches(exports: Path, tmp_path: Path):
    """In memory there are no files to prune: the rows whose partition columns (read as
    columns, as pyarrow's dataset gives them) match the task's `filter:` are scored, and the
    figures are those of the run over the tree."""
    text = "filter: \"model = 'm2' and day >= 2\"\n" + TASK
    task = evalscore.Task.from_str(text)
    assert task.run([exports], tmp_path / "tree", keep=["id"], recursive=True) == 2
    table = ds.dataset(exports, format="parquet", partitioning="hive").to_table().sort_by("id")
    assert str(table.schema.field("model").type) == "string"
    assert str(table.schema.field("day").type) == "int32"
    res = task.score(table, keep=["id"], threads=2)
    assert res.scores.column("id").to_pylist() == [3, 4]
    cli = pq.read_table(tmp_path / "tree" / "metrics.parquet")
    assert without_run(res.metrics).to_pylist() == without_run(cli).to_pylist()
    # A filter over a column the data lacks is refused before any row is scored.
    bad = evalscore.Task.from_str("filter: \"modle = 'm2'\"\n" + TASK)
    with pytest.raises(evalscore.TaskError) as e:
        bad.score(table)
    assert e.value.message == (
        "the task's `filter`, line 1, column 9: unknown column `modle` at column 1; "
        "columns: id, answer, output, model, day"
    )
    assert e.value.hint == "did you mean `model`?"
