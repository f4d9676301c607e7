#!/usr/bin/env python3
"""Write the Parquet files the reader's decompression of small units is tested on, as
another writer than parquet-rs makes them: pyarrow (Arrow C++), zstd, with page checksums.

Writes data/golden/zstd_pages/:
    v1_crc.parquet   data pages v1, a CRC-32 in every page header, dictionary pages
    v2_crc.parquet   data pages v2 (levels outside the compressed bytes), CRCs, dictionaries
    v2_plain.parquet data pages v2, no dictionary, no CRC

Each holds 3,000 rows in one row group, pages of at most 500 rows: `id` (int64), `text` (strings, every 7th null, 41
distinct values), `choices` (lists of 0-3 short strings, every 11th null). The Rust test
(`crates/parquet/src/decompressed.rs`, `pyarrow_pages_decompressed_decode_as_they_were`)
rewrites each file's chunks uncompressed and checks that parquet-rs decodes the same values
from them as from the file, and that the CRC fields were there to be dropped.

Usage (from the repository root): python3 scripts/golden/zstd_pages.py
(pyarrow as pinned in scripts/golden/requirements.txt).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 3_000
OUT = Path(__file__).resolve().parents[2] / "data" / "golden" / "zstd_pages"


def table() -> pa.Table:
    ids = pa.array(range(ROWS), pa.int64())
    text = pa.array([None if i % 7 == 0 else f"answer {i % 41}" for i in range(ROWS)])
    choices = pa.array(
        [None if i % 11 == 0 else [str((i + j) % 5) for j in range(i % 4)] for i in range(ROWS)],
        pa.list_(pa.string()),
    )
    return pa.table({"id": ids, "text": text, "choices": choices})


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    t = table()
    # Small pages: a page ends once it holds 1 KiB after a batch of 500 rows.
    common = dict(compression="zstd", data_page_size=1 << 10, write_batch_size=500)
    for name, version, crc, dictionary in [
        ("v1_crc", "1.0", True, True),
        ("v2_crc", "2.0", True, True),
        ("v2_plain", "2.0", False, False),
    ]:
        pq.write_table(
            t,
            OUT / f"{name}.parquet",
            data_page_version=version,
            write_page_checksum=crc,
            use_dictionary=dictionary,
            row_group_size=ROWS,
            **common,
        )
    print(f"wrote {OUT} with pyarrow {pa.__version__}")


if __name__ == "__main__":
    main()
