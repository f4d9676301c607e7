#!/usr/bin/env bash
# The real object stores of the storage tests: `moto` in server mode (S3, from PyPI) and
# `azurite` (Azure Blob's emulator, from npm). Both go to a cache outside the checkout, keyed
# by version, so a CI machine installs them once:
#
#   $EVALSCORE_CACHE (default ~/.cache/evalscore)/moto-<version>/bin/moto_server
#   $EVALSCORE_CACHE/azurite-<version>/node_modules/.bin/azurite-blob
#
# Prints the two paths (`MOTO_SERVER=...`, `AZURITE_BLOB=...`), for `eval`; the tests run it
# again (instantly once installed) to find them.
set -euo pipefail

MOTO_VERSION=5.2.5
AZURITE_VERSION=3.37.0
CACHE=${EVALSCORE_CACHE:-$HOME/.cache/evalscore}
mkdir -p "$CACHE"

moto_dir=$CACHE/moto-$MOTO_VERSION
# A venv names its interpreter by absolute path, so it is built in place; `.complete` marks
# an install that finished.
if [ ! -e "$moto_dir/.complete" ]; then
    echo "storage-servers.sh: installing moto $MOTO_VERSION (once)" >&2
    rm -rf "$moto_dir"
    python3 -m venv "$moto_dir"
    "$moto_dir/bin/pip" install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION" >&2
    touch "$moto_dir/.complete"
fi

azurite_dir=$CACHE/azurite-$AZURITE_VERSION
if [ ! -x "$azurite_dir/node_modules/.bin/azurite-blob" ]; then
    echo "storage-servers.sh: installing azurite $AZURITE_VERSION (once)" >&2
    rm -rf "$azurite_dir.partial"
    mkdir -p "$azurite_dir.partial"
    npm install --silent --no-audit --no-fund --prefix "$azurite_dir.partial" "azurite@$AZURITE_VERSION" >&2
    rm -rf "$azurite_dir"
    mv "$azurite_dir.partial" "$azurite_dir"
fi

echo "MOTO_SERVER=$moto_dir/bin/moto_server"
echo "AZURITE_BLOB=$azurite_dir/node_modules/.bin/azurite-blob"
