#!/usr/bin/env python3
"""The benchmark job read from a local S3 server against the same job from local disk, with
DuckDB's and Polars' times reading the same S3 object (see BENCHMARKS.md, "Object storage").

    python3 scripts/bench/storage_bench.py [--rows 1000000] [--runs 5] [--threads 2]
                                           [--duckdb-httpfs-python PATH]

1. Makes bench-data/syn_N.parquet as run_bench.py does, starts `moto` in server mode on
   127.0.0.1 (installed by scripts/setup/storage-servers.sh), creates a bucket and uploads
   the file. moto keeps objects in memory: its RSS is printed after the upload and at the end.
2. Runs, in alternation (round 1: every tool once, round 2: ...), each as a fresh process
   (wall time and peak RSS of the client process measured as in run_bench.py; moto's work is
   not in the RSS, but it shares the machine's cores, so it is in the wall time):
   - evalscore-local   the job from the local file
   - evalscore-s3      the job from s3://bench/syn.parquet (ranged GETs of the needed chunks)
   - polars-s3         polars_job.py on the S3 object (Polars' own object_store reader,
                       `storage_options`)
   - duckdb-s3fs       duckdb_job.py on the S3 object with the pinned DuckDB
                       (requirements.txt). DuckDB's own S3 reader, the `httpfs` extension,
                       is downloaded from DuckDB's extension site at run time, which this
                       machine cannot reach, so this DuckDB reads S3 through its fsspec hook
                       with `s3fs` (PyPI): Python-level I/O, a handicap DuckDB users avoid.
   - s3-fetch-floor    s3_fetch_floor.py: fetches from the server exactly the bytes the job
                       reads (footer, needed column chunks, 8 MiB parts, 8 in flight) and
                       does nothing with them: what the server and the loopback cost.
   - duckdb-httpfs-s3  with --duckdb-httpfs-python: duckdb_job.py run by that interpreter,
                       whose venv holds a DuckDB release and the `duckdb-ext-httpfs` PyPI
                       package of the same version (the newest published is 1.4.4: `pip
                       install duckdb==1.4.4 duckdb-ext-httpfs==1.4.4.20260205 pyarrow`).
                       DuckDB then reads S3 natively, through an S3 secret with the endpoint.
3. Checks after the first round that all tools (the floor aside) agree on every aggregate and per-row score.
4. Prints the date, the commit, the machine and its load average (before, after each round,
   and at the end), then a Markdown table: medians, min-max, peak RSS, ratios to evalscore-s3,
   and for each tool the median of its per-round ratios to evalscore-local (each ratio from
   two runs of the same round, so a load change between rounds cancels out).

The S3 server runs on the same 2 cores as the tools, so these figures measure the client's
work and its request pattern, not a network: a real S3 adds latency that favours fewer,
larger, concurrent requests.
"""
from __future__ import annotations

import argparse
import datetime
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_bench as rb  # noqa: E402

ENV = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench-secret",
    "AWS_REGION": "us-east-1",
    "AWS_ALLOW_HTTP": "true",
}


def start_moto() -> tuple[subprocess.Popen, int]:
    out = subprocess.run(["bash", str(rb.ROOT / "scripts/setup/storage-servers.sh")],
                         check=True, capture_output=True, text=True).stdout
    moto = next(l.split("=", 1)[1] for l in out.splitlines() if l.startswith("MOTO_SERVER="))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=tempfile.mkdtemp())
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return p, port
        except OSError:
            if p.poll() is not None:
                sys.exit(f"moto_server exited at start ({p.returncode})")
            time.sleep(0.1)
    sys.exit("moto_server did not listen within 60 s")


def put(port: int, path: str, data: bytes = b"") -> None:
    # http.client, not urllib: urllib labels a body form data, which moto's web framework
    # then tries to parse (a 250 MB upload never finished).
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("PUT", f"/{path}", body=data, headers={"Content-Length": str(len(data))})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    if r.status != 200:
        sys.exit(f"PUT /{path}: {r.status} {body[:300]!r}")


def rss_mib(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=rb.ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=rb.ROOT, capture_output=True, text=True).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def duckdb_version(python: str) -> str:
    return subprocess.run([python, "-c", "import duckdb; print(duckdb.__version__)"],
                          capture_output=True, text=True, check=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duckdb-httpfs-python", default="",
                    help="a Python whose venv has duckdb and duckdb-ext-httpfs of one version")
    a = ap.parse_args()
    rb.ensure_binaries()
    src = rb.ensure_file(a.rows)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{started}, commit {commit()}, load average {load()}", flush=True)
    server, port = start_moto()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        os.environ.update(ENV)
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        put(port, "bench")
        # Open to unsigned reads, for s3-fetch-floor's plain GETs (moto refuses unsigned
        # reads of private objects; the tools sign theirs).
        put(port, "bench?policy", json.dumps({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": "*", "Action": "s3:*",
            "Resource": ["arn:aws:s3:::bench", "arn:aws:s3:::bench/*"]}]}).encode())
        t0 = time.perf_counter()
        put(port, "bench/syn.parquet", src.read_bytes())
        print(f"uploaded {src.name} ({src.stat().st_size / 2**20:.0f} MiB) in "
              f"{time.perf_counter() - t0:.1f} s; moto RSS {rss_mib(server.pid):.0f} MiB",
              flush=True)
        url = "s3://bench/syn.parquet"
        es = rb.evalscore_cmd("job.yaml")
        jobs = {
            "evalscore-local": lambda o: es(src, o, a.threads),
            "evalscore-s3": lambda o: es(url, o, a.threads),
            "polars-s3": lambda o: rb.py_cmd("polars_job.py")(url, o, a.threads),
            "duckdb-s3fs": lambda o: rb.py_cmd("duckdb_job.py")(url, o, a.threads),
        }
        jobs["s3-fetch-floor"] = lambda o: [
            sys.executable, str(HERE / "s3_fetch_floor.py"), url, str(src), str(o)]
        if a.duckdb_httpfs_python:
            jobs["duckdb-httpfs-s3"] = lambda o: [
                a.duckdb_httpfs_python, str(HERE / "duckdb_job.py"), url, str(o),
                "--threads", str(a.threads)]
        outs = {t: rb.DATA / "out-s3" / t for t in jobs}
        for o in outs.values():
            o.mkdir(parents=True, exist_ok=True)
        results: dict[str, list[tuple[float, float]]] = {t: [] for t in jobs}
        loads = [load()]
        for r in range(a.runs):
            for t, argv in jobs.items():
                wall, rss = rb.measure(argv(outs[t]), outs[t] / f"run{r}.log")
                results[t].append((wall, rss))
                print(f"  round {r + 1}/{a.runs}  {t:<17} {wall:7.2f} s  {rss:7.0f} MiB",
                      flush=True)
            loads.append(load())
            print(f"  load average after round {r + 1}: {loads[-1]}", flush=True)
            if r == 0:
                checked = [t for t in jobs if t != "s3-fetch-floor"]
                aggs = {t: (rb.evalscore_aggregates(outs[t]) if t.startswith("evalscore")
                            else rb.python_aggregates(outs[t])) for t in checked}
                # check_same compares everything to the entry named "evalscore".
                aggs["evalscore"] = aggs.pop("evalscore-s3")
                check_outs = {t: outs[t] for t in checked}
                check_outs["evalscore"] = check_outs.pop("evalscore-s3")
                rb.check_same(check_outs, aggs)
                print(f"  check passed: all {len(checked)} agree on aggregates and every "
                      "per-row score", flush=True)
        moto_rss = rss_mib(server.pid)
        ref = statistics.median(w for w, _ in results["evalscore-s3"])
        ref_rss = max(m for _, m in results["evalscore-s3"])
        local = [w for w, _ in results["evalscore-local"]]
        lines = ["| tool | wall median (s) | min-max (s) | rows/s | peak RSS (MiB) "
                 "| wall / evalscore-s3 | RSS / evalscore-s3 | per-round wall / evalscore-local |",
                 "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for t, runs in results.items():
            walls = [w for w, _ in runs]
            med = statistics.median(walls)
            rss = max(m for _, m in runs)
            paired = statistics.median(w / l for w, l in zip(walls, local))
            lines.append(f"| {t} | {med:.2f} | {min(walls):.2f}-{max(walls):.2f} "
                         f"| {rb.fmt_rate(a.rows / med)} | {rss:.0f} | {med / ref:.2f}x "
                         f"| {rss / ref_rss:.2f}x | {paired:.2f}x |")
        ver = rb.versions()
        ver["moto"] = Path(subprocess.run(
            ["bash", str(rb.ROOT / "scripts/setup/storage-servers.sh")], capture_output=True,
            text=True, check=True).stdout.split("MOTO_SERVER=")[1].split("/bin/")[0]).name
        if a.duckdb_httpfs_python:
            ver["duckdb (httpfs)"] = duckdb_version(a.duckdb_httpfs_python)
        print(f"\n{a.rows} rows, {src.stat().st_size / 2**20:.0f} MiB; measured {started}, "
              f"commit {commit()}; {rb.machine()}; threads={a.threads}, runs={a.runs}; "
              f"versions {ver}")
        print(f"load average (1, 5, 15 min) before and after each round: {' | '.join(loads)}; "
              f"moto RSS at the end {moto_rss:.0f} MiB\n")
        print("\n".join(lines))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
