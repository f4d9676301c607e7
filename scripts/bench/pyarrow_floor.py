#!/usr/bin/env python3
"""Read-only floor: pyarrow streaming read of just the columns the job needs, no work.

usage: pyarrow_floor.py INPUT.parquet [--threads 2]
"""
import sys

import pyarrow as pa
import pyarrow.parquet as pq

COLUMNS = ["id", "output", "answer", "choices", "label_gt", "label_pred"]


def main() -> None:
    args = sys.argv[1:]
    threads = 2
    if "--threads" in args:
        i = args.index("--threads")
        threads = int(args[i + 1])
        del args[i : i + 2]
    pa.set_cpu_count(threads)
    pa.set_io_thread_count(threads)
    rows = 0
    for batch in pq.ParquetFile(args[0]).iter_batches(
        batch_size=65536, columns=COLUMNS, use_threads=True
    ):
        rows += batch.num_rows
    print(rows)


if __name__ == "__main__":
    main()
