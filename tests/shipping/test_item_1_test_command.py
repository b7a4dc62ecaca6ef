"""Issue 30 item 1: the README's test command is the one CI runs, leaves the benchmarks to their own command,
runs the suite on a worker per core and one more, prints its 25 slowest tests and each tox env's time, and runs the
other envs side by side once the suite is done."""

from __future__ import annotations

import configparser
import os
import re
from pathlib import Path

import pytest

from tests import conftest as suite_conftest

ROOT = Path(__file__).resolve().parents[2]


def _tox() -> configparser.ConfigParser:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    return tox


def _env_list(tox: configparser.ConfigParser) -> list[str]:
    """The default list with its {a,b} factors expanded."""
    names: list[str] = []
    for part in re.split(r",\s*(?![^{]*\})", tox["tox"]["env_list"]):
        match = re.fullmatch(r"(.*)\{(.*)\}(.*)", part.strip())
        names += [f"{match[1]}{f}{match[3]}" for f in match[2].split(",")] if match else [part.strip()]
    return names


def test_item_1_ci_runs_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "python -m pip install 'tox>=4.20' 'tox-uv>=1.11' && python -m tox -p auto\n"
    assert command in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m tox -p auto\n" in ci and "tox-uv>=1.11" in ci


def test_item_1_benchmarks_are_their_own_command_outside_the_default_list() -> None:
    tox = _tox()
    names = _env_list(tox)
    assert "bench" not in names and "compat-suites" not in names, names
    assert {"lint", "type", "py", "docs", "sdk-ranges", "sdk-lowest-openai"} <= set(names)
    bench = tox["testenv:bench"]["commands"]
    for script in ("transport.py", "gateway.py", "core_overhead.py", "routing.py"):
        assert f"bench/{script}" in bench, f"tox -e bench does not run bench/{script}"


def test_item_1_the_suite_runs_on_a_worker_per_core_and_one_more_and_names_its_slowest_tests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tox = _tox()
    assert "pytest-xdist" in tox["testenv:py"]["deps"]
    pytest_line = next(line for line in tox["testenv:py"]["commands"].splitlines() if line.strip().startswith("pytest"))
    assert "-n auto" in pytest_line and "--dist loadfile" in pytest_line, pytest_line
    assert "--durations=25" in pytest_line, pytest_line
    # `-n auto` asks tests/conftest.py: three workers on the 2-core machine; pytest-xdist's variable still wins
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert suite_conftest.pytest_xdist_auto_num_workers(config=None) == 3
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")
    assert suite_conftest.pytest_xdist_auto_num_workers(config=None) is None


def test_item_1_the_small_envs_run_side_by_side_after_the_suite_whose_output_stays_visible() -> None:
    """`tox -p auto` runs py first and alone (both cores for its workers; its commands_pre install the services
    the others use), then the rest in parallel; py's output, hidden by parallel mode when it passes, is printed."""
    tox = _tox()
    assert tox["testenv:py"]["parallel_show_output"].strip() == "true"
    for name in _env_list(tox):
        section = next((s for s in tox.sections() if s == f"testenv:{name}" or _expands_to(s, name)), "testenv")
        depends = tox[section].get("depends", tox["testenv"].get("depends", ""))
        assert name == "py" or [d.strip() for d in depends.split(",")] == ["py"], f"{name} does not wait for py"


def _expands_to(section: str, name: str) -> bool:
    """Whether the factor section ``testenv:a-{b,c}`` names ``name``."""
    match = re.fullmatch(r"testenv:(.*)\{(.*)\}(.*)", section)
    return bool(match) and name in {f"{match[1]}{f}{match[3]}" for f in match[2].split(",")}


def test_item_1_no_test_sleeps_a_second_or_more_to_order_events() -> None:
    """Where tests wait, they wait on events. A fixed sleep of a second or more is allowed only to simulate a hang
    (30 s or more: an upstream or a tool that never answers) or where real time passing is what the test is about
    (marked ``# clock:`` on its line)."""
    sleep = re.compile(r"(?:time|asyncio)\.sleep\((\d+(?:\.\d+)?)\)")
    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for seconds in sleep.findall(line):
                hang = float(seconds) >= 30  # a server or a tool that never answers
                if float(seconds) >= 1 and not hang and "# clock:" not in line:
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "fixed sleeps of a second or more:\n" + "\n".join(offenders)
