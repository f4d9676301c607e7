#!/usr/bin/env python3
"""Read-only floor: pyarrow streaming read of just the columns the job needs, no work.

usage: pyarrow_floor.py INPUT.parquet|FOLDER [--threads 2]

A folder is read as one dataset of its Parquet files (pyarrow.dataset), in batches of up to
65,536 rows as the one file.
"""
import sys

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
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
    if Path(args[0]).is_dir():
        batches = ds.dataset(args[0], format="parquet").to_batches(
            columns=COLUMNS, batch_size=65536, use_threads=True
        )
    else:
        batches = pq.ParquetFile(args[0]).iter_batches(
            batch_size=65536, columns=COLUMNS, use_threads=True
        )
    for batch in batches:
        rows += batch.num_rows
    print(rows)


if __name__ == "__main__":
    main()
