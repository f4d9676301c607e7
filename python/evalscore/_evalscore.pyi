from typing import Any, Callable, Dict, List, Optional, Tuple

__version__: str
_debug_build: bool

class EvalscoreError(Exception):
    message: str
    causes: List[str]
    hint: Optional[str]

class TaskError(EvalscoreError): ...
class InputError(EvalscoreError): ...
class DataError(EvalscoreError): ...
class OutputError(EvalscoreError): ...

def read_task(path: str) -> str: ...

class _JudgeReplies: ...

class _Task:
    def __init__(
        self,
        text: str,
        sets: List[Tuple[str, str]],
        path: Optional[str] = None,
        base_dir: Optional[str] = None,
        functions: Optional[Dict[str, Callable[..., Any]]] = None,
    ) -> None: ...
    @property
    def warnings(self) -> List[str]: ...
    @property
    def scorer_keys(self) -> List[str]: ...
    @property
    def lists_judge_requests(self) -> bool: ...
    def score(
        self,
        data: Any,
        keep: Optional[List[str]],
        output_column: Optional[str],
        max_row_errors: int,
        want_scores: bool,
        threads: int = 0,
        cache: Any = None,
        offline: bool = False,
    ) -> Tuple[Optional[Any], bytes, str]: ...
    def score_batch(
        self,
        batch: Any,
        keep: Optional[List[str]],
        output_column: Optional[str],
        max_row_errors: int,
        cache: Any = None,
        offline: bool = False,
        replies: Optional[_JudgeReplies] = None,
    ) -> Tuple[Any, bytes]: ...
    def output_schema(self, schema: Any, keep: Optional[List[str]], output_column: Optional[str], cache: Any = None, offline: bool = False) -> Any: ...
    def input_columns(self, schema: Any, keep: Optional[List[str]], output_column: Optional[str], cache: Any = None, offline: bool = False) -> List[str]: ...
    def judge_requests(self, batch: Any, keep: Optional[List[str]], output_column: Optional[str], cache: Any = None, offline: bool = False) -> Any: ...
    def send_judge_requests(self, batch: Any, cache: Any = None, offline: bool = False) -> Tuple[Any, str]: ...
    def judge_replies(self, data: Any) -> _JudgeReplies: ...
    def merge(self, states: List[bytes]) -> bytes: ...
    def finish(self, states: List[bytes], allow_row_errors: bool) -> Tuple[Any, Any, str]: ...
    def run(
        self,
        inputs: List[str],
        out: str,
        keep: Optional[List[str]],
        output_column: Optional[str],
        threads: int,
        overwrite: bool,
        max_row_errors: str,
        recursive: bool,
        hive_partitioning: Optional[bool],
        where_filter: Optional[str],
        union_by_name: bool = False,
        format: str = ...,
        run_id: Optional[str] = ...,
        labels: List[Tuple[str, str]] = ...,
        task_name: Optional[str] = ...,
        cache: Any = ...,
        offline: bool = ...,
    ) -> int: ...

def run_suite(
    path: str,
    out: str,
    inputs: List[str],
    labels: List[Tuple[str, str]],
    sets: List[Tuple[str, str]],
    keep: Optional[List[str]],
    output_column: Optional[str],
    threads: int,
    overwrite: bool,
    max_row_errors: str,
    keep_going: bool,
    run_id: Optional[str],
    recursive: bool = ...,
    hive_partitioning: Optional[bool] = ...,
    where_filter: Optional[str] = ...,
    union_by_name: bool = ...,
    format: str = ...,
    cache: Any = ...,
    offline: bool = ...,
) -> str: ...
