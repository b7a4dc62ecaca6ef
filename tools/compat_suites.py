"""Run the source systems' own test suites against ``llmplex.compat``, the way a user switches: by the imports.

For each suite, a copy of the system's checkout is made, the original LLM
modules are deleted from it, and every import of them (``from`` and ``import``
lines, and dotted names in strings such as ``monkeypatch.setattr`` targets) is
rewritten to ``llmplex.compat.<system>``. The suite's test files then run with
pytest in that copy. With ``--originals`` the untouched checkout runs too, so the
figures read "N of the M tests that pass on the originals".

Integration suites call a live model in the originals; here both runs talk to
the toy model of ``tools/compat_fake_model.py`` on 127.0.0.1 (its rules are
described there), so no key and no network are needed; their pytest-timeout marks (seconds for a live
model) are switched off in both runs.

    python tools/compat_suites.py --snapshots DIR [--originals] [--suite NAME ...] [--report FILE]

``DIR`` holds the checkouts as ``Thing-Sandbox/``, ``weakincentives/`` (at
v0.18.x) and ``chatbot_todo/`` (or ``LLMPLEX_COMPAT_SNAPSHOTS`` names it).
``tox -e compat-suites`` runs it; it is not in tox's default list, since the
snapshots are not part of this repository.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

__all__ = ["SUITES", "Outcome", "Suite", "main", "remove_paths", "rewrite_source", "rewrite_tree", "run_suite"]


@dataclass(frozen=True)
class Suite:
    """One test suite of one system: where its checkout is, what to delete and rename, which tests to run."""

    name: str
    checkout: str
    """The checkout's folder name under the snapshots folder."""
    root: str
    """The folder (inside the checkout) pytest runs in, and which goes on ``PYTHONPATH``."""
    tests: tuple[str, ...]
    renames: Mapping[str, str]
    """Original module (dotted) -> its ``llmplex.compat`` replacement."""
    remove: tuple[str, ...] = ()
    """Files and folders of the original LLM code, relative to ``root``, deleted before the llmplex run."""
    pythonpath: tuple[str, ...] = (".",)
    env: Mapping[str, str] = field(default_factory=dict)
    rewrite: tuple[str, ...] = (".",)
    """The folders (relative to ``root``) holding the user's code, whose imports are rewritten."""
    fake_model: bool = False
    """Start the toy model and point the suite's base-URL variables at it."""


_TS = "llmplex.compat.util_llm"
_WI = "llmplex.compat.weakincentives"
_AR = "llmplex.compat.agent_runtime"
_TS_RENAMES = {
    "src.utils.llm_adapters.openai": f"{_TS}.adapter",
    "src.utils.llm_adapters.base": _TS,
    "src.utils.llm_adapters": _TS,
    "src.utils.llm_errors": _TS,
    "src.utils.llm": _TS,
}
_WI_RENAMES = {
    "weakincentives.adapters.openai": f"{_WI}.openai",
    "weakincentives.adapters.litellm": f"{_WI}.litellm",
    "weakincentives.adapters.throttle": f"{_WI}.throttle",
    "weakincentives.adapters.shared": _WI,
    "weakincentives.adapters.core": _WI,
    "weakincentives.adapters.config": _WI,
    "weakincentives.adapters._names": _WI,
    "weakincentives.adapters": _WI,
    # weakincentives' own engine internals (its inner loop, tool executor, response parser): not the adapter
    # API, so the tests that import them keep using the weakincentives package's own (see the fidelity page)
    **{
        f"weakincentives.adapters.{name}": f"weakincentives.adapters.{name}"
        for name in (
            "inner_loop",
            "tool_executor",
            "response_parser",
            "utilities",
            "_tool_messages",
            "_provider_protocols",
            "provider_response",
            "rendering",
            "deadline_utils",
            "token_usage",
            "tool_spec",
            "claude_agent_sdk",
        )
    },
}
_KEY_ENV = {"OPENAI_API_KEY": "sk-compat-suites-fake", "LITELLM_API_KEY": "sk-compat-suites-fake"}

SUITES: tuple[Suite, ...] = (
    Suite(
        name="Thing-Sandbox util_llm unit",
        checkout="Thing-Sandbox",
        root=".",
        tests=(
            "tests/unit/test_llm.py",
            "tests/unit/test_llm_adapter_base.py",
            "tests/unit/test_llm_adapter_openai.py",
        ),
        renames=_TS_RENAMES,
        remove=("src/utils/llm.py", "src/utils/llm_errors.py", "src/utils/llm_adapters"),
    ),
    Suite(
        name="Thing-Sandbox util_llm integration",
        checkout="Thing-Sandbox",
        root=".",
        tests=("tests/integration/test_llm_adapter_openai_live.py", "tests/integration/test_llm_integration.py"),
        renames=_TS_RENAMES,
        remove=("src/utils/llm.py", "src/utils/llm_errors.py", "src/utils/llm_adapters"),
        env=_KEY_ENV,
        fake_model=True,
    ),
    Suite(
        name="weakincentives adapters",
        checkout="weakincentives",
        root=".",
        tests=tuple(
            f"tests/adapters/test_{name}.py"
            for name in ("openai_adapter", "litellm_adapter", "config", "throttling", "deadline_enforcement")
        ),
        renames=_WI_RENAMES,
        pythonpath=("src", "."),
        rewrite=("tests",),
    ),
    Suite(
        name="weakincentives integration",
        checkout="weakincentives",
        root=".",
        tests=(
            "integration-tests/test_openai_adapter_integration.py",
            "integration-tests/test_litellm_adapter_integration.py",
        ),
        renames=_WI_RENAMES,
        pythonpath=("src", "."),
        rewrite=("tests", "integration-tests"),
        env={**_KEY_ENV, "OPENAI_TEST_MODEL": "gpt-4o-mini", "LITELLM_TEST_MODEL": "openai/gpt-4o-mini"},
        fake_model=True,
    ),
    Suite(
        name="chatbot_todo agent runtime",
        checkout="chatbot_todo",
        root="backend",
        tests=("tests/llm_runtime",),
        renames={
            "src.llm_runtime.adapter": _AR,
            "src.llm_runtime.schemas": _AR,
            "src.llm_runtime.errors": _AR,
        },
        remove=("src/llm_runtime/adapter.py", "src/llm_runtime/schemas.py", "src/llm_runtime/errors.py"),
    ),
)


def rewrite_source(text: str, renames: Mapping[str, str]) -> str:
    """``text`` with every dotted name of ``renames`` (a whole name or its prefix) replaced, longest first."""
    if not renames:
        return text
    names = sorted(renames, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in names) + r")(?!\w)")
    return pattern.sub(lambda match: renames[match.group(1)], text)


def remove_paths(root: Path, remove: Sequence[str]) -> None:
    """Delete the files and folders ``remove`` names under ``root`` (those missing are skipped)."""
    for relative in remove:
        target = root / relative
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def rewrite_tree(root: Path, renames: Mapping[str, str], remove: Sequence[str] = ()) -> list[Path]:
    """Delete ``remove`` under ``root`` and rewrite every ``.py`` file below it; the rewritten files."""
    remove_paths(root, remove)
    changed = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        new = rewrite_source(text, renames)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


@dataclass
class Outcome:
    """One run of one suite: each test id's result (``passed``, ``failure``, ``error``, ``skipped``) and reason."""

    results: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    def passed(self) -> set[str]:
        """The ids of the tests that passed."""
        return {test for test, result in self.results.items() if result == "passed"}


def _read_junit(path: Path) -> Outcome:
    outcome = Outcome()
    if not path.exists():
        return outcome
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        result = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                result = child.tag
                message = (child.get("message") or child.text or "").strip().splitlines()
                outcome.reasons[test] = message[0][:300] if message else ""
                break
        outcome.results[test] = result
    return outcome


@contextmanager
def _model_env(suite: Suite) -> Iterator[dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLMPLEX_", "OPENAI_", "LITELLM_"))}
    env.update(suite.env)
    if not suite.fake_model:
        yield env
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from compat_fake_model import FakeModel

    with FakeModel() as model:
        env.update({"OPENAI_BASE_URL": model.url, "LITELLM_BASE_URL": model.url})
        yield env


def run_suite(suite: Suite, checkout: Path, *, original: bool, python: str = sys.executable) -> Outcome:
    """Run ``suite`` in a copy of ``checkout``: untouched (``original``) or rewritten to ``llmplex.compat``."""
    with tempfile.TemporaryDirectory(prefix="compat-suite-") as scratch:
        copy = Path(scratch) / checkout.name
        shutil.copytree(checkout, copy, ignore=shutil.ignore_patterns(".git", "node_modules", "__pycache__", "*.png"))
        root = copy / suite.root
        if not original:
            for folder in suite.rewrite:
                rewrite_tree(root / folder, suite.renames)
            remove_paths(root, suite.remove)
        junit = Path(scratch) / "junit.xml"
        with _model_env(suite) as env:
            env["PYTHONPATH"] = os.pathsep.join(str(root / p) for p in suite.pythonpath)
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            # their per-test timeouts are seconds for a live model, and llmplex's first call pays its plugin's import
            quiet = ["-p", "no:timeout"] if suite.fake_model else []
            command = [
                python,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                *quiet,
                "-o",
                "addopts=",
                f"--junitxml={junit}",
                "--rootdir",
                str(root),
                *suite.tests,
            ]
            subprocess.run(
                command,
                cwd=root,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
                timeout=1800,
            )
        return _read_junit(junit)


def _report(suite: Suite, ours: Outcome, base: Outcome | None) -> list[str]:
    wanted = base.passed() if base is not None else set(ours.results)
    passing = ours.passed() & wanted
    lines = [f"## {suite.name}: {len(passing)}/{len(wanted)}", ""]
    for test in sorted(wanted - passing):
        lines.append(f"- `{test}` ({ours.results.get(test, 'not run')}): {ours.reasons.get(test, '')}")
    return [*lines, ""]


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; exit status 0 when every suite ran (failing tests are figures, not errors)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "--snapshots",
        default=os.environ.get("LLMPLEX_COMPAT_SNAPSHOTS"),
        help="the folder holding the checkouts (Thing-Sandbox/, weakincentives/, chatbot_todo/)",
    )
    parser.add_argument("--suite", action="append", help="run only suites whose name contains this (repeatable)")
    parser.add_argument("--originals", action="store_true", help="also run the untouched checkouts (the baseline)")
    parser.add_argument("--report", help="write the figures and the failing tests as markdown to this file")
    args = parser.parse_args(argv)
    if not args.snapshots or not Path(args.snapshots).is_dir():
        parser.error("--snapshots (or LLMPLEX_COMPAT_SNAPSHOTS) must name the folder holding the checkouts")
    snapshots = Path(args.snapshots)
    lines: list[str] = []
    totals = [0, 0]
    for suite in SUITES:
        if args.suite and not any(part.lower() in suite.name.lower() for part in args.suite):
            continue
        checkout = snapshots / suite.checkout
        if not checkout.is_dir():
            print(f"{suite.name}: no checkout at {checkout}", file=sys.stderr)
            return 2
        base = run_suite(suite, checkout, original=True) if args.originals else None
        ours = run_suite(suite, checkout, original=False)
        section = _report(suite, ours, base)
        wanted = base.passed() if base is not None else set(ours.results)
        totals[0] += len(ours.passed() & wanted)
        totals[1] += len(wanted)
        print(section[0].removeprefix("## "), flush=True)
        lines += section
    summary = f"all suites: {totals[0]}/{totals[1]}"
    print(summary)
    if args.report:
        Path(args.report).write_text("\n".join([f"# {summary}", "", *lines]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
