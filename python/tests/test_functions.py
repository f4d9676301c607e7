"""Python functions as scorers (`custom` with `function:`) and metrics (`python`), in memory,
through partial states and `run`, pickled, and in Spark and Ray."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import evalscore
from conftest import cli_binary, dict_without_run, without_run

TASK = """
definition:
  output_column: output
  scorers:
    - type: custom
      key: first_letter
      function: first_letter
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct, name: accuracy}
        - type: python
          name: py_accuracy
          field: is_correct
          function: fold
          merge: merge
          finish: finish
        - type: python
          name: py_by_subject
          field: is_correct
          function: fold
          merge: merge
          finish: finish_both
          group_by: [subject]
    - type: custom
      key: length
      function: length
      normalize: [strip]
      metrics:
        - {type: mean, field: is_correct}
        - {type: python, name: lengths, field: value, function: count_values, merge: add_counts, finish: top_counts}
"""

# The same figures by built-in means: `first_letter` is `string_equals_mcqa`'s first character
# test without the choice check, written as a condition.
CONDITION_TASK = """
definition:
  output_column: output
  scorers:
    - type: custom
      key: first_letter
      condition: "value[:1] == ground_truth[:1]"
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct, name: accuracy}
"""


def first_letter(values: pa.Array, ground_truth: pa.Array) -> pa.Array:
    return pc.equal(pc.utf8_slice_codeunits(values, 0, 1), pc.utf8_slice_codeunits(ground_truth, 0, 1))


def length(values: pa.Array) -> list:
    # A plain list of floats (None where the value is null).
    return [None if v is None else float(len(v)) for v in values.to_pylist()]


def fold(scores: pa.Array):
    assert scores.type == pa.float64(), scores.type
    return (pc.sum(scores).as_py() or 0.0, len(scores) - scores.null_count)


def merge(a, b):
    return (a[0] + b[0], a[1] + b[1])


def finish(state):
    return None if state[1] == 0 else state[0] / state[1]


def finish_both(state):
    return {"accuracy": finish(state), "n": state[1]}


def count_values(values: pa.Array) -> dict:
    counts: dict = {}
    for v in values.to_pylist():
        if v is not None:
            counts[v] = counts.get(v, 0) + 1
    return counts


def add_counts(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def top_counts(counts: dict) -> dict:
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    return {k: v for k, v in top}


FUNCTIONS = {
    "first_letter": first_letter,
    "length": length,
    "fold": fold,
    "merge": merge,
    "finish": finish,
    "finish_both": finish_both,
    "count_values": count_values,
    "add_counts": add_counts,
    "top_counts": top_counts,
}


@pytest.fixture(scope="module")
def ftask() -> evalscore.Task:
    return evalscore.Task.from_str(TASK, functions=FUNCTIONS)


def rows_of(res: evalscore.Result, metric: str) -> list:
    return [
        (r["stat"], r["label"], r["value"], r["n"], r.get("subject"))
        for r in res.metrics.to_pylist()
        if r["metric"] == metric
    ]


def expected(table: pa.Table):
    """The figures by hand, in plain Python over the same rows."""
    outs, answers, subjects = (table.column(c).to_pylist() for c in ("output", "answer", "subject"))
    passes = [o is not None and o[:1] == a[:1] for o, a in zip(outs, answers)]
    by_subject: dict = {}
    for p, s in zip(passes, subjects):
        t = by_subject.setdefault(s, [0, 0])
        t[0] += p
        t[1] += 1
    counts: dict = {}
    for o in outs:
        if o is not None:
            counts[o.strip()] = counts.get(o.strip(), 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    lengths = [0.0 if o is None else float(len(o.strip())) for o in outs]
    return passes, by_subject, top, lengths


def test_function_scorer_and_python_metrics_give_the_figures_by_hand(ftask, table):
    res = ftask.score(table)
    passes, by_subject, top, lengths = expected(table)
    n = table.num_rows
    assert res.scores.column_names == ["id", "first_letter__is_correct", "length__is_correct"]
    assert res.scores.column("first_letter__is_correct").to_pylist() == [float(p) for p in passes]
    assert res.scores.column("length__is_correct").to_pylist() == lengths
    acc = sum(passes) / n
    assert rows_of(res, "py_accuracy") == [("value", None, acc, n, None)]
    # The built-in mean of the same field agrees with the Python metric.
    assert [r for r in rows_of(res, "accuracy") if r[0] == "value"] == [("value", None, acc, n, None)]
    want = []
    for s in sorted(by_subject):
        p, c = by_subject[s]
        want += [("value", "accuracy", p / c, c, s), ("value", "n", float(c), c, s)]
    # Overall figures first, then each group's in key order.
    assert rows_of(res, "py_by_subject") == [
        ("value", "accuracy", acc, n, None),
        ("value", "n", float(n), n, None),
    ] + want
    non_null = sum(o is not None for o in table.column("output").to_pylist())
    assert rows_of(res, "lengths") == [("value", k, float(v), non_null, None) for k, v in top]
    py = [r for r in res.metrics.to_pylist() if r["metric"] == "lengths"]
    assert {r["metric_type"] for r in py} == {"python"}
    assert {r["field"] for r in py} == {"value"}


def test_a_function_scorer_equals_the_same_condition(ftask, table):
    res = ftask.score(table)
    cond = evalscore.Task.from_str(CONDITION_TASK).score(table)
    assert res.scores.column("first_letter__is_correct").to_pylist() == cond.scores.column(
        "first_letter__is_correct"
    ).to_pylist()
    # The function task's metrics also have the `subject` group column.
    accuracy = lambda r: [
        {k: v for k, v in m.items() if k != "subject"}
        for m in without_run(r.metrics).to_pylist()
        if m["metric"] == "accuracy"
    ]
    assert len(accuracy(res)) == 4
    assert accuracy(res) == accuracy(cond)


def test_partial_states_merge_in_any_order_and_pickle_with_the_task(ftask, table):
    whole = ftask.score(table)
    states = [ftask.partial(b) for b in table.to_batches(max_chunksize=997)]
    assert len(states) > 20  # more than the 16 pending states that trigger a merge
    again = pickle.loads(pickle.dumps(ftask))
    assert again.functions.keys() == FUNCTIONS.keys()
    res = again.finish(list(reversed(states)))
    assert without_run(res.metrics).to_pylist() == without_run(whole.metrics).to_pylist()
    assert dict_without_run(res.to_dict()) == dict_without_run(whole.to_dict())


@pytest.mark.parametrize("kind", ["utf8", "large_utf8", "string_view", "polars", "pandas"])
def test_every_input_kind_gives_the_same_scores(ftask, table, kind):
    want = ftask.score(table)
    if kind == "polars":
        import polars as pl

        data = pl.from_arrow(table)
    elif kind == "pandas":
        data = table.to_pandas()
    else:
        t = {"utf8": pa.string(), "large_utf8": pa.large_string(), "string_view": pa.string_view()}[kind]
        data = table.cast(
            pa.schema([pa.field(f.name, t) if f.type == pa.string() else f for f in table.schema])
        )
    got = ftask.score(data)
    assert got.scores.drop_columns(["id"]).to_pylist() == want.scores.drop_columns(["id"]).to_pylist()
    assert without_run(got.metrics).to_pylist() == without_run(want.metrics).to_pylist()


def test_run_writes_the_five_files_with_the_functions(ftask, parquet_file, tmp_path, table):
    rows = ftask.run([parquet_file], tmp_path / "out")
    assert rows == table.num_rows
    metrics = pq.read_table(tmp_path / "out" / "metrics.parquet")
    res = ftask.score(table)
    assert without_run(metrics).to_pylist() == without_run(res.metrics).to_pylist()


def test_the_cli_refuses_a_task_naming_a_function(tmp_path, parquet_file):
    task = tmp_path / "task.yaml"
    task.write_text(TASK)
    p = subprocess.run(
        [str(cli_binary()), "run", str(task), "--input", str(parquet_file), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines()[:2] == [
        f"error: task file `{task}`, line 7, column 17: scorer `first_letter` calls the Python "
        "function `first_letter`, which only evalscore's Python package can run",
        "hint: score this task from Python: `evalscore.Task.from_yaml(\"task.yaml\", "
        "functions={\"first_letter\": fn})` (docs/python.md)",
    ]
    assert not (tmp_path / "out").exists()


def bad(text_fn, table, **extra):
    task = evalscore.Task.from_str(
        "definition:\n  scorers:\n    - type: custom\n      function: f\n", functions={"f": text_fn, **extra}
    )
    with pytest.raises(evalscore.EvalscoreError) as e:
        task.score(table.slice(0, 10))
    return str(e.value)


def test_wrong_results_are_errors_naming_the_function(table):
    assert bad(lambda v: [True] * 3, table) == (
        "row 1: scorer `custom`: function `f` returned 3 values for a batch of 10 rows\n"
        "hint: a scorer function returns one boolean or number per row of the batch it is given"
    )
    assert bad(lambda v: pa.array(["x"] * len(v)), table) == (
        "row 1: scorer `custom`: function `f` returned values of type Utf8; a scorer function "
        "returns booleans or numbers\n"
        "hint: return a boolean array (pass/fail) or a float array (a score per row)"
    )
    assert bad(lambda v: "yes", table) == (
        "row 1: scorer `custom`: function `f` failed: TypeError: returned a str; a scorer "
        "function returns an array with one boolean or number per row (a pyarrow array, a "
        "list, a NumPy array or a Series)"
    )

    def boom(v):
        raise ValueError("boom")

    assert bad(boom, table) == "row 1: scorer `custom`: function `f` failed: ValueError: boom"
    msg = bad(lambda v: [float("nan")] * len(v), table)
    assert msg.startswith("row 1: scorer `custom`: function `f` returned NaN for this row"), msg


def test_a_missing_function_is_a_task_error():
    with pytest.raises(evalscore.TaskError) as e:
        evalscore.Task.from_str(TASK, functions={"first_letter": first_letter}).score(
            pa.table({"output": ["a"], "answer": ["a"], "subject": ["x"]})
        )
    assert str(e.value) == (
        "task, line 14, column 21: metric `py_accuracy` of scorer `first_letter` calls the "
        "function `fold`, which is not among the functions given\n"
        "hint: functions given: first_letter; pass it as `functions={\"fold\": fn}`"
    )
    with pytest.raises(TypeError, match="functions: `x` is not callable"):
        evalscore.Task.from_str(TASK, functions={"x": 3})


def test_metric_finish_must_return_numbers(table):
    text = (
        "definition:\n  scorers:\n    - type: custom\n      condition: \"value\"\n      metrics:\n"
        "        - {type: python, field: is_correct, function: f, merge: m, finish: g}\n"
    )
    task = evalscore.Task.from_str(
        text, functions={"f": lambda v: 1, "m": lambda a, b: a + b, "g": lambda s: "high"}
    )
    with pytest.raises(evalscore.EvalscoreError) as e:
        task.score(table.slice(0, 10))
    assert str(e.value) == (
        "scorer `custom`: metric `python`: function `g` failed: TypeError: returned a str; a "
        "finish function returns a number, None, or a dict of label to number"
    )


# Spark and Ray: the functions travel inside the pickled task. This module is not importable
# on the workers, so cloudpickle is told to ship its functions by value (as it does for a
# notebook's functions).
def _by_value(cloudpickle) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])


def test_spark_runs_the_functions_on_executors(spark, ftask, table, parquet_file):
    import evalscore.spark
    from pyspark import cloudpickle

    _by_value(cloudpickle)
    df = spark.read.parquet(str(parquet_file)).repartition(4)
    assert df.rdd.getNumPartitions() == 4
    scores_df, res = evalscore.spark.score(df, ftask, keep=["id"])
    want = ftask.score(table)
    assert without_run(res.metrics).to_pylist() == without_run(want.metrics).to_pylist()
    got = pa.Table.from_pandas(scores_df.toPandas(), preserve_index=False).sort_by("id")
    for name in want.scores.column_names:
        assert got.column(name).to_pylist() == want.scores.column(name).to_pylist(), name


def test_ray_runs_the_functions_on_workers(ray_local, ftask, table):
    import evalscore.ray
    from ray import cloudpickle

    _by_value(cloudpickle)
    ds = ray_local.data.from_arrow(table).repartition(4)
    scores_ds, res = evalscore.ray.score(ds, ftask, keep=["id"])
    want = ftask.score(table)
    assert without_run(res.metrics).to_pylist() == without_run(want.metrics).to_pylist()
    got = pa.concat_tables(
        [pa.table(b) for b in scores_ds.iter_batches(batch_format="pyarrow", batch_size=None)]
    ).sort_by("id")
    for name in want.scores.column_names:
        assert got.column(name).to_pylist() == want.scores.column(name).to_pylist(), name
