#!/usr/bin/env python3
"""A shared judge cache on moto against the SQLite cache (see BENCHMARKS.md, "Judge cache").

    python scripts/bench/judge_cache_bench.py [--bin target/dist/evalscore] [--nights 100]
        [--replies 10000] [--need 37] [--runs 3]

1. Starts moto's S3 server (scripts/setup/moto.sh installs it into ~/.cache/evalscore) with a
   bucket `lake`, and builds a shared cache at s3://lake/judge-cache/ of `--nights` segments of
   `--replies` replies each (1,000,000 by default), one `evalscore judge import` per night, as
   nightly runs would have uploaded them. Night `--need` holds the replies of the task's
   requests (from `evalscore judge export` of the task over `--replies` rows); the other nights
   hold replies to other requests.
2. Scores the task over its rows `--offline`, `--runs` rounds in alternation, each a fresh
   process under /usr/bin/time, before and after `evalscore judge cache compact`:
   - `sqlite`: from a warm SQLite cache file holding the same replies (a machine that has them);
   - `shared`: from the shared cache on a machine with an empty cache folder (a fresh CI
     runner), so every reply comes from moto.
   Prints wall, rows/s, peak RSS, and for `shared` the requests and bytes it read (run.json's
   `judge.shared_cache`), per cached row. Every round's scores.parquet must equal the first's.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from many_objects import request, start_moto  # noqa: E402

TASK = """
models:
  judge:
    base_url: "http://127.0.0.1:9/v1"
    model: fake-judge
definition:
  scorers:
    - type: model_graded_security
      model_key: judge
"""


def line(key: str, content: str) -> str:
    body = {"choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 1}}
    return json.dumps({"id": "b", "custom_id": key, "error": None,
                       "response": {"status_code": 200, "body": body}}) + "\n"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of `cmd`."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return wall, int(p.stderr.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/dist/evalscore")
    ap.add_argument("--nights", type=int, default=100)
    ap.add_argument("--replies", type=int, default=10_000)
    ap.add_argument("--need", type=int, default=37)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    binary = str(Path(a.bin).resolve())
    work = Path(tempfile.mkdtemp(prefix="judge-cache-bench-"))
    moto, port = start_moto()
    try:
        request(port, "PUT", "/lake")
        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   AWS_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
                   AWS_ALLOW_HTTP="true", AWS_EC2_METADATA_DISABLED="true")
        (work / "task.yaml").write_text(TASK)
        with open(work / "rows.jsonl", "w") as f:
            for i in range(a.replies):
                f.write(json.dumps({"id": i, "output": f"row {i}: the answer is {i * 7919 % 10007}"}) + "\n")
        # The task's requests, as custom_ids.
        xdg_export = work / "xdg-export"
        subprocess.run([binary, "judge", "export", str(work / "task.yaml"), "--input", str(work / "rows.jsonl"),
                        "--out", str(work / "requests.jsonl")],
                       env=dict(env, XDG_CACHE_HOME=str(xdg_export)), check=True, capture_output=True)
        needed = [json.loads(l)["custom_id"] for l in open(work / "requests.jsonl")]
        assert len(needed) == a.replies, len(needed)
        cache = "s3://lake/judge-cache/"
        t = time.perf_counter()
        for night in range(a.nights):
            results = work / "results.jsonl"
            with open(results, "w") as f:
                if night == a.need:
                    for k in needed:
                        f.write(line(k, "No"))
                else:
                    for i in range(a.replies):
                        k = hashlib.sha256(f"night {night} request {i}".encode()).hexdigest()
                        f.write(line(k, "Yes" if i % 3 else "No"))
            subprocess.run([binary, "judge", "import", str(results), "--cache", cache],
                           env=dict(env, XDG_CACHE_HOME=str(work / f"xdg-night-{night}")),
                           check=True, capture_output=True)
            shutil.rmtree(work / f"xdg-night-{night}")
            # Segment names sort by the millisecond they were written in.
            time.sleep(0.002)
        print(f"built {a.nights} segments of {a.replies} replies in {time.perf_counter() - t:.0f} s", flush=True)
        stats = subprocess.run([binary, "judge", "cache", "stats", cache], env=env, check=True,
                               capture_output=True, text=True).stdout
        print(stats, end="")
        # The warm SQLite cache: the needed replies in a file.
        sqlite = work / "warm.sqlite"
        with open(work / "needed.jsonl", "w") as f:
            for k in needed:
                f.write(line(k, "No"))
        subprocess.run([binary, "judge", "import", str(work / "needed.jsonl"), "--cache", str(sqlite)],
                       env=env, check=True, capture_output=True)
        first: list[bytes] = []

        def measure(label: str) -> None:
            results: dict[str, list[tuple[float, int]]] = {"sqlite": [], "shared": []}
            traffic = []
            for r in range(a.runs):
                order = ["sqlite", "shared"] if r % 2 == 0 else ["shared", "sqlite"]
                for mode in order:
                    out = work / f"out-{label}-{mode}-{r}"
                    xdg = work / f"xdg-{label}-{mode}-{r}"
                    cmd = [binary, "run", str(work / "task.yaml"), "--input", str(work / "rows.jsonl"),
                           "--out", str(out), "--offline", "--quiet",
                           "--cache", str(sqlite) if mode == "sqlite" else cache]
                    results[mode].append(timed(cmd, dict(env, XDG_CACHE_HOME=str(xdg))))
                    scores = (out / "scores.parquet").read_bytes()
                    if not first:
                        first.append(scores)
                    if scores != first[0]:
                        sys.exit(f"{label} {mode} round {r}: scores.parquet differs")
                    if mode == "shared":
                        traffic.append(json.loads((out / "run.json").read_text())["judge"]["shared_cache"])
                    shutil.rmtree(xdg, ignore_errors=True)
                    shutil.rmtree(out, ignore_errors=True)
            print(f"{label}: {a.replies} rows, {a.runs} rounds, load {os.getloadavg()[0]:.2f}")
            walls = {}
            for mode, rs in results.items():
                wall = statistics.median(w for w, _ in rs)
                walls[mode] = wall
                rss = max(m for _, m in rs) / 1024
                print(f"  {mode:7s} wall median {wall:.3f} s ({min(w for w, _ in rs):.3f}-{max(w for w, _ in rs):.3f}), "
                      f"{a.replies / wall:,.0f} rows/s, peak RSS {rss:.0f} MiB")
            print(f"  shared / sqlite rows/s: {walls['sqlite'] / walls['shared']:.2f}")
            t0 = traffic[0]
            print("  shared cache traffic per run: " + json.dumps({k: v for k, v in t0.items() if k != "local"}))
            print(f"  bytes read per cached row: {t0['bytes_read'] / a.replies:.0f}", flush=True)

        measure(f"{a.nights} segments")
        out = subprocess.run([binary, "judge", "cache", "compact", cache], env=env, check=True,
                             capture_output=True, text=True).stdout
        print(out, end="")
        measure("compacted")
    finally:
        moto.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
