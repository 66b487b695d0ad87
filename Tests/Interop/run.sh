#!/usr/bin/env bash
# Interop stage: a Python third-party backend (authlib + jwcrypto, pinned in requirements.txt)
# against the real `herald serve` binary on loopback.
#
# Usage: Tests/Interop/run.sh PATH_TO_HERALD_BINARY
# The virtual environment is created under $HERALD_INTEROP_VENV (default: a temp folder that
# is removed afterwards) with `python3 -m venv`, and packages come only from PyPI. The pytest
# session (conftest.py) starts fake Apple and Google JWKS servers (fakeapple.py, fakegoogle.py)
# and herald on free loopback ports,
# configures a realm and its clients through the admin API with a random HERALD_ADMIN_TOKEN,
# and stops them all at the end.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
stage=interop; venv_variable=HERALD_INTEROP_VENV
. "$here/../../scripts/python-stage.sh" "$@"

cd "$here"
HERALD_BIN="$binary" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here"
