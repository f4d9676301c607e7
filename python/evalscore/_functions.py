"""The glue between the engine and user functions (`Task(..., functions={...})`).

The extension calls these with pyarrow arrays and the user's callables; they call the user
function, read what it returned, and (for `python` metrics) pickle partial states, so that
states travel as bytes between Spark executors, Ray workers and the driver.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, List, Mapping, Optional, Tuple

import pyarrow as pa

_PROTOCOL = pickle.HIGHEST_PROTOCOL


def _describe(obj: Any) -> str:
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _as_array(out: Any) -> Any:
    """A scorer function's result as one Arrow array."""
    if isinstance(out, pa.ChunkedArray):
        return out.combine_chunks()
    if hasattr(out, "__arrow_c_array__"):
        return out
    if hasattr(out, "to_arrow"):  # a Polars Series
        return _as_array(out.to_arrow())
    if hasattr(out, "__arrow_c_stream__"):
        return pa.chunked_array(out).combine_chunks()
    if isinstance(out, (str, bytes, Mapping)) or not hasattr(out, "__len__"):
        raise TypeError(
            f"returned a {_describe(out)}; a scorer function returns an array with one boolean "
            "or number per row (a pyarrow array, a list, a NumPy array or a Series)"
        )
    return pa.array(out)


def score(fn: Callable[..., Any], values: Any, ground_truth: Optional[Any]) -> Any:
    """A `custom` scorer's function over one batch: a pyarrow array."""
    out = fn(values) if ground_truth is None else fn(values, ground_truth)
    return _as_array(out)


def metric_update(fn: Callable[[Any], Any], values: Any) -> bytes:
    """A `python` metric's function over one batch's field values: its pickled state."""
    return pickle.dumps(fn(values), protocol=_PROTOCOL)


def metric_merge(fn: Callable[[Any, Any], Any], parts: List[bytes]) -> bytes:
    """A `python` metric's `merge` folded over pickled states, in order."""
    state = pickle.loads(parts[0])
    for p in parts[1:]:
        state = fn(state, pickle.loads(p))
    return pickle.dumps(state, protocol=_PROTOCOL)


def _number(v: Any, where: str) -> Optional[float]:
    if v is None:
        return None
    if isinstance(v, bool) or not hasattr(v, "__float__"):
        raise TypeError(
            f"returned {where}a {_describe(v)}; a finish function returns a number, None, or a "
            "dict of label to number"
        )
    return float(v)


def metric_finish(fn: Callable[[Any], Any], state: bytes) -> List[Tuple[Optional[str], Optional[float]]]:
    """A `python` metric's `finish` of a merged state: (label, value) figures."""
    out = fn(pickle.loads(state))
    if isinstance(out, Mapping):
        return [(str(k), _number(v, f"for {k!r} ")) for k, v in out.items()]
    return [(None, _number(out, ""))]
