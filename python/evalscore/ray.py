"""Scoring inside Ray Data: `map_batches(batch_format="pyarrow")` over a Dataset.

    scores, res = evalscore.ray.score(ds, task, keep=["id"])

Each block's batch is scored by the task; its score rows are followed by one row carrying the
batch's metric states in a binary column. The mapped dataset is materialized once, so the input
is read once: the driver merges the state rows (`Task.finish`) and returns the score rows as a
Dataset.

A task with model-graded scorers first sends each distinct judge request once per job: the
blocks list their rows' requests, Ray's `groupby` on the cache key keeps one row per key, each
of those is sent once, and the replies, gathered on the driver, go with the scoring function,
which scores every row with exactly them (nothing is sent then).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from . import _judging

if TYPE_CHECKING:  # pragma: no cover
    import ray.data

    from . import Result, Task

# The binary column of batch states in the mapped output; dropped from the scores.
STATES_COLUMN = "__evalscore_states"


def _batches(table: Any) -> List[Any]:
    import pyarrow as pa

    return table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]


class _ScoreBatches:
    """The mapping function: picklable, binds the task once per worker and schema. `replies`
    (a job token and a pyarrow table), when given, are the only judge replies it scores with."""

    def __init__(
        self,
        task: "Task",
        keep: Optional[List[str]],
        output_column: Optional[str],
        max_row_errors: int,
        cache: Any = None,
        offline: bool = False,
        replies: Optional[Tuple[str, Any]] = None,
    ):
        self.task = task
        self.keep = keep
        self.output_column = output_column
        self.max_row_errors = max_row_errors
        self.cache = cache
        self.offline = offline
        self.replies = replies

    def __call__(self, table: Any) -> Any:
        import pyarrow as pa

        parts = []
        states = []
        schema = None
        given = None
        if self.replies is not None:
            given = _judging.held_replies(self.task, self.replies[0], self.replies[1])
        for batch in _batches(table):
            scores, st = self.task._score_batch(
                batch,
                self.keep,
                self.output_column,
                self.max_row_errors,
                self.cache,
                self.offline,
                given,
            )
            states.append(st)
            if schema is None:
                schema = pa.schema(
                    [f.with_nullable(True) for f in scores.schema]
                    + [pa.field(STATES_COLUMN, pa.binary(), nullable=True)]
                )
            columns = list(scores.columns) + [pa.nulls(scores.num_rows, pa.binary())]
            parts.append(pa.RecordBatch.from_arrays(columns, schema=schema))
        columns = [pa.nulls(1, f.type) for f in schema][:-1]
        columns.append(pa.array([self.task._merge(states)], pa.binary()))
        parts.append(pa.RecordBatch.from_arrays(columns, schema=schema))
        return pa.Table.from_batches(parts, schema=schema)


class _Requests:
    """The rows' judge requests, distinct within each batch (`n`: the rows asking each)."""

    def __init__(self, task: "Task", keep: Optional[List[str]], output_column: Optional[str], cache: Any, offline: bool):
        self.task = task
        self.keep = keep
        self.output_column = output_column
        self.cache = cache
        self.offline = offline

    def __call__(self, table: Any) -> Any:
        import pyarrow as pa

        return pa.Table.from_batches(
            [
                self.task._judge_requests(b, self.keep, self.output_column, self.cache, self.offline)
                for b in _batches(table)
            ]
        )


def _one_per_key(group: Any) -> Any:
    """A group of rows with one cache key: its first row, asked by all the group's rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    first = group.slice(0, 1)
    n = pa.array([pc.sum(group.column("n")).as_py()], pa.int64())
    return first.set_column(first.schema.get_field_index("n"), "n", n)


class _Send:
    """Sends each request of a block once: its replies, then a row with the block's cost."""

    def __init__(self, task: "Task", cache: Any, offline: bool):
        self.task = task
        self.cache = cache
        self.offline = offline

    def __call__(self, table: Any) -> Any:
        import pyarrow as pa

        rows = _judging.judge_rows(self.task, table.to_batches(), self.cache, self.offline)
        return pa.Table.from_batches(list(rows), schema=_judging.replies_schema())


def _judge_once(
    ds: "ray.data.Dataset",
    task: "Task",
    keep: Optional[List[str]],
    output_column: Optional[str],
    cache: Any,
    offline: bool,
) -> Tuple[Any, Dict[str, Dict[str, Any]]]:
    """Each distinct judge request of `ds`'s rows sent once: (the replies as a pyarrow
    table, what each model cost)."""
    import pyarrow as pa

    sent = (
        ds.map_batches(
            _Requests(task, keep, output_column, cache, offline),
            batch_format="pyarrow",
            batch_size=None,
        )
        # One row per cache key over every block: Ray's groupby (a shuffle by key).
        .groupby("key")
        .map_groups(_one_per_key, batch_format="pyarrow")
        .map_batches(_Send(task, cache, offline), batch_format="pyarrow", batch_size=None)
    )
    tables = [
        pa.table(b) for b in sent.iter_batches(batch_format="pyarrow", batch_size=None)
    ]
    return _judging.split_replies(tables)


def _score_rows(table: Any) -> Any:
    import pyarrow.compute as pc

    return table.filter(pc.is_null(table[STATES_COLUMN])).drop_columns([STATES_COLUMN])


def score(
    ds: "ray.data.Dataset",
    task: "Task",
    keep: Optional[Sequence[str]] = None,
    output_column: Optional[str] = None,
    max_row_errors: int = 0,
    *,
    cache: Any = None,
    offline: bool = False,
) -> Tuple["ray.data.Dataset", "Result"]:
    """Scores every row of `ds`: (a Dataset of the scores, the merged metrics).

    `keep` is the CLI's `--keep` (default: `id` when the data has it). `max_row_errors`
    applies per batch. `cache` and `offline` are those of `Task.score`, on every worker; the
    judge pass counts its cost in `Result.judge`.
    """
    keep_list = None if keep is None else list(keep)
    replies, cost = None, None
    if task._lists_judge_requests:
        table, cost = _judge_once(ds, task, keep_list, output_column, cache, offline)
        replies = (uuid.uuid4().hex, table)
    mapped = ds.map_batches(
        _ScoreBatches(task, keep_list, output_column, max_row_errors, cache, offline, replies),
        batch_format="pyarrow",
        batch_size=None,
    ).materialize()
    states: List[bytes] = []
    for t in mapped.select_columns([STATES_COLUMN]).iter_batches(
        batch_format="pyarrow", batch_size=None
    ):
        states.extend(v for v in t[STATES_COLUMN].to_pylist() if v is not None)
    result = task.finish(states, max_row_errors)
    if cost is not None:
        result.judge = cost
    scores = mapped.map_batches(_score_rows, batch_format="pyarrow", batch_size=None)
    return scores, result
