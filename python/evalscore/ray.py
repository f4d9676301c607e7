"""Scoring inside Ray Data: `map_batches(batch_format="pyarrow")` over a Dataset.

    scores, res = evalscore.ray.score(ds, task, keep=["id"])

Each block's batch is scored by the task; its score rows are followed by one row carrying the
batch's metric states in a binary column. The mapped dataset is materialized once, so the input
is read once: the driver merges the state rows (`Task.finish`) and returns the score rows as a
Dataset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover
    import ray.data

    from . import Result, Task

# The binary column of batch states in the mapped output; dropped from the scores.
STATES_COLUMN = "__evalscore_states"


class _ScoreBatches:
    """The mapping function: picklable, binds the task once per worker and schema."""

    def __init__(self, task: "Task", keep: Optional[List[str]], output_column: Optional[str], max_row_errors: int):
        self.task = task
        self.keep = keep
        self.output_column = output_column
        self.max_row_errors = max_row_errors

    def __call__(self, table: Any) -> Any:
        import pyarrow as pa

        parts = []
        states = []
        schema = None
        batches = table.to_batches() or [
            pa.RecordBatch.from_pylist([], schema=table.schema)
        ]
        for batch in batches:
            scores, st = self.task._score_batch(batch, self.keep, self.output_column, self.max_row_errors)
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


def _score_rows(table: Any) -> Any:
    import pyarrow.compute as pc

    return table.filter(pc.is_null(table[STATES_COLUMN])).drop_columns([STATES_COLUMN])


def score(
    ds: "ray.data.Dataset",
    task: "Task",
    keep: Optional[Sequence[str]] = None,
    output_column: Optional[str] = None,
    max_row_errors: int = 0,
) -> Tuple["ray.data.Dataset", "Result"]:
    """Scores every row of `ds`: (a Dataset of the scores, the merged metrics).

    `keep` is the CLI's `--keep` (default: `id` when the data has it). `max_row_errors`
    applies per batch.
    """
    keep_list = None if keep is None else list(keep)
    mapped = ds.map_batches(
        _ScoreBatches(task, keep_list, output_column, max_row_errors),
        batch_format="pyarrow",
        batch_size=None,
    ).materialize()
    states: List[bytes] = []
    for t in mapped.select_columns([STATES_COLUMN]).iter_batches(
        batch_format="pyarrow", batch_size=None
    ):
        states.extend(v for v in t[STATES_COLUMN].to_pylist() if v is not None)
    result = task.finish(states, max_row_errors)
    scores = mapped.map_batches(_score_rows, batch_format="pyarrow", batch_size=None)
    return scores, result
