"""Issue 14 item 2: the conformance kit kills every single-bug mutant of the reference plugin.

Each mutant of ``tests/conformance/reference_plugin`` (see its ``mutants.py``) is
written to its own directory and the reference plugin's conformance tests run on
it in a subprocess (``pytest -x``: the first failing check kills it). A mutant
whose run passes survived: the test fails naming every survivor. The unmutated
plugin, and each bug-free rewrite of it the mutants start from (``CONTROLS``: a
hand-written error classifier), run through the same harness first and must
pass, so a broken harness, or a rewrite the kit fails anyway, cannot pass for a
strong kit. The score is printed (``pytest -s`` shows it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conformance.reference_plugin.mutants import CONTROLS, MUTANTS, Mutant, apply
from tests.conformance.reference_plugin.site import HERE, SOURCE_VARIABLE

ROOT = HERE.parents[2]
SUITE = HERE / "test_reference_conformance.py"
WORKERS = 2  # the runs mostly wait on sockets and timeouts, but the loop-lag check needs CPU to spare
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


def _run_kit(name: str, source: Path, bytecode: Path) -> Run:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {SOURCE_VARIABLE: str(source), "PYTHONPYCACHEPREFIX": str(bytecode)}  # compiled once, for every run
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-rf", "-p", "no:cacheprovider", str(SUITE)]
    try:
        done = subprocess.run(
            command, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT
        )
    except subprocess.TimeoutExpired as timed_out:
        return Run(name, -1, (), f"timed out after {RUN_TIMEOUT}s: {timed_out.stdout!r}")
    failed = tuple(re.findall(r"^FAILED \S+::(\S+)", done.stdout, flags=re.MULTILINE))
    return Run(name, done.returncode, failed, done.stdout[-3000:] + done.stderr[-2000:])


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


def test_item_2_the_kit_kills_every_mutant(tmp_path: Path) -> None:
    bytecode = tmp_path / "pycache"
    clean = _run_kit("unmutated", _mutant_source(None, tmp_path), bytecode)
    assert clean.exit_code == 0, f"the unmutated reference plugin must pass the kit:\n{clean.output}"
    for control in CONTROLS:
        run = _run_kit(control.name, _mutant_source(control, tmp_path), bytecode)
        assert run.exit_code == 0, f"the bug-free rewrite {control.name} must pass the kit:\n{run.output}"
    sources = {m.name: _mutant_source(m, tmp_path) for m in MUTANTS}
    with ThreadPoolExecutor(WORKERS) as pool:
        runs = list(pool.map(lambda m: _run_kit(m.name, sources[m.name], bytecode), MUTANTS))
    killed = [r for r in runs if r.killed]
    print(f"\nconformance kit mutation score: {len(killed)}/{len(runs)} mutants of the reference plugin killed")
    for mutant, run in zip(MUTANTS, runs, strict=True):
        verdict = f"killed by {run.failed[0]}" if run.killed else f"SURVIVED (exit {run.exit_code})"
        print(f"  {mutant.name:34} {verdict}")
    survivors = [f"{m.name} ({m.bug}):\n{r.output}" for m, r in zip(MUTANTS, runs, strict=True) if not r.killed]
    if survivors:
        pytest.fail(f"{len(survivors)} mutant(s) survived the conformance kit:\n\n" + "\n\n".join(survivors))
