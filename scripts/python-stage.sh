# Shared set-up of the Python test stages (Tests/Interop, Tests/Conformance, Tests/Browser); source it with
#   stage=NAME; venv_variable=HERALD_NAME_VENV; . scripts/python-stage.sh "$@"
# It sets `binary` (the herald binary from $1 or $HERALD_BIN, made absolute) and `venv` (a
# virtual environment with the stage's pinned requirements.txt installed from PyPI: the folder
# named by $venv_variable, else a temp folder removed on exit). Needs `here` (the stage folder).
binary="${1:-${HERALD_BIN:-}}"
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
    echo "usage: $0 PATH_TO_HERALD_BINARY (e.g. .build/debug/herald)" >&2
    exit 2
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"

python="${PYTHON:-python3}"
if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "$stage: $python lacks venv/ensurepip (on Debian: apt-get install python3-venv)" >&2
    exit 2
fi

cleanup_venv=""
venv="${!venv_variable:-}"
if [ -z "$venv" ]; then
    venv="$(mktemp -d -t "herald-$stage-venv.XXXXXX")"
    cleanup_venv="$venv"
fi
trap '[ -n "$cleanup_venv" ] && rm -rf "$cleanup_venv"' EXIT

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
