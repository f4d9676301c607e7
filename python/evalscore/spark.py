"""Scoring inside Spark: one pass over a DataFrame through `mapInArrow`.

    scores, res = evalscore.spark.score(df, task, keep=["id"])

Each partition scores its Arrow batches (Spark's, 10,000 rows by default) with the task and
emits the score rows, then one extra row carrying the partition's merged metric states in a
binary column. The output is checkpointed once (`localCheckpoint`), so the input is read once:
the driver collects the state rows, merges them (`Task.finish`) and returns the score rows as a
DataFrame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from . import Result, Task

# The binary column of partition states in the mapped output; dropped from the scores.
STATES_COLUMN = "__evalscore_states"


def _arrow_schema(spark_schema: Any, large: bool) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(spark_schema, prefers_large_types=large)
    except TypeError:  # Spark 3.5 has no prefers_large_types
        return to_arrow_schema(spark_schema)


def score(
    df: "DataFrame",
    task: "Task",
    keep: Optional[Sequence[str]] = None,
    output_column: Optional[str] = None,
    max_row_errors: int = 0,
) -> Tuple["DataFrame", "Result"]:
    """Scores every row of `df`: (a DataFrame of the scores, the merged metrics).

    `keep` is the CLI's `--keep` (default: `id` when `df` has it). The task is bound to the
    DataFrame's schema on the driver first, so task errors are raised before any job runs.
    `max_row_errors` applies per batch of each partition.
    """
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    spark = df.sparkSession
    large = (
        str(spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")).lower()
        == "true"
    )
    # Only the columns the task reads cross to the Python workers: a prompt column the task
    # never reads would otherwise be serialized to Arrow and back for nothing.
    needed = task._input_columns(_arrow_schema(df.schema, large), keep, output_column)
    if len(needed) < len(df.columns):
        df = df.select(*[F.col(f"`{c}`") for c in needed])
    scores_schema = task._output_schema(_arrow_schema(df.schema, large), keep, output_column)
    fields = [f.with_nullable(True) for f in scores_schema]
    fields.append(pa.field(STATES_COLUMN, pa.binary(), nullable=True))
    spark_out = from_arrow_schema(pa.schema(fields))
    # What Spark expects back from the Python worker: its own Arrow types for this schema.
    out_schema = _arrow_schema(spark_out, large)
    keep_list: Optional[List[str]] = None if keep is None else list(keep)

    def partition(batches: Iterator[Any]) -> Iterator[Any]:
        states = []
        for batch in batches:
            scores, st = task._score_batch(batch, keep_list, output_column, max_row_errors)
            states.append(st)
            columns = [c.cast(f.type) for c, f in zip(scores.columns, out_schema)]
            columns.append(pa.nulls(scores.num_rows, pa.binary()))
            yield pa.RecordBatch.from_arrays(columns, schema=out_schema)
        merged = task._merge(states)
        columns = [pa.nulls(1, f.type) for f in out_schema][:-1]
        columns.append(pa.array([merged], pa.binary()))
        yield pa.RecordBatch.from_arrays(columns, schema=out_schema)

    mapped = df.mapInArrow(partition, spark_out).localCheckpoint(eager=True)
    states = [
        bytes(r[0])
        for r in mapped.where(F.col(STATES_COLUMN).isNotNull()).select(STATES_COLUMN).collect()
    ]
    result = task.finish(states, max_row_errors)
    scores = mapped.where(F.col(STATES_COLUMN).isNull()).drop(STATES_COLUMN)
    return scores, result
