"""Kept Int64 ids that evalscore encodes itself (not copied as stored: here a JSON Lines
input) read back by pyarrow and by DuckDB as they were given, nulls and pages included."""
from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import cli_binary

duckdb = pytest.importorskip("duckdb")

TASK = """definition:
  output_column: output
  scorers:
    - type: string_equals
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct}
"""


def test_ids_with_nulls_read_back_in_pyarrow_and_duckdb(tmp_path: Path):
    rng = random.Random(5)
    # 50,000 rows: three pages of 20,000 at most, the second all null; ids rising by 3
    # from below zero, a fifth of the others null.
    ids = [
        None if 20_000 <= i < 40_000 or rng.random() < 0.2 else i * 3 - 70_000
        for i in range(50_000)
    ]
    src = tmp_path / "in.jsonl"
    with src.open("w") as f:
        for i in ids:
            row = {"id": i, "output": rng.choice("ABCD"), "answer": rng.choice("ABCD")}
            f.write(json.dumps(row) + "\n")
    task = tmp_path / "task.yaml"
    task.write_text(TASK)
    out = tmp_path / "out"
    subprocess.run([str(cli_binary()), "run", str(task), "--input", str(src), "--out", str(out),
                    "--quiet", "--keep", "id"], check=True)
    scores = out / "scores.parquet"

    assert pq.read_table(scores).column("id").to_pylist() == ids
    column = pq.ParquetFile(scores).metadata.row_group(0).column(0)
    assert column.encodings == ("RLE", "DELTA_BINARY_PACKED")
    present = [i for i in ids if i is not None]
    stats = column.statistics
    assert (stats.min, stats.max, stats.null_count) == (min(present), max(present),
                                                        len(ids) - len(present))
    assert column.has_column_index

    con = duckdb.connect()
    try:
        got = con.sql(f"SELECT id FROM read_parquet('{scores}')").fetchall()
        assert [r[0] for r in got] == ids
        lo, hi = -1_000, 50_000
        got = con.sql(f"SELECT count(id), sum(id) FROM read_parquet('{scores}') "
                      f"WHERE id BETWEEN {lo} AND {hi}").fetchall()
        inside = [i for i in present if lo <= i <= hi]
        assert got == [(len(inside), sum(inside))]
    finally:
        con.close()
