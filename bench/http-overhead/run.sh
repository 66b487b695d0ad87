#!/usr/bin/env bash
# Measures what Herald's HTTP stack costs on top of bare libmicrohttpd: the same wrk load
# against raw_server.c (answers "ok" from the MHD thread) and against `herald serve`'s
# /healthz (router, suspended connection, async handler, JSON, access log). Prints both
# throughputs and their ratio; the target is Herald >= 0.8 x raw.
#
# Environment (all optional):
#   DURATION=10s WARMUP=3s CONNECTIONS=64 THREADS=2   wrk settings
#   TARGET_RATIO=0.8                                   exit 1 below it when ENFORCE=1
#   SWIFT_BUILD_FLAGS="--scratch-path /tmp/build-x"    extra flags for `swift build`
#   SKIP_HERALD=1                                      measure the C baseline only
#   HERALD_BIN=/path/to/herald                         use this binary instead of building
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
TARGET_RATIO=${TARGET_RATIO:-0.8}
SWIFT_BUILD_FLAGS=${SWIFT_BUILD_FLAGS:-}

for tool in cc pkg-config wrk swift; do
    command -v "$tool" >/dev/null || { echo "run.sh: '$tool' is required" >&2; exit 2; }
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/herald-bench.XXXXXX")
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# A port the kernel reports free right now (bind 0, read it back, release it).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits (up to 30 s) until something accepts TCP connections on 127.0.0.1:$1.
wait_for_port() {
    local port=$1 pid=$2
    for _ in $(seq 1 300); do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "run.sh: server (pid $pid) exited before listening on $port" >&2
            return 1
        fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "run.sh: nothing listening on $port after 30 s" >&2
    return 1
}

# Runs wrk against $2 and prints requests/second; fails if any response was not 2xx/3xx or
# any socket error occurred, since a fast stream of errors is not throughput.
measure() {
    local name=$1 url=$2 output
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" "$url" >/dev/null
    output=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" "$url")
    echo "$output" | sed "s/^/  [$name] /" >&2
    if echo "$output" | grep -qE 'Non-2xx or 3xx responses|Socket errors: .*(connect|read|write|timeout) [1-9]'; then
        echo "run.sh: $name answered with errors; not a valid measurement" >&2
        return 1
    fi
    echo "$output" | awk '/^Requests\/sec:/ { print $2 }'
}

echo "== building raw_server.c" >&2
# shellcheck disable=SC2046  # pkg-config output is meant to split into flags
cc -O2 -Wall -o "$TMP/raw_server" "$HERE/raw_server.c" $(pkg-config --cflags --libs libmicrohttpd)

RAW_PORT=$(free_port)
"$TMP/raw_server" "$RAW_PORT" >/dev/null &
RAW_PID=$!
PIDS+=("$RAW_PID")
wait_for_port "$RAW_PORT" "$RAW_PID"
echo "== raw libmicrohttpd on :$RAW_PORT" >&2
RAW_RPS=$(measure raw "http://127.0.0.1:$RAW_PORT/healthz")
kill -TERM "$RAW_PID"; wait "$RAW_PID" 2>/dev/null || true
PIDS=()

if [[ "${SKIP_HERALD:-0}" == 1 ]]; then
    printf 'raw libmicrohttpd: %s req/s\n' "$RAW_RPS"
    exit 0
fi

if [[ -n "${HERALD_BIN:-}" ]]; then
    HERALD=$HERALD_BIN
else
    echo "== building herald (release)" >&2
    # shellcheck disable=SC2086  # SWIFT_BUILD_FLAGS is a list of flags
    (cd "$ROOT" && swift build -c release --product herald $SWIFT_BUILD_FLAGS >&2)
    # shellcheck disable=SC2086
    HERALD="$(cd "$ROOT" && swift build -c release --show-bin-path $SWIFT_BUILD_FLAGS)/herald"
fi

HERALD_PORT=$(free_port)
# Herald logs one JSON line per request on stderr; keep it out of the terminal but on disk,
# so logging costs what it costs in production.
"$HERALD" serve --port "$HERALD_PORT" --database "sqlite:$TMP/bench.db" >"$TMP/herald.out" 2>"$TMP/herald.log" &
HERALD_PID=$!
PIDS+=("$HERALD_PID")
if ! wait_for_port "$HERALD_PORT" "$HERALD_PID"; then
    tail -n 20 "$TMP/herald.log" >&2
    exit 1
fi
echo "== herald on :$HERALD_PORT" >&2
HERALD_RPS=$(measure herald "http://127.0.0.1:$HERALD_PORT/healthz")

RATIO=$(awk -v h="$HERALD_RPS" -v r="$RAW_RPS" 'BEGIN { printf "%.3f", h / r }')
MEETS=$(awk -v x="$RATIO" -v t="$TARGET_RATIO" 'BEGIN { print (x >= t) ? "yes" : "no" }')
printf 'raw libmicrohttpd: %s req/s\n' "$RAW_RPS"
printf 'herald /healthz:   %s req/s\n' "$HERALD_RPS"
printf 'ratio:             %s (target >= %s: %s)\n' "$RATIO" "$TARGET_RATIO" "$MEETS"
printf 'machine:           %s cores, wrk -t%s -c%s -d%s\n' "$(nproc)" "$THREADS" "$CONNECTIONS" "$DURATION"
if [[ "${ENFORCE:-0}" == 1 && "$MEETS" != yes ]]; then
    exit 1
fi
