"""`evalscore.run_suite`: the CLI's suites from Python."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import evalscore
from conftest import TASK

OUTPUTS = ["confusion.parquet", "metrics.json", "metrics.parquet", "run.json", "scores.parquet"]


def write_suite(tmp_path: Path, parquet_file: Path, extra: str = "") -> Path:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"inputs: [{json.dumps(str(parquet_file))}]\n"
        "labels: {model: m1}\n"
        "tasks:\n"
        f"  - name: full\n    task: {json.dumps(str(TASK))}\n"
        "  - name: exact\n"
        "    definition:\n"
        "      scorers:\n"
        "        - type: string_equals\n"
        '          ground_truth: "{{ sample.answer }}"\n' + extra
    )
    return suite


def test_run_suite_writes_each_task_as_its_own_run(tmp_path, parquet_file, cli_out):
    suite = write_suite(tmp_path, parquet_file)
    got = evalscore.run_suite(suite, tmp_path / "out", labels={"team": "a"}, run_id="r9")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["suite.json", "task=exact", "task=full"]
    assert json.loads((tmp_path / "out" / "suite.json").read_text()) == got
    assert got["run_id"] == "r9"
    assert got["labels"] == {"model": "m1", "team": "a"}
    assert [(t["name"], t["status"], t["rows"], t["error"]) for t in got["tasks"]] == [
        ("full", "ok", 25_000, None),
        ("exact", "ok", 25_000, None),
    ]
    assert got["tasks"][1]["task"] == "inline"
    full = tmp_path / "out" / "task=full"
    assert sorted(p.name for p in full.iterdir()) == OUTPUTS
    # The same scores, byte for byte, as the CLI's run of the task alone.
    assert (full / "scores.parquet").read_bytes() == (cli_out / "scores.parquet").read_bytes()
    metrics = pq.read_table(full / "metrics.parquet")
    assert set(metrics.column("run_id").to_pylist()) == {"r9"}
    want = pq.read_table(cli_out / "metrics.parquet")
    drop = ["run_id", "run_started_at", "labels"]
    assert metrics.drop_columns(drop).to_pylist() == want.drop_columns(drop).to_pylist()


def test_run_suite_raises_a_failing_task_unless_keep_going(tmp_path, parquet_file):
    bad = "  - name: bad\n    definition:\n      scorers:\n        - type: string_equals\n          ground_truth: \"{{ sample.nope }}\"\n"
    suite = write_suite(tmp_path, parquet_file, bad)
    with pytest.raises(evalscore.TaskError) as e:
        evalscore.run_suite(suite, tmp_path / "out")
    assert e.value.message.startswith(f"task `bad`: task file `{suite}`, line 15, column 25: template of")
    assert not (tmp_path / "out" / "suite.json").exists()
    assert not (tmp_path / "out" / "task=full").exists()

    got = evalscore.run_suite(suite, tmp_path / "out", keep_going=True)
    assert [(t["name"], t["status"]) for t in got["tasks"]] == [("full", "ok"), ("exact", "ok"), ("bad", "failed")]
    assert got["tasks"][2]["error"].startswith("task `bad`: task file")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["suite.json", "task=exact", "task=full"]


def test_run_suite_writes_into_s3(tmp_path, parquet_file, moto, monkeypatch):
    from pyarrow import fs

    for k, v in moto.env.items():
        monkeypatch.setenv(k, v)
    s3 = moto.fs
    suite = write_suite(tmp_path, parquet_file)
    got = evalscore.run_suite(suite, "s3://lake/suites/m1/", run_id="r9")
    assert [(t["name"], t["status"], t["out"]) for t in got["tasks"]] == [
        ("full", "ok", "s3://lake/suites/m1/task=full"),
        ("exact", "ok", "s3://lake/suites/m1/task=exact"),
    ]
    listed = sorted(i.path for i in s3.get_file_info(fs.FileSelector("lake/suites/m1", recursive=True)) if i.is_file)
    assert listed == ["lake/suites/m1/suite.json"] + [
        f"lake/suites/m1/task={t}/{f}" for t in ["exact", "full"] for f in OUTPUTS
    ]
    with s3.open_input_stream("lake/suites/m1/suite.json") as f:
        assert json.loads(f.read()) == got
    local = evalscore.run_suite(suite, tmp_path / "local", run_id="r9")
    with s3.open_input_stream("lake/suites/m1/task=full/scores.parquet") as f:
        assert f.read() == (tmp_path / "local" / "task=full" / "scores.parquet").read_bytes()
    assert [t["rows"] for t in local["tasks"]] == [t["rows"] for t in got["tasks"]]


def test_run_suite_reads_trees_as_a_task_run_does(tmp_path):
    import pyarrow as pa

    # m1's export has `id` and `answer` and `output`; m2's adds `note`.
    for model, rows, extra in [("m1", 2, {}), ("m2", 3, {"note": ["x", None, "z"]})]:
        folder = tmp_path / "exports" / "deep" / f"model={model}"
        folder.mkdir(parents=True)
        cols = {"id": list(range(rows)), "answer": ["a"] * rows, "output": ["a", "b", "a"][:rows]}
        pq.write_table(pa.table({**cols, **extra}), folder / "part-0.parquet")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"inputs: [{json.dumps(str(tmp_path / 'exports'))}]\n"
        "tasks:\n"
        "  - name: exact\n"
        "    definition:\n"
        "      scorers:\n"
        "        - type: string_equals\n"
        '          ground_truth: "{{ sample.answer }}"\n'
    )
    with pytest.raises(evalscore.EvalscoreError):
        evalscore.run_suite(suite, tmp_path / "flat")
    got = evalscore.run_suite(
        suite, tmp_path / "all", recursive=True, union_by_name=True, keep=["id", "model", "note"]
    )
    assert [(t["name"], t["status"], t["rows"]) for t in got["tasks"]] == [("exact", "ok", 5)]
    scores = pq.read_table(tmp_path / "all" / "task=exact" / "scores.parquet")
    assert scores.column("model").to_pylist() == ["m1", "m1", "m2", "m2", "m2"]
    assert scores.column("note").to_pylist() == [None, None, "x", None, "z"]
    got = evalscore.run_suite(
        suite, tmp_path / "m2", recursive=True, union_by_name=True, where="model = 'm2'"
    )
    assert [t["rows"] for t in got["tasks"]] == [3]
    with pytest.raises(evalscore.EvalscoreError) as e:
        evalscore.run_suite(suite, tmp_path / "off", recursive=True, hive_partitioning=False, where="model = 'm2'")
    assert "no partition columns" in e.value.message
