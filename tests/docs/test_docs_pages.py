"""The guides stay true to the code: nav, events, retry defaults, exit codes, providers, env vars.

Their Python examples are run by test_item_23_runnable_snippets."""

from __future__ import annotations

import dataclasses
import importlib
import logging
import re
import tomllib
from pathlib import Path

import pytest
import yaml

from llmplex import errors, events
from llmplex.cli.exit_codes import _CODES, exit_code_for
from llmplex.provider import ProviderSettings
from llmplex.reliability.throttle import ThrottlePolicy
from tests.docs.markdown import section
from tests.docs.test_docs_coverage import DOCS, page, table_rows

ROOT = DOCS.parent
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "examples" not in p.parts)
EVENT_CLASSES = [name for name in events.__all__ if name != "Event"]
PLUGIN_PYPROJECTS = sorted((ROOT / "plugins").glob("*/pyproject.toml"))


def nav_pages(node: object) -> set[str]:
    if isinstance(node, str):
        return {node}
    if isinstance(node, list):
        return set().union(*(nav_pages(item) for item in node)) if node else set()
    if isinstance(node, dict):
        return set().union(*(nav_pages(value) for value in node.values()))
    return set()


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    missing = sorted(set(PAGES) - nav_pages(config["nav"]))
    assert not missing, f"add {missing} to nav in mkdocs.yml"


@pytest.mark.parametrize("name", EVENT_CLASSES)
def test_every_event_is_in_the_reliability_guide_with_its_log_message_and_level(name: str) -> None:
    rows = table_rows(page("concepts/reliability.md"))
    assert name in rows, f"add a row for `{name}` to the events table of docs/concepts/reliability.md"
    kind = getattr(events, name)
    log_message, level = rows[name][0], rows[name][1]
    assert log_message == f"`{kind.log_name}`"
    assert level == logging.getLevelName(kind.log_level)
    documented = set(re.findall(r"`(\w+)`", rows[name][3]))
    own = {f.name for f in dataclasses.fields(kind)} - {f.name for f in dataclasses.fields(events.Event)}
    assert own <= documented, f"document the fields {sorted(own - documented)} of {name}"


def test_the_retry_defaults_in_the_guide_are_the_policy_defaults() -> None:
    rows = table_rows(page("concepts/reliability.md"))
    for item in dataclasses.fields(ThrottlePolicy):
        assert float(rows[item.name][0]) == item.default, f"ThrottlePolicy.{item.name} defaults to {item.default}"


def test_the_exit_status_table_matches_the_cli() -> None:
    text = page("reference/configuration.md")
    section = text[text.index("### Exit status") :]
    documented: dict[str, int] = {}
    for status, names in re.findall(r"^\| (\d+) \| (.*) \|$", section, re.M):
        for name in re.findall(r"`(LLM\w+)`", names):
            documented[name] = int(status)
    missing = sorted({kind.__name__ for kind, _ in _CODES} - set(documented))
    assert not missing, f"give {missing} their exit status in docs/reference/configuration.md"
    for name, status in documented.items():
        assert exit_code_for(getattr(errors, name)("x")) == status, f"{name} does not exit with {status}"


@pytest.mark.parametrize("pyproject", PLUGIN_PYPROJECTS, ids=lambda p: p.parent.name)
def test_every_in_tree_provider_has_a_page_in_the_nav_and_the_index(pyproject: Path) -> None:
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    for prefix in data["project"].get("entry-points", {}).get("llmplex.providers", {}):
        assert (DOCS / "providers" / f"{prefix}.md").is_file(), f"write docs/providers/{prefix}.md"
        assert f"[`{prefix}`]({prefix}.md)" in page("providers/index.md"), f"list {prefix} in docs/providers/index.md"


def test_every_provider_environment_variable_is_in_the_reference() -> None:
    text = page("reference/configuration.md")
    for settings_file in sorted((ROOT / "plugins").glob("*/src/*/settings.py")):
        module = importlib.import_module(f"{settings_file.parent.name}.settings")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, ProviderSettings) and value is not ProviderSettings:
                for names in value.env_vars.values():
                    for name in names:
                        assert f"`{name}`" in text, f"list {name} ({value.__name__}) in docs/reference/configuration.md"


@pytest.mark.parametrize("relative", PAGES)
def test_snippet_includes_are_intact(relative: str) -> None:
    """A formatter that reads ``--8<-- "file"`` as Python turns it into ``--8 < --"file"``, which includes nothing."""
    for line in page(relative).splitlines():
        if re.match(r"\s*--8\s*<\s*--", line):
            match = re.fullmatch(r'--8<-- "([^":]+)(?::([\w-]+))?"', line.strip())
            assert match, (
                f"docs/{relative}: broken snippet include {line.strip()!r}; wrap its block in <!-- fmt: off -->"
            )
            assert (ROOT / match.group(1)).is_file(), f"docs/{relative}: {match.group(1)} does not exist"
            if match.group(2):
                section(ROOT / match.group(1), match.group(2))  # the section exists
