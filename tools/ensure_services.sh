#!/usr/bin/env bash
# System programs the test suite runs for real, installed when missing (tox runs this before the tests):
#   redis-server  the shared rate limits and budgets, the gateway's shared limits
#   postgresql    the gateway's and the call log's database for several replicas (initdb/pg_ctl, run per test)
#   chromium      the dashboard's browser tests (Playwright drives Debian's chromium; no browser download)
#   openssl       a self-signed certificate for the gateway's TLS test
# As root with apt-get (Debian/Ubuntu, CI) it installs the Debian packages; anywhere else it fails
# saying how to install what is missing (and the tests needing it fail with the same instruction).
set -euo pipefail

# litellm[proxy]: what the gateway benchmark (bench/gateway.py, tests/gateway/test_item_7_bench.py) compares
# against, in a venv of its own so its pins never change the litellm of the test environments.
proxy_venv="${LLMPLEX_LITELLM_PROXY_VENV:-$HOME/.cache/llmplex/litellm-proxy}"
if [ ! -x "$proxy_venv/bin/litellm" ]; then
    if command -v uv >/dev/null 2>&1; then
        uv venv -q --clear "$proxy_venv" && uv pip install -q --python "$proxy_venv/bin/python" 'litellm[proxy]' \
            || echo "could not install litellm[proxy] into $proxy_venv" >&2
    else
        python3 -m venv --clear "$proxy_venv" && "$proxy_venv/bin/pip" install -q 'litellm[proxy]' \
            || echo "could not install litellm[proxy] into $proxy_venv" >&2
    fi
fi

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
