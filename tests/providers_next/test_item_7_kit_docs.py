"""Issue 26 item 7, for third-party plugin authors working from the docs alone: the names the kit's docstrings
point to are exported, ``base_path`` is in the declarations table, the ``llmplex[testing]`` install line is
given, and whether ``settings`` may hold a ``base_url`` beside ``server_settings`` is said — and holds."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import llmplex.testing
from llmplex.client import Client
from llmplex.testing import ERROR_KINDS, OPTION_NAMES, HTTPConformanceTests, Observed

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins"


def test_item_7_error_kinds_and_option_names_are_exported() -> None:
    assert {"ERROR_KINDS", "OPTION_NAMES"} <= set(llmplex.testing.__all__)
    assert "timeout" in ERROR_KINDS and "rate_limit" in ERROR_KINDS
    assert "max_tokens" in OPTION_NAMES and "temperature" in OPTION_NAMES
    for name in ("ERROR_KINDS", "OPTION_NAMES"):
        assert f"`{name}`" in (DOCS / "conformance.md").read_text(encoding="utf-8")


def _declarations() -> dict[str, str]:
    text = (DOCS / "conformance.md").read_text(encoding="utf-8")
    table = text.split("## Declarations", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2:
            for name in re.findall(r"`(\w+)`", cells[0]):
                rows[name] = cells[1]
    return rows


def test_item_7_base_path_and_the_settings_rule_are_in_the_declarations_table() -> None:
    rows = _declarations()
    assert "base_path" in rows and "/v1" in rows["base_path"] and "server_settings" in rows["base_path"]
    assert "base_url" in rows["settings"] and "server's wins" in rows["settings"]


def test_item_7_the_install_line_for_outside_authors_is_in_the_docs() -> None:
    for page in ("conformance.md", "writing.md"):
        text = (DOCS / page).read_text(encoding="utf-8")
        assert 'test = ["llmplex[testing]"]' in text and "pip install -e '.[test]'" in text, page
    example = (DOCS.parent / "examples" / "llmplex-echo" / "pyproject.toml").read_text(encoding="utf-8")
    assert 'test = ["llmplex[testing]"]' in example  # the line the docs show is the one the example uses


class _Kit(HTTPConformanceTests):
    prefix = "mock"
    model = "echo"
    settings: Any = {"base_url": "http://127.0.0.1:9/not-the-server", "default_model": "echo"}
    base_path = "/v1"


class _Server:
    url = "http://127.0.0.1:12345"


def test_item_7_a_base_url_in_settings_is_allowed_and_the_servers_wins() -> None:
    build = HTTPConformanceTests.__dict__["llm"]._get_wrapped_function()
    llm: Client = build(_Kit(), Observed(), _Server())
    table = llm.config.providers["mock"]
    assert table["base_url"] == "http://127.0.0.1:12345/v1"  # server_settings over settings
    assert table["default_model"] == "echo"  # the rest of settings is kept
