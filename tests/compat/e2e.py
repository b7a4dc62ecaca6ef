"""End-to-end helpers: a program written against a seed's own imports, swapped to llmplex.compat, run apart."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def swap_imports(source: str, package: str, module: str) -> str:
    """Every ``from <package>[.sub] import ...`` becomes ``from <module> import ...``; nothing else changes."""
    swapped, count = re.subn(
        rf"^from {re.escape(package)}(\.\w+)* import ", f"from {module} import ", source, flags=re.M
    )
    assert count, f"the program imports nothing from {package}"
    assert re.search(rf"\b{re.escape(package)}\.", swapped) is None, "only import lines may name the package"
    return swapped


def run_program(path: Path, env: Mapping[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``path`` with this interpreter in its own directory (where its llmplex.toml is)."""
    return subprocess.run(
        [sys.executable, str(path)],
        cwd=path.parent,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def output_of(result: subprocess.CompletedProcess[str]) -> Any:
    """The JSON the program printed last; fails with its stderr when it did not succeed."""
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


class FakeGemini:
    """A local server for ``POST /v1beta/models/{model}:generateContent``: queued JSON answers, recorded bodies."""

    def __init__(self) -> None:
        self.answers: deque[tuple[int, dict[str, Any]]] = deque()
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                owner.requests.append((self.path, dict(self.headers), body))
                status, answer = owner.answers.popleft() if owner.answers else (500, {"error": {"code": 500}})
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeGemini:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
