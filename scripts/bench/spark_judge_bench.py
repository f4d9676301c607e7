#!/usr/bin/env python3
"""Spark: each distinct judge request sent once per job (BENCHMARKS.md, "Python and Spark").

    python3 scripts/bench/spark_judge_bench.py [--rows 20000] [--distinct 2000] [--partitions 8]
        [--delay-ms 0] [--rounds 3]

Needs `evalscore` (`pip install ./python`) and pyspark in the running Python, and Java 17. On
`local[2]`, a task with one model-graded scorer scores --rows rows that ask --distinct
distinct requests, each repeated in every one of --partitions partitions, against a counting
OpenAI-compatible server on 127.0.0.1 that answers after --delay-ms:

- before: the single pass, each partition asking the model for its own rows (what
  `evalscore.spark.score` did for every task), once with no cache (`cache=False`) and once
  with one fresh cache file, which the two local workers share (a cluster's executors each
  have their own, so this is the fewest requests that pass can send);
- after: `evalscore.spark.score` as it is, its judge pass first (fresh cache).

Prints, per round, the requests the server received and the wall time of each, and checks
that the three give the same scores.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import evalscore
import evalscore.spark


class Server:
    """Chat completions answering every request with a grade after `delay` seconds; counts
    the requests."""

    def __init__(self, delay: float) -> None:
        self.count = 0
        lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                with lock:
                    server.count += 1
                time.sleep(delay)
                out = json.dumps(
                    {
                        "choices": [{"message": {"role": "assistant", "content": '{"score": 7, "reasoning": "fine"}'}}],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 12},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args) -> None:
                pass

        class Listener(ThreadingHTTPServer):
            # Both workers' connections at once (16 each) fit in the listen queue.
            request_queue_size = 256

        self.httpd = Listener(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


TASK = """models:
  judge: {{base_url: "{url}", model: bench-judge, concurrency: 16, max_retries: 0}}
definition:
  output_column: output
  scorers:
    - type: model_as_a_judge_scorer
      key: grade
      model_key: judge
      user_prompt: "Question: {{{{ sample.question }}}}\\nAnswer: {{{{ solver_output.output }}}}"
      metrics:
        - {{type: mean, field: score}}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--distinct", type=int, default=2_000)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if evalscore._evalscore._debug_build:
        sys.exit("spark_judge_bench.py: evalscore is a debug build; install a release wheel")

    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("evalscore-judge-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(args.partitions))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    server = Server(args.delay_ms / 1000)
    task = evalscore.Task.from_str(TASK.format(url=server.url))
    tmp = Path(tempfile.mkdtemp(prefix="spark-judge-bench-"))
    pair = [i % args.distinct for i in range(args.rows)]
    rows = pa.table(
        {
            "id": pa.array(range(args.rows), pa.int64()),
            "question": [f"Question {p}: what is {p} squared?" for p in pair],
            "output": [f"It is {p * p}." for p in pair],
        }
    )
    pq.write_table(rows, tmp / "rows.parquet")
    df = spark.read.parquet(str(tmp / "rows.parquet")).repartition(args.partitions).cache()
    df.count()

    listed = evalscore.Task._lists_judge_requests

    def run(name: str, round_: int, single_pass: bool, cache) -> list:
        # The single pass is what a task gets when its judge requests are not listed ahead.
        evalscore.Task._lists_judge_requests = property(lambda self: False) if single_pass else listed
        before = server.count
        started = time.perf_counter()
        scores_df, res = evalscore.spark.score(df, task, keep=["id"], cache=cache)
        scores = scores_df.toArrow().sort_by("id").column("grade__score").to_pylist()
        wall = time.perf_counter() - started
        evalscore.Task._lists_judge_requests = listed
        sent = server.count - before
        print(json.dumps({"round": round_, "run": name, "requests_sent": sent, "wall_s": round(wall, 2), "judge": res.judge.get("judge")}), flush=True)
        return scores

    for r in range(1, args.rounds + 1):
        a = run("before, no cache", r, True, False)
        b = run("before, one fresh cache", r, True, str(tmp / f"before-{r}.sqlite"))
        c = run("after, judge pass", r, False, str(tmp / f"after-{r}.sqlite"))
        assert a == b == c, "the three runs scored differently"
    spark.stop()


if __name__ == "__main__":
    main()
