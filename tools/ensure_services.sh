#!/usr/bin/env bash
# Services the test suite runs for real, installed when missing (tox runs this before the tests):
# redis-server, for the shared rate limits and budgets of issue 15.
# As root with apt-get (Debian/Ubuntu, CI) it installs the Debian package; anywhere else it
# fails saying how to install it (and tests/scaling's check fails with the same instruction).
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends redis-server \
        || { apt-get update && apt-get install -y --no-install-recommends redis-server; }
    command -v redis-server >/dev/null 2>&1 && exit 0
fi
echo "redis-server is missing: install it with 'sudo apt-get install -y redis-server' (Debian/Ubuntu)," \
     "'brew install redis' (macOS), or put a redis-server binary on PATH" >&2
exit 1
