#!/usr/bin/env bash
# Interop stage: a Python third-party backend (authlib + jwcrypto, pinned in requirements.txt)
# against the real `herald serve` binary on loopback.
#
# Usage: Tests/Interop/run.sh PATH_TO_HERALD_BINARY
# The virtual environment is created under $HERALD_INTEROP_VENV (default: a temp folder that
# is removed afterwards) with `python3 -m venv`, and packages come only from PyPI. The pytest
# session (conftest.py) starts a fake Apple JWKS server and herald on free loopback ports,
# configures a realm and its clients through the admin API with a random HERALD_ADMIN_TOKEN,
# and stops both at the end.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
binary="${1:-${HERALD_BIN:-}}"
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
    echo "usage: $0 PATH_TO_HERALD_BINARY (e.g. .build/debug/herald)" >&2
    exit 2
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"

python="${PYTHON:-python3}"
if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "interop: $python lacks venv/ensurepip (on Debian: apt-get install python3-venv)" >&2
    exit 2
fi

cleanup_venv=""
venv="${HERALD_INTEROP_VENV:-}"
if [ -z "$venv" ]; then
    venv="$(mktemp -d -t herald-interop-venv.XXXXXX)"
    cleanup_venv="$venv"
fi
trap '[ -n "$cleanup_venv" ] && rm -rf "$cleanup_venv"' EXIT

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$here/requirements.txt"

cd "$here"
HERALD_BIN="$binary" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here"
