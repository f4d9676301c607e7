#!/usr/bin/env bash
# The Python package's tests (python/tests): builds `pip install ./python` into a venv kept
# outside the checkout (~/.cache/evalscore/pyenv-<hash of python/requirements-test.txt>; pip's
# downloads are cached by pip under ~/.cache/pip), then runs pytest. Needs the CLI built
# (target/debug/evalscore: scripts/test.sh runs it after the Rust tests) and Java 17+ for
# PySpark.
#
#   scripts/python-test.sh                 # every Python test
#   scripts/python-test.sh -k spark        # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

key=$(sha256sum python/requirements-test.txt | cut -c1-12)
venv="${HOME}/.cache/evalscore/pyenv-${key}"
if [ ! -x "${venv}/bin/pytest" ]; then
    echo "scripts/python-test.sh: creating ${venv}" >&2
    rm -rf "${venv}"
    python3 -m venv "${venv}"
    "${venv}/bin/pip" install -q --upgrade pip
    "${venv}/bin/pip" install -q -r python/requirements-test.txt
fi
# The extension is built with the dev profile: the Rust tests just compiled its dependencies
# that way, and the tests check behaviour, not speed (benchmarks build a release wheel).
# --no-build-isolation: maturin comes from the venv (pinned above), not a fresh download.
PATH="${venv}/bin:${PATH}" MATURIN_PEP517_ARGS="--profile dev" \
    "${venv}/bin/pip" install -q --no-build-isolation --force-reinstall --no-deps ./python

# DuckDB's delta extension comes from PyPI built for one DuckDB version, older than the one
# above: a venv of its own, which tests/test_delta.py runs `delta_scan` in.
duck="${HOME}/.cache/evalscore/duckdb-delta-1.5.5"
if [ ! -x "${duck}/bin/python" ] || ! "${duck}/bin/python" -c "import duckdb_extension_delta" 2>/dev/null; then
    rm -rf "${duck}"
    python3 -m venv "${duck}"
    "${duck}/bin/pip" install -q duckdb==1.5.5 duckdb-extension-delta==1.5.5
fi
export EVALSCORE_DUCKDB_DELTA_PYTHON="${duck}/bin/python"

export EVALSCORE_BIN="${EVALSCORE_BIN:-$PWD/target/debug/evalscore}"
if [ ! -x "${EVALSCORE_BIN}" ]; then
    cargo build -q -p evalscore-cli
fi
set +e
"${venv}/bin/python" -m pytest -q -p no:cacheprovider python/tests "$@"
rc=$?
set -e
# Exit code 5 is "no tests collected": a broken collection must not pass.
if [ "$rc" -eq 5 ]; then
    echo "scripts/python-test.sh: pytest collected no tests" >&2
    exit 1
fi
exit "$rc"
