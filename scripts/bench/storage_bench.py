#!/usr/bin/env python3
"""The benchmark job read from a local S3 server against the same job from local disk, with
DuckDB's and Polars' times reading the same S3 object (see BENCHMARKS.md, "Object storage").

    python3 scripts/bench/storage_bench.py [--rows 1000000] [--runs 5] [--threads 2]

1. Makes bench-data/syn_N.parquet as run_bench.py does, starts `moto` in server mode on
   127.0.0.1 (installed by scripts/setup/storage-servers.sh), creates a bucket and uploads
   the file.
2. Runs, in alternation, each as a fresh process (wall time and peak RSS measured as in
   run_bench.py):
   - evalscore-local   the job from the local file
   - evalscore-s3      the job from s3://bench/syn.parquet (ranged GETs of the needed chunks)
   - duckdb-s3         duckdb_job.py on the S3 object. DuckDB's `httpfs` extension is
                       downloaded from extensions.duckdb.org, which this machine cannot reach,
                       so DuckDB reads S3 through its fsspec hook with `s3fs` (PyPI).
   - polars-s3         polars_job.py on the S3 object (Polars' own object_store reader,
                       `storage_options`).
3. Checks after the first round that all four agree on every aggregate and per-row score.
4. Prints a Markdown table; ratios are to evalscore-s3.

The S3 server runs on the same 2 cores as the tools, so these figures measure the client's
work and its request pattern, not a network: a real S3 adds latency that favours fewer,
larger, concurrent requests.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
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
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=tempfile.mkdtemp())
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            break
        except Exception:
            time.sleep(0.1)
    return p, port


def put(port: int, path: str, data: bytes | None = None) -> None:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/{path}", data=data or b"",
                                 method="PUT")
    urllib.request.urlopen(req).read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    rb.ensure_binaries()
    src = rb.ensure_file(a.rows)
    server, port = start_moto()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        os.environ.update(ENV)
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        put(port, "bench")
        t0 = time.perf_counter()
        put(port, "bench/syn.parquet", src.read_bytes())
        print(f"uploaded {src.name} ({src.stat().st_size / 2**20:.0f} MiB) in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        url = "s3://bench/syn.parquet"
        outs = {t: rb.DATA / "out-s3" / t for t in
                ["evalscore-local", "evalscore-s3", "duckdb-s3", "polars-s3"]}
        for o in outs.values():
            o.mkdir(parents=True, exist_ok=True)
        es = rb.evalscore_cmd("job.yaml")
        py = rb.py_cmd
        jobs = {
            "evalscore-local": es(src, outs["evalscore-local"], a.threads),
            "evalscore-s3": es(url, outs["evalscore-s3"], a.threads),
            "duckdb-s3": py("duckdb_job.py")(url, outs["duckdb-s3"], a.threads),
            "polars-s3": py("polars_job.py")(url, outs["polars-s3"], a.threads),
        }
        results: dict[str, list[tuple[float, float]]] = {t: [] for t in jobs}
        for r in range(a.runs):
            for t, argv in jobs.items():
                wall, rss = rb.measure(argv, outs[t] / f"run{r}.log")
                results[t].append((wall, rss))
                print(f"  round {r + 1}/{a.runs}  {t:<16} {wall:7.2f} s  {rss:7.0f} MiB",
                      flush=True)
            if r == 0:
                aggs = {t: (rb.evalscore_aggregates(outs[t]) if t.startswith("evalscore")
                            else rb.python_aggregates(outs[t])) for t in jobs}
                # check_same compares everything to the entry named "evalscore".
                aggs["evalscore"] = aggs.pop("evalscore-s3")
                check_outs = dict(outs)
                check_outs["evalscore"] = check_outs.pop("evalscore-s3")
                rb.check_same(check_outs, aggs)
                print("  check passed: all four agree on aggregates and every per-row score",
                      flush=True)
        ref = statistics.median(w for w, _ in results["evalscore-s3"])
        ref_rss = max(m for _, m in results["evalscore-s3"])
        lines = ["| tool | wall median (s) | min-max (s) | rows/s | peak RSS (MiB) "
                 "| wall / evalscore-s3 | RSS / evalscore-s3 |",
                 "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for t, runs in results.items():
            walls = [w for w, _ in runs]
            med = statistics.median(walls)
            rss = max(m for _, m in runs)
            lines.append(f"| {t} | {med:.2f} | {min(walls):.2f}-{max(walls):.2f} "
                         f"| {rb.fmt_rate(a.rows / med)} | {rss:.0f} | {med / ref:.2f}x "
                         f"| {rss / ref_rss:.2f}x |")
        print(f"\n{a.rows} rows, {src.stat().st_size / 2**20:.0f} MiB; {rb.machine()}; "
              f"versions {rb.versions()}\n")
        print("\n".join(lines))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
