"""Issue 23 item 6: a fidelity page per system, whose import lines work as written."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs" / "compat"
PAGES = {
    "llm_connect.md": "llmplex.compat.llm_connect",
    "agent_runtime.md": "llmplex.compat.agent_runtime",
    "weakincentives.md": "llmplex.compat.weakincentives",
    "util_llm.md": "llmplex.compat.util_llm",
}
_IMPORT = re.compile(r"`from (llmplex\.compat\.\w+) import ([^`]+)`")


@pytest.mark.parametrize("page", sorted(PAGES))
def test_item_6_each_system_page_has_a_fidelity_section_with_its_three_parts(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    fidelity = text.split("## Fidelity", 1)[1].split("\n## ", 1)[0]
    for part in ("**Covered.**", "**Deliberately not covered.**", "**Moving a project over**"):
        assert part in fidelity, (page, part)
    assert "tests/compat/test_item_" in fidelity  # says where it is tested


@pytest.mark.parametrize("page", sorted(PAGES))
def test_item_6_every_import_line_on_the_page_names_what_the_module_has(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    lines = _IMPORT.findall(text)
    assert lines, f"{page} shows no import line"
    for module_name, names in lines:
        assert module_name == PAGES[page]
        module = importlib.import_module(module_name)
        for name in (n.strip() for n in names.split(",")):
            if name and name != "...":
                assert hasattr(module, name), f"{page}: {module_name} has no {name}"


def test_item_6_the_weakincentives_page_says_which_package_versions_are_tested() -> None:
    text = (DOCS / "weakincentives.md").read_text(encoding="utf-8")
    assert "0.18.0 and 0.18.1" in text and "tox -e compat-weakincentives" in text
    tox = (Path(__file__).parents[2] / "tox.ini").read_text(encoding="utf-8")
    assert "weakincentives>=0.18,<0.19" in tox and "compat-weakincentives" in tox.split("env_list", 1)[1].split("\n")[0]


def test_item_6_import_llmplex_loads_no_compat_module() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, llmplex; print([m for m in sys.modules if 'compat' in m])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert loaded == "[]"
