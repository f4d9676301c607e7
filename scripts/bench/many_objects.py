#!/usr/bin/env python3
"""A prefix of many tiny objects in S3 (moto): the benchmark job over it (see BENCHMARKS.md).

    python scripts/bench/many_objects.py [--objects 20000] [--rows 10] [--runs 2]
        [--bin new=target/dist/evalscore --bin old=/path/to/older/evalscore]
        [--keep-server] [--s3s-fs PATH] [--hive] [--polars PYTHON]

1. Starts moto's S3 server (scripts/setup/moto.sh installs it into ~/.cache/evalscore), makes
   a bucket `lake` and puts `--objects` Parquet objects of `--rows` rows each under
   `tiny/`, 32 PUTs at a time: rows of `--source` (bench-data/syn_10000000.parquet, the
   benchmark job's columns; run_bench.py makes it), written by pyarrow with zstd.
   With `--s3s-fs PATH` (the `s3s-fs` binary: `cargo install s3s-fs --features binary`),
   serves the objects from s3s-fs instead, an S3 server in Rust that answers requests
   concurrently (moto's one Python process serializes them); its bucket is a folder, so the
   objects are written there directly instead of PUT.
2. Runs the job (scripts/bench/job.yaml) of every binary over `s3://lake/tiny/`, `--runs`
   rounds in alternation, each a fresh process under /usr/bin/time, and prints wall time and
   peak RSS per binary. A binary that takes longer than `--timeout` seconds is stopped and
   reported as such.
   With `--hive` (moto only), the objects are `s3://many/exports/date=2026-01-DD/part-N.parquet`
   (25 folders) and the input is the glob `s3://many/exports/**/*.parquet`; with `--polars
   PYTHON` (an interpreter with polars), Polars' `scan_parquet` of the same input computes the
   job's per-row scores (`sink_parquet`, as scripts/bench/polars_job.py's first step) in each
   round too. Under moto, the GETs of each run are counted from moto's request log: objects'
   GETs and listings' apart, and HEADs.
3. With --keep-server, leaves the server running and prints its endpoint, for the reader's
   ignored test `many::opening_figures` (memory and time of opening alone).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import io
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_bench  # noqa: E402

MOTO = Path.home() / ".cache/evalscore/moto-5.2.5/bin/moto_server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port: int, method: str, path: str, body: bytes = b"") -> None:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body=body)
    r = c.getresponse()
    data = r.read()
    c.close()
    if r.status != 200:
        sys.exit(f"{method} {path}: {r.status} {data[:200]!r}")


def listening(p: subprocess.Popen, port: int, name: str) -> tuple[subprocess.Popen, int]:
    """The server `p` once it accepts connections on `port` (a busy machine starts it slowly)."""
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return p, port
        except OSError:
            time.sleep(0.1)
    p.terminate()
    sys.exit(f"{name} did not start")


MOTO_LOG = Path("/tmp/evalscore-many-objects-moto.log")


def start_moto() -> tuple[subprocess.Popen, int]:
    port = free_port()
    # Its request log (werkzeug's, one line per request) is how the GETs are counted.
    p = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(port)],
                         stdout=subprocess.DEVNULL, stderr=MOTO_LOG.open("w"))
    return listening(p, port, "moto")


def requests_since(offset: int) -> tuple[int, dict[str, int]]:
    """The log's end, and the requests logged since `offset`: object GETs, listing GETs,
    HEADs."""
    time.sleep(0.5)  # the last lines reach the log
    with MOTO_LOG.open("rb") as f:
        f.seek(offset)
        text = f.read().decode(errors="replace")
        end = f.tell()
    counts = {"GET": 0, "LIST": 0, "HEAD": 0}
    for line in text.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line)  # a partial reply's line is coloured
        if '"GET ' in line:
            counts["LIST" if "list-type" in line or "?" in line.split('"GET ')[1].split()[0]
                   else "GET"] += 1
        elif '"HEAD ' in line:
            counts["HEAD"] += 1
    return end, counts


POLARS_SCORES = """
import os, sys
os.environ["POLARS_MAX_THREADS"] = sys.argv[3]
import polars as pl
src, out = sys.argv[1:3]
opts = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
        "aws_region": "us-east-1", "aws_endpoint_url": os.environ["AWS_ENDPOINT"],
        "aws_allow_http": "true"}
output, answer = pl.col("output"), pl.col("answer")
first = output.str.slice(0, 1)
valid = ((output != "") & pl.col("choices").list.contains(first)).fill_null(False)
(pl.scan_parquet(src, storage_options=opts)
 .select("id",
         (output == answer).fill_null(False).cast(pl.Float64).alias("string_equals__is_correct"),
         (valid & (first == answer)).fill_null(False).cast(pl.Float64)
         .alias("string_equals_mcqa__is_correct"))
 .sink_parquet(out, compression="zstd"))
"""


def start_s3s_fs(binary: str, root: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    p = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--access-key",
                          "testing", "--secret-key", "testing", str(root)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return listening(p, port, "s3s-fs")


def fill_folder(folder: Path, objects: int, rows: int, source: Path) -> None:
    """The objects written straight into s3s-fs's folder of bucket `lake`."""
    import pyarrow.parquet as pq

    table = pq.ParquetFile(source).read_row_group(0)
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for i in range(objects):
        at = (i * rows) % (table.num_rows - rows)
        pq.write_table(table.slice(at, rows), folder / f"part-{i:06d}.parquet",
                       compression="zstd")
    print(f"wrote {objects} objects of {rows} rows in {time.perf_counter() - t0:.1f} s",
          flush=True)


def key(i: int, hive: bool) -> str:
    """Object `i`'s bucket and key."""
    if hive:
        return f"many/exports/date=2026-01-{1 + i % 25:02d}/part-{i:06d}.parquet"
    return f"lake/tiny/part-{i:06d}.parquet"


def fill(port: int, objects: int, rows: int, source: Path, hive: bool = False) -> None:
    import pyarrow.parquet as pq

    table = pq.ParquetFile(source).read_row_group(0)
    bucket = "many" if hive else "lake"
    policy = ('{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*",'
              f'"Action":"s3:*","Resource":["arn:aws:s3:::{bucket}","arn:aws:s3:::{bucket}/*"]}}]}}')
    request(port, "PUT", f"/{bucket}")
    request(port, "PUT", f"/{bucket}?policy", policy.encode())

    def put(i: int) -> None:
        buf = io.BytesIO()
        at = (i * rows) % (table.num_rows - rows)
        pq.write_table(table.slice(at, rows), buf, compression="zstd")
        request(port, "PUT", "/" + key(i, hive), buf.getvalue())

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(32) as ex:
        for n, _ in enumerate(ex.map(put, range(objects)), 1):
            if n % 10000 == 0:
                print(f"  {n} objects put", flush=True)
    print(f"put {objects} objects of {rows} rows in {time.perf_counter() - t0:.1f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--source", type=Path, default=run_bench.DATA / "syn_10000000.parquet",
                    help="the benchmark file whose first rows the objects hold (run_bench.py "
                         "makes it)")
    ap.add_argument("--objects", type=int, default=20000)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--bin", action="append", default=[])
    ap.add_argument("--keep-server", action="store_true")
    ap.add_argument("--s3s-fs", default=None, help="serve the objects from this s3s-fs binary")
    ap.add_argument("--hive", action="store_true",
                    help="objects in Hive folders, read through a glob (moto only)")
    ap.add_argument("--polars", default=None,
                    help="also run Polars' scan_parquet of the input with this python")
    a = ap.parse_args()
    if a.hive and a.s3s_fs:
        sys.exit("--hive is for moto only")
    source = "s3://many/exports/**/*.parquet" if a.hive else "s3://lake/tiny/"
    if a.s3s_fs:
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="evalscore-s3s-"))
        fill_folder(root / "lake" / "tiny", a.objects, a.rows, a.source)
        server, port = start_s3s_fs(a.s3s_fs, root)
    else:
        server, port = start_moto()
    try:
        if not a.s3s_fs:
            fill(port, a.objects, a.rows, a.source, a.hive)
        endpoint = f"http://127.0.0.1:{port}"
        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   AWS_REGION="us-east-1", AWS_ENDPOINT=endpoint, AWS_ALLOW_HTTP="true")
        bins = dict(b.split("=", 1) for b in a.bin)
        if a.polars:
            bins["polars"] = a.polars
        log_at = 0 if a.s3s_fs else requests_since(0)[0]
        out = Path("/tmp/evalscore-many-objects")
        res: dict[str, list[tuple[float, float]]] = {b: [] for b in bins}
        for r in range(a.runs):
            for b, path in bins.items():
                argv = ["/usr/bin/time", "-f", "%M", "-o", str(out) + ".rss", path, "run",
                        str(HERE / "job.yaml"), "--input", source, "--out",
                        str(out / b), "--overwrite", "--quiet", "--threads", str(a.threads),
                        "--keep", "id"]
                if b == "polars":
                    argv[6:] = ["-c", POLARS_SCORES, source, str(out / "polars.parquet"),
                                str(a.threads)]
                out.mkdir(parents=True, exist_ok=True)
                t0 = time.perf_counter()
                try:
                    p = subprocess.run(argv, env=env, capture_output=True, text=True,
                                       timeout=a.timeout)
                except subprocess.TimeoutExpired:
                    print(f"  round {r + 1} {b}: stopped after {a.timeout:.0f} s", flush=True)
                    res[b].append((float("inf"), float("nan")))
                    continue
                wall = time.perf_counter() - t0
                if p.returncode != 0:
                    sys.exit(f"{b} failed: {p.stderr}")
                rss = int(Path(str(out) + ".rss").read_text().split()[-1]) / 1024
                res[b].append((wall, rss))
                counted = ""
                if not a.s3s_fs:
                    log_at, n = requests_since(log_at)
                    counted = f", {n['GET']} object GETs, {n['LIST']} listing GETs, {n['HEAD']} HEADs"
                print(f"  round {r + 1} {b}: {wall:.2f} s {rss:.0f} MiB{counted}", flush=True)
        print("\n| binary | objects | rows each | wall median (s) | min-max (s) | peak RSS (MiB) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for b, r in res.items():
            walls = [w for w, _ in r]
            print(f"| {b} | {a.objects} | {a.rows} | {statistics.median(walls):.2f} "
                  f"| {min(walls):.2f}-{max(walls):.2f} | {max(m for _, m in r):.0f} |")
        if a.keep_server:
            print(f"\nmoto left running at {endpoint} (pid {server.pid}); "
                  f"EVALSCORE_MANY_INPUT=s3://lake/tiny/ "
                  f"EVALSCORE_MANY_OPTIONS=aws_endpoint={endpoint},aws_allow_http=true,"
                  f"aws_access_key_id=testing,aws_secret_access_key=testing,aws_region=us-east-1")
            server = None
    finally:
        if server is not None:
            server.terminate()


if __name__ == "__main__":
    main()
