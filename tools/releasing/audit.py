"""``tools/audit``: pip-audit over a lock file, against the OSV vulnerability database.

``pip-audit --requirement LOCK --no-deps --disable-pip`` reads the exact pins
without installing or resolving anything, and asks OSV about each; any known
vulnerability fails the run (exit 1), naming it and its fixed versions.

The database is on the internet. Where it is out of reach (this project's
sandboxed machines reach only the package registries) the audit says so and
passes, unless it is required (``--required`` or ``LLMPLEX_AUDIT=required``,
as the release workflow runs it). ``LLMPLEX_OSV_URL`` points it at another
OSV-compatible service (the tests' local fake of one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["OSV_URL", "main", "reachable"]

OSV_URL = "https://api.osv.dev/v1/query"


def reachable(url: str, timeout: float = 10.0) -> str | None:
    """None when the OSV service at ``url`` answers a query, else why it does not."""
    query = json.dumps({"package": {"name": "pip", "ecosystem": "PyPI"}, "version": "0.1"}).encode()
    request = urllib.request.Request(url, data=query, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError:
        return None  # it answered: pip-audit reports what the error was
    except OSError as exc:  # URLError too: no name, no route, refused, timed out
        return str(getattr(exc, "reason", exc))
    return None


def main(argv: list[str] | None = None) -> int:
    """Audit each lock file; pip-audit's exit status (1: a known vulnerability), 0 when skipped as unreachable."""
    parser = argparse.ArgumentParser(prog="tools/audit", description="pip-audit over lock files (OSV).")
    parser.add_argument("locks", nargs="+", type=Path, help="requirements files that pin every distribution")
    parser.add_argument("--required", action="store_true", help="fail when the vulnerability database is out of reach")
    args = parser.parse_args(argv)
    url = os.environ.get("LLMPLEX_OSV_URL") or OSV_URL
    required = args.required or os.environ.get("LLMPLEX_AUDIT") == "required"
    unreachable = reachable(url)
    if unreachable is not None:
        print(f"tools/audit: NOT audited: the vulnerability database {url} is out of reach ({unreachable}).")
        if required:
            print("tools/audit: the audit is required here: failing.", file=sys.stderr)
            return 2
        print("tools/audit: set LLMPLEX_AUDIT=required (the release workflow does) to fail instead.")
        return 0
    command = [sys.executable, "-m", "pip_audit", "--vulnerability-service", "osv", "--osv-url", url]
    command += ["--no-deps", "--disable-pip", "--strict", "--progress-spinner", "off", "--desc", "on"]
    for lock in args.locks:
        command += ["--requirement", str(lock)]
    return subprocess.run(command, check=False).returncode
