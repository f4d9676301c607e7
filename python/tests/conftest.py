"""Shared fixtures: a deterministic input (pyarrow), written as Parquet for the CLI, and the
CLI's own outputs on it."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalscore

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TASK = HERE / "task.yaml"
# 25,000 rows: more than two of Spark's 10,000-row Arrow batches, in at least 4 partitions.
ROWS = 25_000


def cli_binary() -> Path:
    """The CLI that scripts/test.sh built with the Rust tests (EVALSCORE_BIN overrides)."""
    p = Path(os.environ.get("EVALSCORE_BIN", ROOT / "target" / "debug" / "evalscore"))
    if not p.exists():
        raise RuntimeError(f"the evalscore CLI is not built at {p}: run `cargo build -p evalscore-cli`")
    return p


def make_table(rows: int = ROWS, seed: int = 7) -> pa.Table:
    rng = random.Random(seed)
    letters = "ABCD"
    subjects = ["math", "law", "art"]
    ids, outputs, answers, choices, subject, gt, pred = [], [], [], [], [], [], []
    for i in range(rows):
        a = rng.choice(letters)
        r = rng.random()
        if r < 0.05:
            out = None
        elif r < 0.45:
            out = a
        elif r < 0.55:
            out = f" {a.lower()} "
        elif r < 0.6:
            out = f"{a}) because"
        else:
            out = rng.choice(letters + "xyz") + rng.choice(["", ".", " is it"])
        ids.append(i)
        outputs.append(out)
        answers.append(a)
        choices.append(list(letters))
        subject.append(rng.choice(subjects))
        gt.append(rng.choice(["yes", "no"]))
        pred.append(rng.choice(["yes", "no", "yes", "maybe"]) if rng.random() > 0.02 else None)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "output": pa.array(outputs, pa.string()),
            "answer": pa.array(answers, pa.string()),
            "choices": pa.array(choices, pa.list_(pa.string())),
            "subject": pa.array(subject, pa.string()),
            "label_gt": pa.array(gt, pa.string()),
            "label_pred": pa.array(pred, pa.string()),
        }
    )


@pytest.fixture(scope="session")
def table() -> pa.Table:
    return make_table()


@pytest.fixture(scope="session")
def parquet_file(table: pa.Table, tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("data") / "input.parquet"
    pq.write_table(table, p, row_group_size=6_000)
    return p


@pytest.fixture(scope="session")
def cli_out(parquet_file: Path, tmp_path_factory) -> Path:
    """The CLI binary's five files for the task over the Parquet file."""
    out = tmp_path_factory.mktemp("cli") / "out"
    subprocess.run(
        [str(cli_binary()), "run", str(TASK), "--input", str(parquet_file), "--out", str(out), "--quiet"],
        check=True,
    )
    return out


@pytest.fixture(scope="session")
def task() -> evalscore.Task:
    return evalscore.Task.from_yaml(TASK)


def sorted_scores(t: pa.Table) -> pa.Table:
    return t.sort_by("id")


# Every run (and every merged report) has its own identity: the figures are compared without
# it, after checking that both sides carry it.
RUN_IDENTITY = ("run_id", "run_started_at", "labels")


def without_run(t: pa.Table) -> pa.Table:
    names = t.column_names
    assert [n for n in names if n in RUN_IDENTITY] == list(RUN_IDENTITY), names
    assert names[-3:] == list(RUN_IDENTITY), names
    return t.drop_columns(list(RUN_IDENTITY))


def dict_without_run(d: dict) -> dict:
    assert all(k in d for k in RUN_IDENTITY), list(d)
    return {k: v for k, v in d.items() if k not in RUN_IDENTITY}


# Spark (local[2]) and Ray (local), shared by the test modules that use them.
@pytest.fixture(scope="session")
def spark():
    pyspark = pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    # Spark's Python workers run this interpreter, which has evalscore installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (
        SparkSession.builder.master("local[2]")
        .appName("evalscore-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    assert pyspark.__version__
    yield s
    s.stop()


@pytest.fixture(scope="session")
def ray_local():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


class Moto:
    """A moto S3 server on 127.0.0.1: `env`, the variables that point evalscore at it (test
    credentials), and `fs`, pyarrow's filesystem over it, holding the bucket `lake`."""

    def __init__(self, port: int):
        from pyarrow import fs

        self.env = {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "AWS_ALLOW_HTTP": "true",
        }
        self.fs = fs.S3FileSystem(
            access_key="testing",
            secret_key="testing",
            region="us-east-1",
            endpoint_override=f"127.0.0.1:{port}",
            scheme="http",
            allow_bucket_creation=True,
        )
        self.fs.create_dir("lake")


@pytest.fixture
def moto(tmp_path):
    """A [`Moto`] started for the test (as scripts/setup/storage-servers.sh installs it; the
    test is skipped without it), stopped after it."""
    found = sorted((Path.home() / ".cache" / "evalscore").glob("moto-*/bin/moto_server"))
    if not found:
        pytest.skip("moto is not installed (scripts/setup/storage-servers.sh)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [str(found[-1]), "-H", "127.0.0.1", "-p", str(port)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "moto did not start"
                time.sleep(0.2)
        yield Moto(port)
    finally:
        proc.kill()
        proc.wait()
