"""Issue 14 item 2: the conformance kit kills every single-bug mutant of the reference plugin.

Each mutant of ``tests/conformance/reference_plugin`` (see its ``mutants.py``) is
written to its own directory and the reference plugin's conformance tests run on
it (``pytest -x``: the first failing check kills it), each run in a forked copy of
one warm process (``kit_runs.py``: pytest, llmplex and the kit are imported once,
the plugin afresh in every run). A mutant whose run passes survived: the test
fails naming every survivor. The unmutated plugin, and each bug-free rewrite of it
the mutants start from (``CONTROLS``: a hand-written error classifier), run through
the same harness and must pass, so a broken harness, or a rewrite the kit fails
anyway, cannot pass for a strong kit. The score is printed (``pytest -s`` shows it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import tests.conformance.reference_plugin.test_reference_conformance as kit
from tests.conformance.reference_plugin import kit_runs
from tests.conformance.reference_plugin.mutants import CONTROLS, MUTANTS, Mutant, apply
from tests.conformance.reference_plugin.site import HERE

ROOT = HERE.parents[2]
RUN_TIMEOUT = 240.0


@dataclass(frozen=True)
class Run:
    """One run of the kit on one version of the plugin."""

    name: str
    exit_code: int
    failed: tuple[str, ...]
    output: str

    @property
    def killed(self) -> bool:
        """Some check failed (pytest's exit code 1), not the harness."""
        return self.exit_code == 1 and bool(self.failed)


def _run_kits(sources: dict[str, tuple[Path, str]], work: Path) -> dict[str, Run]:
    """The kit run on each source directory (``kit_runs.py``, the named test first), by name."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")  # the kit compiled once, for every run
    work.mkdir()
    jobs, results = work / "jobs.json", work / "results.json"
    jobs.write_text(json.dumps([[name, str(source), first] for name, (source, first) in sources.items()]))
    command = [sys.executable, "-m", "tests.conformance.reference_plugin.kit_runs", str(jobs), str(results)]
    done = subprocess.run(
        [*command, str(RUN_TIMEOUT)], check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"the kit's runner failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    runs = {}
    for result in json.loads(results.read_text()):
        output = result["output"]
        failed = tuple(re.findall(r"^FAILED \S+::(\S+)", output, flags=re.MULTILINE))
        runs[result["name"]] = Run(result["name"], result["exit_code"], failed, output[-5000:])
    return runs


def _mutant_source(mutant: Mutant | None, root: Path) -> Path:
    source = root / (mutant.name if mutant else "unmutated")
    shutil.copytree(HERE / "src", source, ignore=shutil.ignore_patterns("__pycache__"))
    if mutant is not None:
        apply(mutant, source)
    return source


def test_every_mutant_applies_exactly_once(tmp_path: Path) -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names)) >= 21
    for mutant in MUTANTS + CONTROLS:
        _mutant_source(mutant, tmp_path)  # raises unless the replaced text occurs exactly once


def test_every_mutant_names_a_check_of_the_kit_to_run_first() -> None:
    """A stale name would not change a verdict (the whole kit still runs), only make the run slow: caught here."""
    missing = [
        m.name
        for m in MUTANTS
        if not m.check.startswith("test_") or not hasattr(kit.TestReferenceConformance, m.check.split("[")[0])
    ]
    assert not missing, f"these mutants name no test of the kit as their check: {missing}"


def test_item_2_the_kit_kills_every_mutant(tmp_path: Path) -> None:
    controls = [None, *CONTROLS]
    sources = {
        (m.name if m else "unmutated"): (_mutant_source(m, tmp_path), m.check if m else "")
        for m in [*controls, *MUTANTS]
    }
    by_name = _run_kits(sources, tmp_path / "kit-runs")
    clean = by_name["unmutated"]
    assert clean.exit_code == 0, f"the unmutated reference plugin must pass the kit:\n{clean.output}"
    for control in CONTROLS:
        run = by_name[control.name]
        assert run.exit_code == 0, f"the bug-free rewrite {control.name} must pass the kit:\n{run.output}"
    runs = [by_name[m.name] for m in MUTANTS]
    killed = [r for r in runs if r.killed]
    print(f"\nconformance kit mutation score: {len(killed)}/{len(runs)} mutants of the reference plugin killed")
    for mutant, run in zip(MUTANTS, runs, strict=True):
        verdict = f"killed by {run.failed[0]}" if run.killed else f"SURVIVED (exit {run.exit_code})"
        print(f"  {mutant.name:34} {verdict}")
    survivors = [f"{m.name} ({m.bug}):\n{r.output}" for m, r in zip(MUTANTS, runs, strict=True) if not r.killed]
    if survivors:
        pytest.fail(f"{len(survivors)} mutant(s) survived the conformance kit:\n\n" + "\n\n".join(survivors))


def test_a_mutants_check_runs_first_and_every_other_test_after_it_in_the_kits_order() -> None:
    """The hint only reorders: a wrong one still leaves the whole kit to run, so a verdict never depends on it."""

    @dataclass
    class Item:
        name: str
        originalname: str

    kit_order = [
        Item("test_a", "test_a"),
        Item("test_b[x]", "test_b"),
        Item("test_c", "test_c"),
        Item("test_b[y]", "test_b"),
    ]
    for first, expected in [
        ("test_b", ["test_b[x]", "test_b[y]", "test_a", "test_c"]),
        ("test_b[y]", ["test_b[y]", "test_a", "test_b[x]", "test_c"]),
        ("test_gone", ["test_a", "test_b[x]", "test_c", "test_b[y]"]),
    ]:
        items = list(kit_order)
        kit_runs._RunFirst(first).pytest_collection_modifyitems(items)
        assert [item.name for item in items] == expected, first
