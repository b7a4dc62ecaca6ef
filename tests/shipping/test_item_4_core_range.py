"""Issue 30 item 4: a plugin whose declared core range leaves out the installed core is reported by
``llmplex providers --check`` (and not imported); a range that includes it, or one only an extra brings, is not."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from llmplex.plugins.core_range import core_range_problem
from tests.support.cli import rich_tables, run_llmplex

CORE = version("llmplex")


def fake_plugin(site: Path, name: str, requires: list[str], group: str = "llmplex.providers") -> None:
    """An installed distribution ``llmplex-<name>`` whose module raises on import (it must not be imported)."""
    info = site / f"llmplex_{name}-9.0.0.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: llmplex-{name}", "Version: 9.0.0"]
    (info / "METADATA").write_text("\n".join(lines + [f"Requires-Dist: {r}" for r in requires]) + "\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = llmplex_{name}\n")
    (site / f"llmplex_{name}.py").write_text(f"raise RuntimeError('llmplex_{name} was imported')\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    core_range_problem.cache_clear()
    yield folder
    core_range_problem.cache_clear()


def test_item_4_a_range_that_excludes_the_core_is_a_problem_saying_what_to_do(site: Path) -> None:
    fake_plugin(site, "future", ["llmplex>=99,<100", "httpx>=0.27"])
    problem = core_range_problem("llmplex-future")
    assert problem is not None
    assert "llmplex-future declares llmplex<100,>=99" in problem and f"llmplex {CORE} is installed" in problem
    assert "pip install --upgrade llmplex-future" in problem


@pytest.mark.parametrize(
    "requires",
    [
        [f"llmplex>={CORE},<99"],
        ["llmplex"],  # no range: nothing to break
        ["httpx>=0.27"],  # no llmplex requirement at all
        ["llmplex>=99; extra == 'future'", "llmplex>=0.0.1"],  # only an extra brings the strict one
        ["llmplex[cache]>=0.0.1,<99"],  # an extra of the core, in range
    ],
)
def test_item_4_a_range_that_includes_the_core_is_no_problem(site: Path, requires: list[str]) -> None:
    fake_plugin(site, "fine", requires)
    assert core_range_problem("llmplex-fine") is None


def test_item_4_one_excluding_requirement_among_several_is_a_problem(site: Path) -> None:
    fake_plugin(site, "split", ["llmplex>=0.0.1", "llmplex<0.0.2; python_version >= '3'"])
    assert "llmplex<0.0.2" in (core_range_problem("llmplex-split") or "")


def test_item_4_every_shipped_plugin_declares_a_range_that_includes_this_core() -> None:
    for name in ("llmplex-openai", "llmplex-anthropic", "llmplex-llamacpp", "llmplex-otel", "llmplex-azure"):
        assert core_range_problem(name) is None, name


def test_item_4_providers_check_reports_the_incompatible_plugin_without_importing_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_plugin(site, "future", ["llmplex>=99,<100"])
    fake_plugin(site, "oldobserver", ["llmplex<0.0.1"], group="llmplex.plugins")
    # only these two enabled: --check imports every enabled plugin, and litellm alone takes seconds
    env = {"PYTHONPATH": str(site), "LLMPLEX_ENABLED": "future,mock"}
    result = run_llmplex("providers", "--check", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    rows = rich_tables(result.stdout)[0][1]
    future = " ".join(rows["future"])
    assert "incompatible: llmplex-future declares llmplex<100,>=99" in future, future
    assert "was imported" not in result.stdout + result.stderr, "an incompatible plugin is reported, not imported"
    assert "ok" in " ".join(rows["mock"]), "the other plugins are checked as before"
    squashed = " ".join(result.stdout.split())
    assert "observer plugin oldobserver: incompatible: llmplex-oldobserver declares llmplex<0.0.1" in squashed
