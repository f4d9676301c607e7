"""The in-memory API against the CLI's own files on the same rows."""

from __future__ import annotations

import json
import pickle
import subprocess
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalscore
from conftest import TASK, cli_binary, dict_without_run, without_run

OUTPUTS = ["scores.parquet", "metrics.parquet", "confusion.parquet", "metrics.json", "run.json"]


def assert_same_table(got: pa.Table, want: pa.Table) -> None:
    if "run_id" in want.column_names and "run_id" not in got.column_names[:-3]:
        # A table of a run: the same figures, each run with its own identity.
        got, want = without_run(got), without_run(want)
    assert got.schema.equals(want.schema), f"{got.schema}\n!=\n{want.schema}"
    assert got.to_pylist() == want.to_pylist()


def assert_matches_cli(res: evalscore.Result, cli_out: Path, scores: bool = True) -> None:
    assert_same_table(without_run(res.metrics), without_run(pq.read_table(cli_out / "metrics.parquet")))
    assert_same_table(
        without_run(res.confusion), without_run(pq.read_table(cli_out / "confusion.parquet"))
    )
    assert dict_without_run(res.to_dict()) == dict_without_run(
        json.loads((cli_out / "metrics.json").read_text())
    )
    if scores:
        assert_same_table(res.scores, pq.read_table(cli_out / "scores.parquet"))


def test_score_on_a_pyarrow_table_matches_the_cli(task, table, cli_out):
    res = task.score(table)
    assert res.scores.num_rows == table.num_rows
    assert res.scores.column_names == [
        "id",
        "string_equals__is_correct",
        "loose__is_correct",
        "string_equals_mcqa__is_correct",
        "string_equals_mcqa__completion_validity",
    ]
    assert_matches_cli(res, cli_out)
    # The figures are not trivial: right and wrong rows, nulls, a full 2x2 confusion matrix.
    acc = next(r for r in res.metrics.to_pylist() if r["metric"] == "Accuracy" and r["stat"] == "value")
    assert 0.3 < acc["value"] < 0.5
    assert res.confusion.num_rows == 4
    assert res.to_dict()["rows"] == 25_000


@pytest.mark.parametrize("string_type", [pa.string(), pa.large_string(), pa.string_view()])
def test_every_arrow_string_type_scores_alike(task, table, cli_out, string_type):
    cast = pa.schema(
        [
            pa.field(f.name, string_type) if pa.types.is_string(f.type)
            else pa.field(f.name, pa.list_(string_type)) if pa.types.is_list(f.type)
            else f
            for f in table.schema
        ]
    )
    t = table.cast(cast)
    assert t.schema.field("output").type == string_type
    assert_matches_cli(task.score(t), cli_out)


def test_polars_dataframe(task, table, cli_out):
    df = pl.from_arrow(table)
    # Polars exports its strings as string_view.
    assert pa.table(df).schema.field("output").type == pa.string_view()
    assert_matches_cli(task.score(df), cli_out)


def test_pandas_dataframe(task, table, cli_out):
    df = table.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert_matches_cli(task.score(df), cli_out)


def test_record_batch_and_reader_inputs(task, table, cli_out):
    batches = table.to_batches(max_chunksize=4_000)
    assert len(batches) > 1
    reader = pa.RecordBatchReader.from_batches(table.schema, batches)
    assert_matches_cli(task.score(reader), cli_out)
    one = table.combine_chunks().to_batches()[0]
    assert_matches_cli(task.score(one), cli_out)


def test_keep_and_output_column(task, table):
    t = table.rename_columns(["id", "reply", "answer", "choices", "subject", "label_gt", "label_pred"])
    res = task.score(t, keep=["id", "subject"], output_column="reply")
    assert res.scores.column_names[:2] == ["id", "subject"]
    assert res.scores.column("subject").to_pylist() == table.column("subject").to_pylist()
    assert without_run(res.metrics).to_pylist() == without_run(task.score(table).metrics).to_pylist()


def test_partial_states_merge_in_any_order(task, table, cli_out):
    parts = [table.slice(0, 9_000), table.slice(9_000, 7), table.slice(9_007)]
    states = [task.partial(p) for p in parts]
    assert all(isinstance(s, bytes) and s[:4] == b"ESST" for s in states)
    res = task.finish(reversed(states))
    assert res.scores is None
    assert_matches_cli(res, cli_out, scores=False)
    # States are the library's bytes: equal input, equal bytes.
    assert task.partial(parts[1]) == states[1]


def test_finish_of_no_states_is_the_empty_run(task, table):
    assert dict_without_run(task.finish([]).to_dict()) == dict_without_run(
        task.score(table.slice(0, 0)).to_dict()
    )


def test_task_pickles_with_its_settings(table):
    task = evalscore.Task.from_yaml(TASK, sets={"answer_column": "label_gt"})
    again = pickle.loads(pickle.dumps(task))
    assert again.text == task.text and again.sets == {"answer_column": "label_gt"}
    assert dict_without_run(again.score(table).to_dict()) == dict_without_run(
        task.score(table).to_dict()
    )
    # The set value is used: string_equals compares with label_gt, and nothing equals it.
    acc = [r for r in again.score(table).metrics.to_pylist() if r["metric"] == "Accuracy"]
    assert acc[0]["value"] == 0.0


def test_states_of_another_task_are_refused(task, table):
    other = evalscore.Task.from_yaml(TASK, sets={"answer_column": "label_gt"})
    with pytest.raises(evalscore.EvalscoreError, match="cannot merge states of another task"):
        task.finish([task.partial(table.slice(0, 10)), other.partial(table.slice(0, 10))])
    with pytest.raises(evalscore.EvalscoreError, match=r"states 1: not evalscore states"):
        task.finish([b"nope"])


def test_run_writes_the_cli_files(task, parquet_file, cli_out, tmp_path):
    rows = task.run(inputs=[parquet_file], out=tmp_path / "out")
    assert rows == 25_000
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(OUTPUTS)
    for name in ["scores.parquet", "metrics.parquet", "confusion.parquet"]:
        assert_same_table(pq.read_table(tmp_path / "out" / name), pq.read_table(cli_out / name))
    assert dict_without_run(json.loads((tmp_path / "out" / "metrics.json").read_text())) == dict_without_run(
        json.loads((cli_out / "metrics.json").read_text())
    )


def test_run_of_a_task_from_text(table, parquet_file, cli_out, tmp_path):
    task = evalscore.Task.from_str(TASK.read_text())
    task.run([parquet_file], tmp_path / "out")
    assert_same_table(pq.read_table(tmp_path / "out" / "metrics.parquet"), pq.read_table(cli_out / "metrics.parquet"))


def cli_error(*args: str) -> str:
    p = subprocess.run([str(cli_binary()), *args], capture_output=True, text=True)
    assert p.returncode != 0
    return p.stderr


def test_task_errors_carry_the_cli_text(tmp_path, parquet_file):
    bad = tmp_path / "bad.yaml"
    bad.write_text("definition:\n  scorers:\n    - type: string_equal\n      ground_truth: x\n")
    with pytest.raises(evalscore.TaskError) as e:
        evalscore.Task.from_yaml(bad)
    stderr = cli_error("run", str(bad), "--input", str(parquet_file), "--out", str(tmp_path / "o"))
    assert "error: " + str(e.value) + "\n" == stderr
    assert e.value.message.startswith(f"task file `{bad}`, line 3, column")
    assert e.value.hint is not None and e.value.hint in stderr


def test_missing_task_file(tmp_path, parquet_file):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(evalscore.EvalscoreError) as e:
        evalscore.Task.from_yaml(missing)
    stderr = cli_error("run", str(missing), "--input", str(parquet_file), "--out", str(tmp_path / "o"))
    assert "error: " + str(e.value) + "\n" == stderr
    assert e.value.causes == ["No such file or directory (os error 2)"]


def test_run_errors_carry_the_cli_text(task, parquet_file, tmp_path):
    out = tmp_path / "out"
    task.run([parquet_file], out)
    with pytest.raises(evalscore.OutputError) as e:
        task.run([parquet_file], out)
    stderr = cli_error("run", str(TASK), "--input", str(parquet_file), "--out", str(out))
    assert "error: " + str(e.value) + "\n" == stderr


def test_unknown_column_in_data(task, table):
    with pytest.raises(evalscore.EvalscoreError) as e:
        task.score(table.drop_columns(["answer"]))
    assert "`answer`" in str(e.value)


def test_row_errors_name_the_input_row(table):
    task = evalscore.Task.from_str(
        "definition:\n  scorers:\n    - type: string_equals_mcqa\n"
        "      ground_truth_choice: \"{{ sample.answer }}\"\n      choices: [A, B, C, D]\n"
    )
    answers = table.column("answer").to_pylist()
    answers[12_345] = "AB"
    t = table.set_column(2, "answer", pa.array(answers))
    with pytest.raises(evalscore.EvalscoreError, match=r"^row 12346: "):
        # Rows are counted over the whole input, not within the 5,000-row batch.
        task.score(pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=5_000)))
    res = task.score(t, max_row_errors=1)
    errs = [r for r in res.metrics.to_pylist() if r["metric"] == "row_errors"]
    assert errs[0]["value"] == 1.0


def test_not_arrow_data(task):
    with pytest.raises(TypeError, match="cannot score a builtins.list"):
        task.score([1, 2])


def test_threads_do_not_change_the_result(task, table):
    # 200,000 rows in one chunk and in uneven chunks: cut into 65,536-row pieces that the
    # threads score at once, then taken back in input order.
    big = pa.concat_tables([table] * 8)
    one = big.combine_chunks()
    uneven = pa.Table.from_batches(big.to_batches(max_chunksize=70_001))
    want = task.score(one, threads=1)
    for data, threads in [(one, 2), (one, 3), (uneven, 2)]:
        got = task.score(data, threads=threads)
        assert got.scores.equals(want.scores)
        assert without_run(got.metrics).to_pylist() == without_run(want.metrics).to_pylist()
        assert dict_without_run(got.to_dict()) == dict_without_run(want.to_dict())


def test_the_first_failing_row_in_input_order_is_reported_with_threads(table):
    task = evalscore.Task.from_str(
        "definition:\n  scorers:\n    - type: string_equals_mcqa\n"
        "      ground_truth_choice: \"{{ sample.answer }}\"\n      choices: [A, B, C, D]\n"
    )
    big = pa.concat_tables([table] * 8).combine_chunks()
    answers = big.column("answer").to_pylist()
    # Two bad rows in different pieces: the earlier one is the error, whichever thread
    # finishes first.
    answers[70_000] = "AB"
    answers[190_000] = "CD"
    t = big.set_column(2, "answer", pa.array(answers))
    for threads in (1, 2):
        with pytest.raises(evalscore.EvalscoreError, match=r"^row 70001: "):
            task.score(t, threads=threads)
