"""Model-graded scorers in Spark (local[2]) and Ray (local): each distinct judge request is
sent once per job however the rows are spread, and the scores are those of one process
scoring the whole table. Also the judge cache a Task is bound with (`cache=`, `offline=`).
The judge is a counting OpenAI-compatible server on 127.0.0.1 with deterministic replies."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalscore
from conftest import dict_without_run, without_run

# 400 rows over 20 (question, answer) pairs; the last pair has no answer (a missing row, which
# asks nothing). Two judge scorers ask one request each per answered row.
ROWS = 400
PAIRS = 20
ANSWERED = ROWS - ROWS // PAIRS
DISTINCT = 2 * (PAIRS - 1)


class JudgeServer:
    """Chat completions on 127.0.0.1: a classifier's prompt (its instruction asks for
    `"prediction"`) gets yes or no, any other a score from 0 to 10, both from a hash of the
    user message, and a user message holding `[fail]` a 500; counts every request and each
    distinct body."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies: Counter = Counter()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (the http.server name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.bodies[json.dumps(body, sort_keys=True)] += 1
                failing = "[fail]" in body["messages"][-1]["content"]
                out = json.dumps(
                    {
                        "choices": [{"message": {"role": "assistant", "content": reply(body)}}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
                    }
                ).encode()
                self.send_response(500 if failing else 200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def sent(self) -> int:
        with self.lock:
            return sum(self.bodies.values())

    def reset(self) -> None:
        with self.lock:
            self.bodies.clear()


def reply(body: dict) -> str:
    messages = body["messages"]
    h = int(hashlib.sha256(messages[-1]["content"].encode()).hexdigest(), 16)
    if any('"prediction"' in m["content"] for m in messages if m["role"] == "system"):
        return json.dumps({"prediction": "yes" if h % 3 else "no", "reasoning": "r", "confidence": 0.5})
    return json.dumps({"score": h % 11, "reasoning": "r"})


@pytest.fixture(scope="module")
def judge_server():
    s = JudgeServer()
    yield s
    s.httpd.shutdown()


def judged_task(url: str) -> evalscore.Task:
    return evalscore.Task.from_str(
        f"""models:
  judge: {{base_url: "{url}", model: test-judge, concurrency: 4, max_retries: 0}}
definition:
  output_column: answer
  scorers:
    - type: model_as_a_judge_scorer
      key: grade
      model_key: judge
      user_prompt: "Question: {{{{ sample.question }}}}\\nAnswer: {{{{ solver_output.output }}}}"
      metrics:
        - {{type: mean, field: score, group_by: [subject]}}
    - type: model_as_a_judge_classifier
      key: cls
      model_key: judge
      system_prompt: "Is the answer right?"
      user_prompt: "Question: {{{{ sample.question }}}}\\nAnswer: {{{{ solver_output.output }}}}"
      correct_labels: ["yes"]
      incorrect_labels: ["no"]
      metrics:
        - {{type: mean, field: is_correct}}
"""
    )


@pytest.fixture(scope="module")
def judged_rows() -> pa.Table:
    pair = [i % PAIRS for i in range(ROWS)]
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "question": [f"Question {p}?" for p in pair],
            "answer": [None if p == PAIRS - 1 else f"answer {p * 7 % 5}" for p in pair],
            "subject": ["math" if p % 2 else "law" for p in pair],
        }
    )


@pytest.fixture(scope="module")
def judged_file(judged_rows, tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("judged") / "rows.parquet"
    pq.write_table(judged_rows, p, row_group_size=100)
    return p


def assert_same_scores(got: pa.Table, want: evalscore.Result, res: evalscore.Result) -> None:
    got = got.sort_by("id")
    assert got.column_names == want.scores.column_names
    for name in want.scores.column_names:
        assert got.column(name).to_pylist() == want.scores.column(name).to_pylist(), name
    assert without_run(res.metrics).to_pylist() == without_run(want.metrics).to_pylist()


def assert_sent_once(server: JudgeServer, res: evalscore.Result) -> None:
    assert server.sent == DISTINCT
    assert set(server.bodies.values()) == {1}
    cost = res.judge["judge"]
    assert (cost["model"], cost["requests_sent"], cost["cache_hits"]) == ("test-judge", DISTINCT, 0)
    assert (cost["failures"], cost["retries"]) == (0, 0)
    assert cost["deduplicated"] == 2 * ANSWERED - DISTINCT
    assert (cost["prompt_tokens"], cost["completion_tokens"]) == (10 * DISTINCT, 2 * DISTINCT)


def test_spark_sends_each_distinct_request_once(spark, judge_server, judged_rows, judged_file, tmp_path):
    from pyspark.sql import functions as F

    task = judged_task(judge_server.url)
    df = spark.read.parquet(str(judged_file)).repartition(4)
    # Every request is asked from every partition.
    parts = df.select("question", F.spark_partition_id().alias("p")).distinct().toPandas()
    assert parts.groupby("question")["p"].nunique().min() == 4
    judge_server.reset()
    scores_df, res = evalscore.spark.score(df, task, keep=["id"], cache=str(tmp_path / "spark.sqlite"))
    assert_sent_once(judge_server, res)

    judge_server.reset()
    want = task.score(judged_rows, keep=["id"], cache=False)
    assert judge_server.sent == DISTINCT
    assert_same_scores(scores_df.toArrow(), want, res)
    assert dict_without_run(res.to_dict()) == dict_without_run(want.to_dict())

    # Again over the cache the executors filled: nothing is sent.
    judge_server.reset()
    again_df, again = evalscore.spark.score(
        df, task, keep=["id"], cache=tmp_path / "spark.sqlite", offline=True
    )
    assert judge_server.sent == 0
    assert (again.judge["judge"]["requests_sent"], again.judge["judge"]["cache_hits"]) == (0, DISTINCT)
    assert_same_scores(again_df.toArrow(), want, again)


def test_ray_sends_each_distinct_request_once(ray_local, judge_server, judged_rows, tmp_path):
    task = judged_task(judge_server.url)
    ds = ray_local.data.from_arrow(judged_rows).repartition(4)
    judge_server.reset()
    scores_ds, res = evalscore.ray.score(ds, task, keep=["id"], cache=str(tmp_path / "ray.sqlite"))
    assert_sent_once(judge_server, res)
    got = pa.concat_tables(
        [pa.table(b) for b in scores_ds.iter_batches(batch_format="pyarrow", batch_size=None)]
    )
    want = task.score(judged_rows, keep=["id"], cache=False)
    assert_same_scores(got, want, res)


def test_a_task_without_judges_keeps_one_pass(spark, judged_file):
    """No judge request to list: the single pass, and no judge cost."""
    task = evalscore.Task.from_str(
        'definition:\n  output_column: answer\n  scorers:\n    - type: string_equals\n      ground_truth: "{{ sample.question }}"\n'
    )
    assert not task._lists_judge_requests
    df = spark.read.parquet(str(judged_file)).repartition(3)
    scores_df, res = evalscore.spark.score(df, task)
    assert res.judge == {}
    assert scores_df.count() == ROWS


def test_cache_and_offline_choose_the_judge_cache(judge_server, judged_rows, tmp_path):
    task = judged_task(judge_server.url)
    cache = tmp_path / "deep" / "judge.sqlite"
    judge_server.reset()
    first = task.score(judged_rows, keep=["id"], cache=cache)
    assert cache.exists()
    assert first.judge["judge"]["requests_sent"] == DISTINCT
    again = task.score(judged_rows, keep=["id"], cache=str(cache), offline=True)
    assert judge_server.sent == DISTINCT
    assert (again.judge["judge"]["requests_sent"], again.judge["judge"]["cache_hits"]) == (0, DISTINCT)
    assert again.scores.equals(first.scores)

    with pytest.raises(evalscore.EvalscoreError) as e:
        task.score(judged_rows, cache=tmp_path / "empty.sqlite", offline=True)
    assert e.value.message == (
        f"row 1: scorer `grade`: judge model `judge` ({judge_server.url}): the reply is not in "
        "the judge cache, and --offline forbids sending the request"
    )
    with pytest.raises(evalscore.EvalscoreError) as e:
        task.score(judged_rows, cache=False, offline=True)
    assert e.value.message == "--offline needs the judge cache, and --no-cache turns it off"
    with pytest.raises(evalscore.EvalscoreError) as e:
        task.score(judged_rows, cache=True)
    assert e.value.message == (
        "cache: `True` names no cache; give a path, None (the default cache) or False (no cache)"
    )

    out = tmp_path / "out"
    pq.write_table(judged_rows, tmp_path / "rows.parquet")
    task.run([tmp_path / "rows.parquet"], out, cache=cache, offline=True)
    judge = json.loads((out / "run.json").read_text())["judge"]
    assert (judge["cache"], judge["offline"]) == (str(cache), True)
    assert judge["models"]["judge"]["cache_hits"] == DISTINCT


def test_a_request_that_fails_fails_its_rows_as_in_one_process(spark, judge_server, judged_rows, tmp_path):
    """A request that fails when it is sent fails the rows asking it, in every partition, with
    its error: allowed as row errors, the scores and metrics are those of one process."""
    questions = [q.replace("Question 3?", "Question 3? [fail]") for q in judged_rows.column("question").to_pylist()]
    rows = judged_rows.set_column(1, "question", pa.array(questions))
    pq.write_table(rows, tmp_path / "rows.parquet", row_group_size=100)
    task = judged_task(judge_server.url)
    df = spark.read.parquet(str(tmp_path / "rows.parquet")).repartition(4)
    judge_server.reset()
    scores_df, res = evalscore.spark.score(df, task, keep=["id"], max_row_errors=ROWS, cache=False)
    assert judge_server.sent == DISTINCT
    assert (res.judge["judge"]["failures"], res.judge["judge"]["requests_sent"]) == (2, DISTINCT)
    want = task.score(rows, keep=["id"], max_row_errors=ROWS, cache=False)
    got = scores_df.toArrow().sort_by("id")
    assert got.column("cls__judge_status").to_pylist().count("error") == ROWS // PAIRS
    assert_same_scores(got, want, res)

    with pytest.raises(Exception) as e:
        evalscore.spark.score(df, task, keep=["id"], cache=False)
    assert f"scorer `grade`: judge model `judge` ({judge_server.url}): {judge_server.url}/chat/completions answered HTTP 500 (after 1 attempts)" in str(e.value)


def test_a_shared_cache_folder_serves_a_machine_with_an_empty_home(judge_server, judged_rows, tmp_path, monkeypatch):
    """`cache="FOLDER/"` is the shared cache: what one machine bought, another (its own,
    empty cache folder) reads, sending nothing."""
    task = judged_task(judge_server.url)
    shared = f"{tmp_path / 'shared'}/"
    judge_server.reset()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "machine-a"))
    first = task.score(judged_rows, keep=["id"], cache=shared)
    assert judge_server.sent == DISTINCT
    segments = sorted(p.name for p in (tmp_path / "shared").iterdir())
    assert len(segments) == 1 and segments[0].startswith("seg-") and segments[0].endswith(".parquet")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "machine-b"))
    again = task.score(judged_rows, keep=["id"], cache=shared, offline=True)
    assert judge_server.sent == DISTINCT
    assert (again.judge["judge"]["requests_sent"], again.judge["judge"]["cache_hits"]) == (0, DISTINCT)
    assert again.scores.equals(first.scores)
    assert (tmp_path / "machine-b" / "evalscore" / "judge.sqlite").exists()
