#!/usr/bin/env bash
# Every test of the project, with the real programs they drive, installed first on a fresh
# machine: Debian's chromium (the HTML report is checked in a real browser), llama.cpp's
# llama-server with a small model (the judge client's real-server test; built once into
# ~/.cache/evalscore, see scripts/setup/llama-server.sh), and moto and azurite (the object
# storage tests; scripts/setup/storage-servers.sh). Then the Rust test suite of the
# whole workspace, then the Python package's tests (scripts/python-test.sh: a cached venv with
# PySpark and Ray).
#
#   scripts/test.sh            # what .ci/run runs after fmt and clippy
#   scripts/test.sh -p evalscore-cli --test it e2e::   # extra arguments go to `cargo test`
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v chromium >/dev/null 2>&1; then
    echo "scripts/test.sh: installing Debian's chromium (the report test renders in it)" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# Builds (once, cached outside the checkout) what the judge tests start; they run it again,
# instantly, to find it.
scripts/setup/llama-server.sh >/dev/null
# The object stores of the storage tests: moto (S3, PyPI) and azurite (Azure Blob, npm),
# installed once into the same cache (scripts/setup/storage-servers.sh).
scripts/setup/storage-servers.sh >/dev/null

cargo test --workspace "$@"

# The Python package (python/): `pip install ./python` into a cached venv, then pytest,
# including PySpark on local[2] and Ray local (scripts/python-test.sh). Skipped when arguments
# pick Rust tests.
if [ "$#" -eq 0 ]; then
    scripts/python-test.sh
fi
