"""What `evalscore.spark` and `evalscore.ray` share to send each distinct judge request once
per job: the judge pass's cost rows, and the replies held once per worker process.

A judged job first lists the rows' judge requests (`Task._judge_requests`, distinct within
each batch, with `n` the rows asking each), brings the rows of each cache key together (Spark's
or Ray's shuffle by key) and sends each key's request once (`Task._send_judge_requests`); the
replies then go back to every worker, which scores its rows with exactly them
(`Task._judge_replies`)."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Optional

# The column of the judge pass's output that carries a worker's cost (JSON); dropped from
# the replies.
COST_COLUMN = "__evalscore_judge_cost"

Cost = Dict[str, Dict[str, Any]]


def replies_schema() -> Any:
    """The judge pass's rows: `Task._send_judge_requests`'s replies, and the cost column
    (null on the replies, the worker's cost as JSON on its last row)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("key", pa.string()),
            ("content", pa.string()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("error", pa.string()),
            ("attempts", pa.int32()),
            (COST_COLUMN, pa.string()),
        ]
    )


def judge_rows(task: Any, batches: Iterable[Any], cache: Any, offline: bool) -> Iterator[Any]:
    """Sends each distinct request of `batches` (requests with `n`, the rows asking each; a
    key may come again, in the same batch or a later one) once: the replies of each batch,
    then a row with what they cost, in [`replies_schema`]."""
    import json

    import pyarrow as pa

    schema = replies_schema()
    seen: set = set()
    costs = []
    for batch in batches:
        first = []
        for key in batch.column("key").to_pylist():
            first.append(key not in seen)
            seen.add(key)
        fresh = batch.filter(pa.array(first, pa.bool_()))
        replies, cost = task._send_judge_requests(fresh, cache, offline)
        costs.append(add_repeats(cost, batch, fresh))
        columns = list(replies.columns) + [pa.nulls(replies.num_rows, pa.string())]
        yield pa.RecordBatch.from_arrays(columns, schema=schema)
    cost = json.dumps(merge_costs(costs))
    columns = [pa.nulls(1, f.type) for f in schema][:-1] + [pa.array([cost])]
    yield pa.RecordBatch.from_arrays(columns, schema=schema)


def add_repeats(cost: Cost, asked: Any, sent: Any) -> Cost:
    """`cost` with the rows behind `asked` (requests with `n`, the rows asking each) whose
    request was not one of `sent` (each sent for one row) counted as `deduplicated`."""
    import pyarrow.compute as pc

    def by_model(requests: Any, counts: Any) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for model, n in zip(requests.column("model_key").to_pylist(), counts):
            out[model] = out.get(model, 0) + n
        return out

    rows = by_model(asked, pc.cast(asked.column("n"), "int64").to_pylist())
    sent_rows = by_model(sent, [1] * sent.num_rows)
    for model, n in rows.items():
        entry = cost.setdefault(model, {})
        entry["deduplicated"] = entry.get("deduplicated", 0) + n - sent_rows.get(model, 0)
    return cost


def merge_costs(costs: Iterable[Cost]) -> Cost:
    """The costs of several workers, summed per model."""
    total: Cost = {}
    for cost in costs:
        for model, entry in cost.items():
            into = total.setdefault(model, {})
            for name, value in entry.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    into[name] = into.get(name, 0) + value
                else:
                    into.setdefault(name, value)
    return total


def split_replies(tables: List[Any]):
    """The judge pass's output tables: (the replies, the summed cost of every worker)."""
    import json

    import pyarrow as pa
    import pyarrow.compute as pc

    schema = replies_schema()
    table = pa.concat_tables([t.cast(schema) for t in tables]) if tables else schema.empty_table()
    costs = [json.loads(c) for c in table.column(COST_COLUMN).to_pylist() if c is not None]
    replies = table.filter(pc.is_null(table[COST_COLUMN])).drop_columns([COST_COLUMN])
    return replies, merge_costs(costs)


# The replies this worker process holds: one job's at a time, made once per process however
# many of its partitions or blocks it scores.
_HELD: Dict[str, Any] = {}


def held_replies(task: Any, token: str, replies: Optional[Any]) -> Optional[Any]:
    """The replies of job `token` (a pyarrow table) as the engine holds them for scoring."""
    if replies is None:
        return None
    got = _HELD.get(token)
    if got is None:
        _HELD.clear()
        got = _HELD[token] = task._judge_replies(replies)
    return got
