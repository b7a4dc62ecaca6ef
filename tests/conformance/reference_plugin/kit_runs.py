"""Run the conformance kit on many versions of the reference plugin, each in a forked copy of one warm process.

``python -m tests.conformance.reference_plugin.kit_runs JOBS RESULTS`` reads ``JOBS`` (a JSON list of
``[name, source directory, first]``, ``first`` naming the kit's test to run before the others, or empty),
collects the kit once to import pytest, its plugins, llmplex and the kit's modules, then forks one child per job
(``WORKERS`` at a time). Each child runs ``pytest -x`` on the kit with ``KIT_REFERENCE_SOURCE`` set to its job's
source directory, so every run starts from the same clean state without paying an interpreter's and pytest's
start again. The kit's own modules and the plugin are dropped from ``sys.modules`` before forking: each child
imports them afresh (under pytest's assertion rewriting) and the plugin from its own source. ``RESULTS`` gets a
JSON list of ``{name, exit_code, output}``; a child past ``timeout`` seconds is killed and reported with exit
code -1.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.conformance.reference_plugin.site import HERE, SOURCE_VARIABLE

SUITE = HERE / "test_reference_conformance.py"
ARGS = ["-x", "-q", "-rf", "-p", "no:cacheprovider", str(SUITE)]
WORKERS = 2  # the runs mostly wait on sockets and timeouts, but the loop-lag check needs CPU to spare


def _warm_up() -> None:
    """Import everything a run imports, then forget the kit's modules and the plugin (each child reloads them)."""
    with open(os.devnull, "w") as quiet:
        saved = os.dup(1)
        os.dup2(quiet.fileno(), 1)
        try:
            pytest.main(["--collect-only", *ARGS])
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    for name in [n for n in sys.modules if n == "tests" or n.startswith(("tests.", "llmplex_reference"))]:
        del sys.modules[name]


class _RunFirst:
    """A pytest plugin moving one test (a function with all its parameters, or one of them) to the front."""

    def __init__(self, first: str) -> None:
        self.first = first

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Stable: the chosen tests first, then every other test in the kit's own order."""
        items.sort(key=lambda item: self.first not in (item.name, getattr(item, "originalname", None)))


def _child(source: str, first: str, log: Path) -> None:
    """Run the kit on ``source`` (``first``'s tests first) with stdout and stderr in ``log``; never returns."""
    code = 70
    try:
        os.environ[SOURCE_VARIABLE] = source
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        code = int(pytest.main(list(ARGS), plugins=[_RunFirst(first)] if first else []))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run(jobs: list[tuple[str, str, str]], logs: Path, timeout: float) -> list[dict[str, object]]:
    """Fork a child per job, ``WORKERS`` at a time; the results in the order of ``jobs``."""
    codes: dict[str, int] = {}
    running: dict[int, tuple[str, float]] = {}
    todo = list(jobs)
    while todo or running:
        while todo and len(running) < WORKERS:
            name, source, first = todo.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(source, first, logs / f"{name}.log")
            running[pid] = (name, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid:
            codes[running.pop(pid)[0]] = os.waitstatus_to_exitcode(status)
            continue
        for late, (name, started) in list(running.items()):
            if time.monotonic() - started > timeout:
                os.kill(late, signal.SIGKILL)
                os.waitpid(late, 0)
                codes[name] = -1
                del running[late]
        time.sleep(0.05)  # polling the children: only how soon a finished run is noticed depends on it
    return [
        {"name": name, "exit_code": codes[name], "output": (logs / f"{name}.log").read_text(errors="replace")}
        for name, _, _ in jobs
    ]


def main() -> None:
    """``JOBS RESULTS [TIMEOUT]``: run the jobs, write the results."""
    jobs_file, results_file = Path(sys.argv[1]), Path(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 240.0
    jobs = [(name, source, first) for name, source, first in json.loads(jobs_file.read_text())]
    logs = results_file.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    _warm_up()
    results_file.write_text(json.dumps(run(jobs, logs, timeout)))


if __name__ == "__main__":
    main()
