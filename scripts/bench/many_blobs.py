#!/usr/bin/env python3
"""A prefix of many tiny blobs in Azure Blob storage (azurite): the benchmark job over it (see
BENCHMARKS.md, "Many files").

    python scripts/bench/many_blobs.py [--objects 100000] [--rows 10] [--runs 1]
        [--bin target/dist/evalscore]

moto, the S3 server of the tests, serves one request at a time (about 9 PUTs/s when filling
it), so 100,000 objects cannot be put there in a reasonable time; azurite, the Azure Blob
emulator of the tests, takes them far faster.

1. Starts azurite's Blob service (scripts/setup/azurite.sh installs it into
   ~/.cache/evalscore) with its data in a temporary folder, makes a container `lake` and puts
   `--objects` Parquet blobs of `--rows` rows each under `tiny/`, 64 PUTs at a time with the
   `azure-storage-blob` package: rows of `--source` (bench-data/syn_10000000.parquet, the
   benchmark job's columns; run_bench.py makes it), written by pyarrow with zstd.
2. Runs the job (scripts/bench/job.yaml) over `az://lake/tiny/`, `--runs` times, each a fresh
   process under /usr/bin/time, and prints wall time, peak RSS, and the rows scored.

Needs `pip install azure-storage-blob pyarrow`.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
AZURITE = Path.home() / ".cache/evalscore/azurite-3.37.0/node_modules/.bin/azurite-blob"
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"azurite did not listen on port {port}")


def tiny_parquet(source: Path, rows: int, count: int) -> list[bytes]:
    """`count` distinct Parquet files of `rows` rows each, from the start of `source`."""
    import pyarrow.parquet as pq

    table = pq.ParquetFile(source).read_row_group(0).slice(0, rows * min(count, 1000))
    out = []
    for i in range(min(count, 1000)):
        buf = io.BytesIO()
        pq.write_table(table.slice(i * rows, rows), buf, compression="zstd")
        out.append(buf.getvalue())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objects", type=int, default=100_000)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--source", type=Path, default=ROOT / "bench-data/syn_10000000.parquet")
    ap.add_argument("--bin", type=Path, default=ROOT / "target/dist/evalscore")
    a = ap.parse_args()

    from azure.storage.blob import BlobServiceClient

    port = free_port()
    endpoint = f"http://127.0.0.1:{port}/{ACCOUNT}"
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen(
            [str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", data,
             "--skipApiVersionCheck", "--silent"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(port)
            conn = f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};BlobEndpoint={endpoint};"
            service = BlobServiceClient.from_connection_string(conn)
            container = service.create_container("lake")
            bodies = tiny_parquet(a.source, a.rows, a.objects)
            started = time.monotonic()

            def put(i: int) -> None:
                container.upload_blob(f"tiny/part-{i:06d}.parquet", bodies[i % len(bodies)])

            with concurrent.futures.ThreadPoolExecutor(64) as pool:
                for n, _ in enumerate(pool.map(put, range(a.objects)), 1):
                    if n % 10_000 == 0:
                        print(f"  put {n} blobs ({time.monotonic() - started:.0f} s)", flush=True)
            print(f"put {a.objects} blobs of {a.rows} rows in {time.monotonic() - started:.1f} s")

            env = dict(os.environ, AZURE_STORAGE_USE_EMULATOR="true", AZURITE_BLOB_STORAGE_URL=f"http://127.0.0.1:{port}",
                       AZURE_STORAGE_ACCOUNT_NAME=ACCOUNT, AZURE_STORAGE_ACCOUNT_KEY=KEY)
            for r in range(a.runs):
                with tempfile.TemporaryDirectory() as out, tempfile.NamedTemporaryFile("r") as t:
                    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", t.name, str(a.bin), "run",
                           str(HERE / "job.yaml"), "--input", "az://lake/tiny/", "--out", out + "/o",
                           "--quiet", "--threads", "2", "--keep", "id"]
                    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
                    if p.returncode != 0:
                        sys.exit(p.stderr)
                    wall, kib = t.read().split()[-2:]
                    rows = json.loads((Path(out) / "o/run.json").read_text())["rows_scored"]
                    print(f"run {r + 1}: {float(wall):.1f} s, peak RSS {int(kib) / 1024:.0f} MiB, "
                          f"{rows} rows from {a.objects} blobs")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
