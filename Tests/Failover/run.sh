#!/usr/bin/env bash
# Failover stage (issue #36): two PostgreSQL 15 members under Patroni with etcd (Debian's
# packages, installed here when missing), two Herald nodes on the multi-host URL, bounded load,
# a planned switchover and then a SIGKILL of the primary's postmaster; failover.py says what is
# asserted. Everything runs on 127.0.0.1 in temporary folders, PostgreSQL as `postgres`.
#
# Usage: Tests/Failover/run.sh PATH_TO_HERALD_BINARY
# The virtual environment is $HERALD_FAILOVER_VENV, else a temp folder removed afterwards.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
stage=failover; venv_variable=HERALD_FAILOVER_VENV

missing=""
for package in patroni etcd-server etcd-client haproxy postgresql-15; do
    dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
done
if [ -n "$missing" ]; then
    echo "failover: installing$missing"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
fi

. "$here/../../scripts/python-stage.sh" "$@"

# The documented HAProxy alternative must at least be a configuration HAProxy accepts.
haproxy -c -q -f "$here/../../docs/ha/haproxy.cfg"

HERALD_BIN="$binary" timeout 600 "$venv/bin/python" "$here/failover.py"
