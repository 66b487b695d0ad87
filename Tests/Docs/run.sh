#!/usr/bin/env bash
# Docs stage: every curl and config snippet of the integrator and operator docs, run against the
# real `herald serve` binary on loopback with a fake Apple (Tests/Browser/fakeapple_web.py).
#
# Usage: Tests/Docs/run.sh PATH_TO_HERALD_BINARY
# docs_test.py finds each fenced block after an `<!-- doc-test: NAME -->` comment, runs it with
# bash (or imports it, for Python), and checks its answer with the check of the same name in
# snippets.py; a block after `<!-- doc-include: PATH -->` must be a verbatim excerpt of PATH.
# Config files are exercised for real: nginx (TLS) in front of Herald, the systemd unit through
# `systemd-analyze verify`, the environment file by starting Herald with it, the Prometheus rules
# by their structure and by every metric name against Herald's /metrics. nginx and sqlite3 come
# from Debian (`make docs-deps`); Python packages from PyPI, pinned in requirements.txt.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
stage=docs; venv_variable=HERALD_DOCS_VENV
. "$here/../../scripts/python-stage.sh" "$@"

cd "$here/../.."
HERALD_BIN="$binary" "$venv/bin/python" "$here/docs_test.py"
