"""The docs cover the contract: every hookspec, every error class (with its retryability), every config key."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from llmplex import errors, hookspecs
from llmplex.config.schema import BudgetConfig, CacheConfig, Config, LimitsConfig, ThrottleConfig

DOCS = Path(__file__).resolve().parents[2] / "docs"
HOOKSPECS = sorted(name for name, obj in vars(hookspecs).items() if name.startswith("llmplex_") and callable(obj))
ERROR_CLASSES = sorted(errors.__all__)


def page(relative: str) -> str:
    return (DOCS / relative).read_text(encoding="utf-8")


def table_rows(text: str) -> dict[str, list[str]]:
    """First-column code name -> the other cells, for every markdown table row."""
    rows = {}
    for line in text.splitlines():
        match = re.match(r"^\|\s*`([^`]+)`\s*\|(.*)\|\s*$", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return rows


def taxonomy_tree(tree: str) -> dict[str, str | None]:
    """Class name -> the class it hangs under, read from the indentation of the tree drawing."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in tree.splitlines():
        match = re.search(r"(LLM\w+)", line)
        if not match:
            continue
        depth = match.start()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[match.group(1)] = stack[-1][1] if stack else None
        stack.append((depth, match.group(1)))
    return parents


def test_hookspecs_are_found() -> None:
    assert "llmplex_format" in HOOKSPECS
    assert all(hasattr(getattr(hookspecs, name), "llmplex_spec") for name in HOOKSPECS)


@pytest.mark.parametrize("hook", HOOKSPECS)
def test_every_hookspec_has_its_reference_entry(hook: str) -> None:
    text = page("reference/hooks.md")
    assert f"::: llmplex.hookspecs.{hook}\n" in text, f"add '::: llmplex.hookspecs.{hook}' to docs/reference/hooks.md"
    assert f"`{hook}`" in text, f"list `{hook}` in the table of docs/reference/hooks.md"


def test_the_hook_reference_names_no_hook_that_does_not_exist() -> None:
    named = set(re.findall(r"::: llmplex\.hookspecs\.(\w+)", page("reference/hooks.md")))
    assert named == set(HOOKSPECS)


@pytest.mark.parametrize("name", ERROR_CLASSES)
def test_every_error_class_is_in_the_error_reference_with_its_retryability(name: str) -> None:
    rows = table_rows(page("reference/errors.md"))
    assert name in rows, f"add a row for `{name}` to the table of docs/reference/errors.md"
    retryable, when = rows[name]
    cls = getattr(errors, name)
    assert inspect.isclass(cls)
    assert issubclass(cls, errors.LLMError)
    assert retryable == ("yes" if cls.retryable else "no"), f"{name}.retryable is {cls.retryable}"
    assert when, f"say when {name} is raised"
    parents = taxonomy_tree(page("reference/errors.md").split("```")[1])
    assert name in parents, f"put {name} in the taxonomy tree of docs/reference/errors.md"
    expected_parent = None if cls is errors.LLMError else cls.__bases__[0].__name__
    assert parents[name] == expected_parent, f"{name} derives from {expected_parent}, not {parents[name]}"


def test_the_error_reference_renders_the_module() -> None:
    assert "::: llmplex.errors\n" in page("reference/errors.md")


@pytest.mark.parametrize(
    ("model", "heading"),
    [
        (Config, "# Configuration reference"),
        (ThrottleConfig, "## `[throttle]`"),
        (BudgetConfig, "## `[budget]`"),
        (LimitsConfig, "## `[limits]`"),
        (CacheConfig, "## `[cache]`"),
    ],
)
def test_every_config_key_is_in_the_configuration_reference(model: type, heading: str) -> None:
    text = page("reference/configuration.md")
    section = text[text.index(heading) :]
    missing = [name for name in model.model_fields if f"`{name}`" not in section]
    assert not missing, f"document {missing} under {heading!r} in docs/reference/configuration.md"


def test_the_events_reference_renders_the_module() -> None:
    assert "::: llmplex.events\n" in page("reference/events.md")
