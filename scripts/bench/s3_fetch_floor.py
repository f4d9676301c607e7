#!/usr/bin/env python3
"""A floor for storage_bench.py: fetch from S3 exactly the bytes the benchmark job reads (the
last 8 KiB, then the column chunks of id, output, answer, choices, label_gt and label_pred in
every row group, one ranged GET per chunk in 8 MiB parts, 8 in flight), and do nothing with
them. Plain HTTP GETs without signing (storage_bench.py's moto accepts them), so what is timed
is the server sending the bytes and Python receiving them.

usage: s3_fetch_floor.py s3://BUCKET/KEY LOCAL_COPY.parquet OUT_DIR [--threads N]
       (the endpoint from AWS_ENDPOINT_URL; the chunk offsets from the local copy's footer)
"""
import http.client
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import pyarrow.parquet as pq

COLUMNS = {"id", "output", "answer", "choices", "label_gt", "label_pred"}
PART = 8 << 20


def main() -> None:
    args = [a for a in sys.argv[1:]]
    if "--threads" in args:
        i = args.index("--threads")
        del args[i : i + 2]
    url, local, _out = args
    bucket_key = url.removeprefix("s3://")
    endpoint = urlparse(os.environ["AWS_ENDPOINT_URL"])
    meta = pq.ParquetFile(local).metadata
    size = os.path.getsize(local)
    ranges = [(max(0, size - 8192), size)]
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            if col.path_in_schema.split(".")[0] not in COLUMNS:
                continue
            start = col.dictionary_page_offset or col.data_page_offset
            if col.dictionary_page_offset is not None:
                start = min(col.dictionary_page_offset, col.data_page_offset)
            end = start + col.total_compressed_size
            ranges += [(a, min(a + PART, end)) for a in range(start, end, PART)]

    def get(r: tuple[int, int]) -> int:
        conn = http.client.HTTPConnection(endpoint.hostname, endpoint.port, timeout=600)
        conn.request("GET", f"/{bucket_key}", headers={"Range": f"bytes={r[0]}-{r[1] - 1}"})
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        assert resp.status == 206 and len(body) == r[1] - r[0], (r, resp.status, body[:200])
        return len(body)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        n = sum(pool.map(get, ranges))
    print(f"{n} bytes in {len(ranges)} GETs, {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
