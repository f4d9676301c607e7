"""A bounded slice of the differential mutation test of evalscore's Parquet reading against
pyarrow (scripts/fuzz/parquet_mutations.py; the full run is documented in
docs/errors-and-limits.md): every seed read exactly, and every mutant refused or read with
pyarrow's values."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT, cli_binary

SCRIPT = ROOT / "scripts" / "fuzz" / "parquet_mutations.py"
# About 35 s on the 2-core test machine (two evalscore runs a mutant, 2 workers).
MUTANTS = 2000


def test_mutants_are_refused_or_read_as_pyarrow_reads_them(tmp_path):
    out = tmp_path / "mutations"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--mutants", str(MUTANTS), "--seed", "52", "--out", str(out),
         "--quiet"],
        env={**os.environ, "EVALSCORE_BIN": str(cli_binary())},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failures"] == []
    assert summary["seeds"] == 13
    assert summary["mutants"] == MUTANTS
    # Both reading paths read many mutants (and the seeds) with pyarrow's values, and refused
    # the others: none is left out.
    outcomes = summary["outcomes"]
    for mode in ("decode", "copy"):
        assert outcomes[f"{mode}/same-values"] > MUTANTS // 10
        judged = sum(n for k, n in outcomes.items() if k.startswith(f"{mode}/"))
        assert judged == summary["seeds"] + MUTANTS - summary["pyarrow_crashed"]
