#!/usr/bin/env bash
# `make bench`: the end-to-end scenarios (bench/scenarios/run.py), then the HTTP-layer overhead
# comparison (bench/http-overhead/run.sh), both against one release binary.
#
# Environment: HERALD_BIN (default .build/release/herald), BENCH_ARGS (extra run.py flags, e.g.
# "--scale 1000,100000 --duration 5"), SKIP_HTTP_OVERHEAD=1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
binary="${HERALD_BIN:-$root/.build/release/herald}"
[ -x "$binary" ] || { echo "bench: no herald binary at $binary (run: swift build -c release)" >&2; exit 2; }

# Python with `cryptography`: the system one if it has it, else a venv under bench/.venv.
python=python3
if ! python3 -c 'import cryptography' 2>/dev/null; then
    [ -x "$here/.venv/bin/python" ] || python3 -m venv "$here/.venv"
    "$here/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/scenarios/requirements.txt"
    python="$here/.venv/bin/python"
fi

status=0
# shellcheck disable=SC2086  # BENCH_ARGS is a list of flags
"$python" "$here/scenarios/run.py" --herald "$binary" ${BENCH_ARGS:-} || status=$?
if [ -z "${SKIP_HTTP_OVERHEAD:-}" ]; then
    HERALD_BIN="$binary" bash "$here/http-overhead/run.sh" || status=$?
fi
exit $status
