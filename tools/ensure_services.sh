#!/usr/bin/env bash
# System programs the test suite runs for real, installed when missing (tox runs this before the tests):
#   redis-server  the shared rate limits and budgets, the gateway's shared limits
#   postgresql    the gateway's and the call log's database for several replicas (initdb/pg_ctl, run per test)
#   chromium      the dashboard's browser tests (Playwright drives Debian's chromium; no browser download)
#   openssl       a self-signed certificate for the gateway's TLS test
# As root with apt-get (Debian/Ubuntu, CI) it installs the Debian packages; anywhere else it fails
# saying how to install what is missing (and the tests needing it fail with the same instruction).
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" \
        || { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }
    exit 0
fi
echo "missing system packages: ${missing[*]}. Install them with" \
     "'sudo apt-get install -y ${missing[*]}' (Debian/Ubuntu), or 'brew install redis postgresql chromium'" \
     "(macOS), or put the programs on PATH" >&2
exit 1
