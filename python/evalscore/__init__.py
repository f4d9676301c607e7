"""evalscore for Python: score Arrow data with an evalscore task, in memory, in Spark and in Ray.

    import evalscore
    task = evalscore.Task.from_yaml("task.yaml", sets={"answer_column": "answer"})
    res = task.score(table)          # anything with __arrow_c_stream__ (pyarrow, Polars, pandas)
    res.scores, res.metrics, res.confusion, res.to_dict()

See docs/python.md for the whole API, `evalscore.spark` and `evalscore.ray`. The annotations
here are the package's types (`py.typed`); the extension's are in `_evalscore.pyi`.
"""

from __future__ import annotations

import json
import os
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
)

from ._evalscore import (
    DataError,
    EvalscoreError,
    InputError,
    OutputError,
    TaskError,
    _Task,
    __version__,
    read_task as _read_task,
    run_suite as _run_suite,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "Task",
    "run_suite",
    "Result",
    "EvalscoreError",
    "TaskError",
    "InputError",
    "DataError",
    "OutputError",
    "__version__",
]


def _arrow(data: Any) -> Any:
    """`data` as an object the extension reads through the Arrow PyCapsule interface."""
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return data
    # pandas before 2.2 has no __arrow_c_stream__.
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas":
        import pyarrow as pa

        return pa.Table.from_pandas(data, preserve_index=False)
    raise TypeError(
        f"cannot score a {type(data).__module__}.{type(data).__name__}: expected a pyarrow "
        "Table, RecordBatch or RecordBatchReader, a Polars or pandas DataFrame, or any object "
        "with __arrow_c_stream__"
    )


def _sets(sets: Optional[Mapping[str, Any]]) -> List[Tuple[str, str]]:
    return [(str(k), str(v)) for k, v in (sets or {}).items()]


class Result:
    """What `Task.score` and `Task.finish` give: scores (None after `finish`), metrics,
    confusion and metrics.json's content; `judge`, what each judge model cost (by `models:`
    key: run.json's counters `requests_sent`, `cache_hits`, `deduplicated`, `retries`,
    `failures`, `prompt_tokens`, `completion_tokens`; empty after `finish`)."""

    scores: Optional[pa.Table]
    metrics: pa.Table
    confusion: pa.Table
    judge: Dict[str, Dict[str, Any]]

    def __init__(
        self,
        scores: Optional[pa.Table],
        metrics: pa.Table,
        confusion: pa.Table,
        metrics_json: str,
        judge: Optional[Dict[str, Dict[str, Any]]] = None,
    ) -> None:
        self.scores = scores
        self.metrics = metrics
        self.confusion = confusion
        self._json = metrics_json
        self.judge = dict(judge or {})

    def to_dict(self) -> Dict[str, Any]:
        """metrics.json's content."""
        return json.loads(self._json)

    def __repr__(self) -> str:
        rows = None if self.scores is None else self.scores.num_rows
        return f"<evalscore.Result scores={rows} rows, {self.metrics.num_rows} metric rows>"


class Task:
    """A parsed evalscore task. Pickles (it carries its YAML text and settings), so it can be
    shipped to Spark executors and Ray workers."""

    def __init__(
        self,
        text: str,
        sets: Optional[Mapping[str, Any]] = None,
        *,
        path: Optional[str] = None,
        base_dir: Optional[str] = None,
        functions: Optional[Mapping[str, Callable[..., Any]]] = None,
    ) -> None:
        self._text = text
        self._sets = dict(sets or {})
        self._path = None if path is None else os.fspath(path)
        self._base_dir = None if base_dir is None else os.fspath(base_dir)
        self._functions = None if functions is None else dict(functions)
        self._task = _Task(text, _sets(self._sets), self._path, self._base_dir, self._functions)

    @classmethod
    def from_yaml(
        cls,
        path: "os.PathLike[str] | str",
        sets: Optional[Mapping[str, Any]] = None,
        functions: Optional[Mapping[str, Callable[..., Any]]] = None,
    ) -> "Task":
        """Reads a task file; `sets` are the CLI's `--set NAME=VALUE` pairs; `functions` are
        the Python functions its `custom` scorers (`function:`) and `python` metrics call."""
        p = os.fspath(path)
        text = _read_task(p)
        return cls(text, sets, path=p, base_dir=os.path.dirname(p), functions=functions)

    @classmethod
    def from_str(
        cls,
        text: str,
        sets: Optional[Mapping[str, Any]] = None,
        base_dir: Optional[str] = None,
        functions: Optional[Mapping[str, Callable[..., Any]]] = None,
    ) -> "Task":
        """A task from its YAML text."""
        return cls(text, sets, base_dir=base_dir, functions=functions)

    def __reduce__(self):
        # The functions travel with the task: pickled by reference with `pickle`, by value
        # (lambdas, notebook functions) with cloudpickle, as Spark and Ray ship closures.
        return (_rebuild, (self._text, self._sets, self._path, self._base_dir, self._functions))

    def __repr__(self) -> str:
        where = self._path or "<text>"
        return f"<evalscore.Task {where} scorers={self.scorer_keys}>"

    @property
    def text(self) -> str:
        """The task's YAML text."""
        return self._text

    @property
    def sets(self) -> Dict[str, Any]:
        return dict(self._sets)

    @property
    def functions(self) -> Dict[str, Callable[..., Any]]:
        """The functions given with `functions=`, by name."""
        return dict(self._functions or {})

    @property
    def scorer_keys(self) -> List[str]:
        return self._task.scorer_keys

    @property
    def warnings(self) -> List[str]:
        return self._task.warnings

    def score(
        self,
        data: Any,
        keep: Optional[Sequence[str]] = None,
        output_column: Optional[str] = None,
        max_row_errors: int = 0,
        threads: int = 0,
        *,
        cache: Any = None,
        offline: bool = False,
    ) -> Result:
        """Scores every row of `data`: the rows' scores (scores.parquet's columns; `keep` is
        `--keep`, default `id` when the data has it) and the metrics. `threads` score pieces
        of the data at once (0: one per core); the result does not depend on them.

        `cache` is the judge cache of model-graded scorers: None the default file, a path
        another file (`--cache PATH`), False none (`--no-cache`); `offline=True` sends
        nothing (`--offline`). `Result.judge` is what each model cost in this call."""
        scores, states, cost = self._task.score(
            _arrow(data),
            _list(keep),
            output_column,
            int(max_row_errors),
            True,
            int(threads),
            cache=cache,
            offline=bool(offline),
        )
        metrics, confusion, js = self._task.finish([states], max_row_errors > 0)
        return Result(scores, metrics, confusion, js, json.loads(cost))

    def partial(
        self,
        data: Any,
        keep: Optional[Sequence[str]] = None,
        output_column: Optional[str] = None,
        max_row_errors: int = 0,
        threads: int = 0,
        *,
        cache: Any = None,
        offline: bool = False,
    ) -> bytes:
        """The metric states of `data`'s rows as bytes, to merge with `finish`; `cache` and
        `offline` as for `score`."""
        _, states, _ = self._task.score(
            _arrow(data),
            _list(keep),
            output_column,
            int(max_row_errors),
            False,
            int(threads),
            cache=cache,
            offline=bool(offline),
        )
        return states

    def finish(self, states: Iterable[bytes], max_row_errors: int = 0) -> Result:
        """The metrics of merged states (from `partial`, in any order); `scores` is None."""
        metrics, confusion, js = self._task.finish(list(states), max_row_errors > 0)
        return Result(None, metrics, confusion, js)

    def run(
        self,
        inputs: Sequence["os.PathLike[str] | str"],
        out: "os.PathLike[str] | str",
        keep: Optional[Sequence[str]] = None,
        output_column: Optional[str] = None,
        threads: int = 0,
        overwrite: bool = False,
        max_row_errors: "int | str" = 0,
        recursive: bool = False,
        hive_partitioning: Optional[bool] = None,
        where: Optional[str] = None,
        union_by_name: bool = False,
        format: str = "folder",
        run_id: Optional[str] = None,
        labels: Optional[Mapping[str, Any]] = None,
        task_name: Optional[str] = None,
        *,
        cache: Any = None,
        offline: bool = False,
    ) -> int:
        """The CLI's `evalscore run`: writes scores.parquet, metrics.parquet,
        confusion.parquet, metrics.json and run.json to `out`. Returns the rows scored.

        `format="delta"` (`--format delta`) appends the run to the Delta tables `scores`,
        `metrics`, `confusion` and `runs` under the root `out` instead (docs/output-format.md);
        `run_id` and `labels` are `--run-id` and `--label`; `task_name` is the `task` value
        in the tables (default: the task file's name without extension, `task` for a task
        made from text).

        `recursive` reads a folder or prefix at any depth (`--recursive`);
        `hive_partitioning` reads `key=value` folders as columns: None when every file has
        the same keys, True always (`--hive-partitioning`), False never
        (`--no-hive-partitioning`); `where` reads only the files whose partition columns
        match the expression (`--where`, ANDed with the task's `filter:`);
        `union_by_name=True` is `--union-by-name`; `cache` and `offline` are as for `score`
        (`--cache`, `--no-cache`, `--offline`)."""
        if isinstance(inputs, (str, os.PathLike)):
            inputs = [inputs]
        return self._task.run(
            [os.fspath(p) for p in inputs],
            os.fspath(out),
            _list(keep),
            output_column,
            int(threads),
            bool(overwrite),
            str(max_row_errors),
            bool(recursive),
            None if hive_partitioning is None else bool(hive_partitioning),
            where,
            union_by_name=bool(union_by_name),
            format=str(format),
            run_id=run_id,
            labels=_sets(labels),
            task_name=task_name,
            cache=cache,
            offline=bool(offline),
        )

    # For evalscore.spark and evalscore.ray: one batch at a time. `replies` (from
    # `_judge_replies`) are the only judge replies the batch is scored with.
    def _score_batch(self, batch: Any, keep: Optional[Sequence[str]], output_column: Optional[str], max_row_errors: int, cache: Any = None, offline: bool = False, replies: Any = None):
        return self._task.score_batch(batch, _list(keep), output_column, int(max_row_errors), cache=cache, offline=bool(offline), replies=replies)

    def _output_schema(self, schema: Any, keep: Optional[Sequence[str]], output_column: Optional[str], cache: Any = None, offline: bool = False):
        return self._task.output_schema(schema, _list(keep), output_column, cache=cache, offline=bool(offline))

    def _input_columns(self, schema: Any, keep: Optional[Sequence[str]], output_column: Optional[str], cache: Any = None, offline: bool = False) -> List[str]:
        return self._task.input_columns(schema, _list(keep), output_column, cache=cache, offline=bool(offline))

    # Judging apart from scoring, so that Spark and Ray send each distinct request once.
    @property
    def _lists_judge_requests(self) -> bool:
        return self._task.lists_judge_requests

    def _judge_requests(self, batch: Any, keep: Optional[Sequence[str]], output_column: Optional[str], cache: Any = None, offline: bool = False):
        return self._task.judge_requests(batch, _list(keep), output_column, cache=cache, offline=bool(offline))

    def _send_judge_requests(self, batch: Any, cache: Any = None, offline: bool = False):
        replies, cost = self._task.send_judge_requests(batch, cache=cache, offline=bool(offline))
        return replies, json.loads(cost)

    def _judge_replies(self, data: Any):
        return self._task.judge_replies(_arrow(data))

    def _merge(self, states: List[bytes]) -> bytes:
        return self._task.merge(states)


def run_suite(
    path: "os.PathLike[str] | str",
    out: "os.PathLike[str] | str",
    inputs: Optional[Sequence["os.PathLike[str] | str"]] = None,
    labels: Optional[Mapping[str, Any]] = None,
    sets: Optional[Mapping[str, Any]] = None,
    keep: Optional[Sequence[str]] = None,
    output_column: Optional[str] = None,
    threads: int = 0,
    overwrite: bool = False,
    max_row_errors: "int | str" = 0,
    keep_going: bool = False,
    run_id: Optional[str] = None,
    recursive: bool = False,
    hive_partitioning: Optional[bool] = None,
    where: Optional[str] = None,
    union_by_name: bool = False,
    format: str = "folder",
    *,
    cache: Any = None,
    offline: bool = False,
) -> Dict[str, Any]:
    """The CLI's `evalscore run SUITE.yaml --out OUT`: every task of the suite file, its shared
    inputs read once, each task's five files in `out/task=NAME/`. `inputs` replace the suite's
    shared inputs, `labels` go over its labels, `sets` apply to every task (over its `set:`).
    Returns suite.json's content. A failing task raises its error (nothing is written) unless
    `keep_going`: then the other tasks are written and the failure is in the result's
    `tasks` (`status: "failed"`, `error`). `recursive`, `hive_partitioning`, `where` and
    `union_by_name` are as for `Task.run`, for every task's inputs. `format="delta"` appends
    every task's rows to the Delta tables under the root `out` (one commit per table, the
    `runs` rows last) and writes no suite.json; the record is still returned. `cache` and
    `offline` are as for `Task.score`, for every task."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    text = _run_suite(
        os.fspath(path),
        os.fspath(out),
        [os.fspath(p) for p in inputs or []],
        _sets(labels),
        _sets(sets),
        _list(keep),
        output_column,
        int(threads),
        bool(overwrite),
        str(max_row_errors),
        bool(keep_going),
        run_id,
        recursive=bool(recursive),
        hive_partitioning=None if hive_partitioning is None else bool(hive_partitioning),
        where_filter=where,
        union_by_name=bool(union_by_name),
        format=str(format),
        cache=cache,
        offline=bool(offline),
    )
    return json.loads(text)


def _list(v: Optional[Sequence[str]]) -> Optional[List[str]]:
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    return list(v)


def _rebuild(
    text: str,
    sets: Dict[str, Any],
    path: Optional[str],
    base_dir: Optional[str],
    functions: Optional[Dict[str, Callable[..., Any]]] = None,
) -> Task:
    return Task(text, sets, path=path, base_dir=base_dir, functions=functions)


def __getattr__(name: str) -> Any:
    # `evalscore.spark` and `evalscore.ray` without importing PySpark or Ray up front.
    if name in ("spark", "ray"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
