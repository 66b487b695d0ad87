#!/usr/bin/env bash
# Browser stage: Debian's chromium + chromedriver (installed here when missing) driven by
# Selenium (PyPI, pinned in requirements.txt) through the Apple web flow of the real binary,
# through Sign in with Google on the web (test_google_signin.py) and through the admin console
# (test_console.py) and its realm overview (test_overview.py), against a fake Apple (fakeapple_web.py) and a fake Google with a fake
# Google Identity Services script (fakegoogle_web.py) on loopback.
#
# Usage: Tests/Browser/run.sh PATH_TO_HERALD_BINARY
# The virtual environment is $HERALD_BROWSER_VENV, else a temp folder removed afterwards.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
stage=browser; venv_variable=HERALD_BROWSER_VENV

missing=""
for package in chromium chromium-driver; do
    dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
done
if [ -n "$missing" ]; then
    echo "browser: installing$missing"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
fi

. "$here/../../scripts/python-stage.sh" "$@"

cd "$here"
HERALD_BIN="$binary" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here"
