#!/usr/bin/env bash
# OpenAPI conformance stage: schemathesis (pinned in requirements.txt) against the document a
# throwaway `herald serve` serves on loopback, with checks not_a_server_error,
# status_code_conformance, content_type_conformance and response_schema_conformance.
#
# Usage: Tests/Conformance/run.sh PATH_TO_HERALD_BINARY
# The virtual environment is created under $HERALD_CONFORMANCE_VENV (default: a temp folder
# removed afterwards) with `python3 -m venv`; packages come only from PyPI. conformance.py
# starts a fake Apple and herald (temporary SQLite, random admin token), seeds a realm, its
# Apple provider, two clients and an account with a session, and runs three ordered passes
# (seed kept, seed changed, seed deleted: see its docstring). CONFORMANCE_MAX_EXAMPLES
# (default 50) bounds the cases per operation: about 45 s on 2 cores, plus the pip install.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
stage=conformance; venv_variable=HERALD_CONFORMANCE_VENV
. "$here/../../scripts/python-stage.sh" "$@"

cd "$here"
"$venv/bin/python" "$here/conformance.py" "$binary"
