"""Scoring inside Spark: one pass over a DataFrame through `mapInArrow`.

    scores, res = evalscore.spark.score(df, task, keep=["id"])

Each partition scores its Arrow batches (Spark's, 10,000 rows by default) with the task and
emits the score rows, then one extra row carrying the partition's merged metric states in a
binary column. The output is checkpointed once (`localCheckpoint`), so the input is read once:
the driver collects the state rows, merges them (`Task.finish`) and returns the score rows as a
DataFrame.

A task with model-graded scorers first sends each distinct judge request once per job: the
partitions list their rows' requests, Spark's shuffle by cache key brings each key's rows
into one partition, which sends its request once, and the replies, collected on the driver,
travel with the scoring function, which scores every row with exactly them (nothing is sent
then).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple

from . import _judging

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


def _spark_types(fields: List[Any], large: bool) -> Tuple[Any, Any]:
    """The Spark schema of pyarrow `fields`, and the Arrow schema Spark expects back."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    spark_schema = from_arrow_schema(pa.schema(fields))
    return spark_schema, _arrow_schema(spark_schema, large)


def _cast(batch: Any, schema: Any) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [c.cast(f.type) for c, f in zip(batch.columns, schema)], schema=schema
    )


def _to_arrow(df: "DataFrame") -> Any:
    import pyarrow as pa

    if hasattr(df, "toArrow"):
        return df.toArrow()
    return pa.Table.from_pandas(df.toPandas(), preserve_index=False)  # Spark 3.5


def _judge_once(
    df: "DataFrame",
    task: "Task",
    keep: Optional[List[str]],
    output_column: Optional[str],
    cache: Any,
    offline: bool,
    large: bool,
) -> Tuple[Any, Dict[str, Dict[str, Any]]]:
    """Each distinct judge request of `df`'s rows sent once: (the replies as a pyarrow table,
    what each model cost)."""
    import pyarrow as pa

    asked_spark, asked_arrow = _spark_types(
        [
            pa.field("model_key", pa.string()),
            pa.field("key", pa.string()),
            pa.field("request", pa.string()),
            pa.field("n", pa.int64()),
        ],
        large,
    )

    def requests(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            yield _cast(task._judge_requests(batch, keep, output_column, cache, offline), asked_arrow)

    # Every request of a key in one partition: Spark's shuffle by key, into as many partitions
    # as the cluster runs tasks at once. A number given keeps adaptive execution from
    # coalescing them by size (a job's requests are few bytes), which would leave one task
    # sending every request.
    by_key = df.mapInArrow(requests, asked_spark).repartition(_parallelism(df), "key")
    replies_spark, replies_arrow = _spark_types(list(_judging.replies_schema()), large)

    def send(batches: Iterator[Any]) -> Iterator[Any]:
        for rows in _judging.judge_rows(task, batches, cache, offline):
            yield _cast(rows, replies_arrow)

    return _judging.split_replies([_to_arrow(by_key.mapInArrow(send, replies_spark))])


def _parallelism(df: "DataFrame") -> int:
    """How many tasks the cluster runs at once."""
    try:
        return max(1, int(df.sparkSession.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect has no SparkContext
        return max(1, int(df.sparkSession.conf.get("spark.sql.shuffle.partitions", "200")))


def score(
    df: "DataFrame",
    task: "Task",
    keep: Optional[Sequence[str]] = None,
    output_column: Optional[str] = None,
    max_row_errors: int = 0,
    *,
    cache: Any = None,
    offline: bool = False,
) -> Tuple["DataFrame", "Result"]:
    """Scores every row of `df`: (a DataFrame of the scores, the merged metrics).

    `keep` is the CLI's `--keep` (default: `id` when `df` has it). The task is bound to the
    DataFrame's schema on the driver first, so task errors are raised before any job runs.
    `max_row_errors` applies per batch of each partition. `cache` and `offline` are those
    of `Task.score`, on every executor; the judge pass counts its cost in `Result.judge`.
    """
    import pyarrow as pa
    from pyspark.sql import functions as F

    spark = df.sparkSession
    large = (
        str(spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")).lower()
        == "true"
    )
    # Only the columns the task reads cross to the Python workers: a prompt column the task
    # never reads would otherwise be serialized to Arrow and back for nothing.
    needed = task._input_columns(_arrow_schema(df.schema, large), keep, output_column, cache, offline)
    if len(needed) < len(df.columns):
        df = df.select(*[F.col(f"`{c}`") for c in needed])
    scores_schema = task._output_schema(_arrow_schema(df.schema, large), keep, output_column, cache, offline)
    fields = [f.with_nullable(True) for f in scores_schema]
    fields.append(pa.field(STATES_COLUMN, pa.binary(), nullable=True))
    # What Spark expects back from the Python worker: its own Arrow types for this schema.
    spark_out, out_schema = _spark_types(fields, large)
    keep_list: Optional[List[str]] = None if keep is None else list(keep)
    replies, cost = None, None
    if task._lists_judge_requests:
        replies, cost = _judge_once(df, task, keep_list, output_column, cache, offline, large)
    token = uuid.uuid4().hex

    def partition(batches: Iterator[Any]) -> Iterator[Any]:
        given = _judging.held_replies(task, token, replies)
        states = []
        for batch in batches:
            scores, st = task._score_batch(
                batch, keep_list, output_column, max_row_errors, cache, offline, given
            )
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
    if cost is not None:
        result.judge = cost
    scores = mapped.where(F.col(STATES_COLUMN).isNull()).drop(STATES_COLUMN)
    return scores, result
