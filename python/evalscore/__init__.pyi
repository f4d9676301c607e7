import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

import pyarrow as pa

from ._evalscore import DataError as DataError
from ._evalscore import EvalscoreError as EvalscoreError
from ._evalscore import InputError as InputError
from ._evalscore import OutputError as OutputError
from ._evalscore import TaskError as TaskError
from ._evalscore import __version__ as __version__

class Result:
    scores: Optional[pa.Table]
    metrics: pa.Table
    confusion: pa.Table
    def to_dict(self) -> Dict[str, Any]: ...

class Task:
    def __init__(
        self,
        text: str,
        sets: Optional[Mapping[str, Any]] = None,
        *,
        path: Optional[str] = None,
        base_dir: Optional[str] = None,
        functions: Optional[Mapping[str, Callable[..., Any]]] = None,
    ) -> None: ...
    @classmethod
    def from_yaml(
        cls,
        path: "os.PathLike[str] | str",
        sets: Optional[Mapping[str, Any]] = None,
        functions: Optional[Mapping[str, Callable[..., Any]]] = None,
    ) -> "Task": ...
    @classmethod
    def from_str(
        cls,
        text: str,
        sets: Optional[Mapping[str, Any]] = None,
        base_dir: Optional[str] = None,
        functions: Optional[Mapping[str, Callable[..., Any]]] = None,
    ) -> "Task": ...
    @property
    def text(self) -> str: ...
    @property
    def sets(self) -> Dict[str, Any]: ...
    @property
    def functions(self) -> Dict[str, Callable[..., Any]]: ...
    @property
    def scorer_keys(self) -> List[str]: ...
    @property
    def warnings(self) -> List[str]: ...
    def score(
        self,
        data: Any,
        keep: Optional[Sequence[str]] = None,
        output_column: Optional[str] = None,
        max_row_errors: int = 0,
        threads: int = 0,
    ) -> Result: ...
    def partial(
        self,
        data: Any,
        keep: Optional[Sequence[str]] = None,
        output_column: Optional[str] = None,
        max_row_errors: int = 0,
        threads: int = 0,
    ) -> bytes: ...
    def finish(self, states: Iterable[bytes], max_row_errors: int = 0) -> Result: ...
    def run(
        self,
        inputs: Sequence["os.PathLike[str] | str"],
        out: "os.PathLike[str] | str",
        keep: Optional[Sequence[str]] = None,
        output_column: Optional[str] = None,
        threads: int = 0,
        overwrite: bool = False,
        max_row_errors: "int | str" = 0,
    ) -> int: ...
