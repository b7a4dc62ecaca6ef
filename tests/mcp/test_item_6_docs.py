"""The "Tools from MCP servers" page: in the nav, its example on the local model runs, and it states the rules."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.docs.markdown import ROOT
from tests.docs.test_item_23_runnable_snippets import answers, python_blocks, run_page  # noqa: F401 - a fixture

PAGE = ROOT / "docs" / "concepts" / "mcp.md"


def test_item_6_the_page_is_in_the_nav() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("!!python", "#"))["nav"]
    concepts = next(entry["Concepts"] for entry in nav if isinstance(entry, dict) and "Concepts" in entry)
    assert {"Tools from MCP servers": "concepts/mcp.md"} in concepts


def test_item_6_the_example_on_the_local_model_runs(
    answers: deque[dict[str, Any]],  # noqa: F811 - the docs tests' fixture: models swapped to the scripted mock
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = python_blocks(PAGE)[0]
    assert "llamacpp:qwen2.5-coder-1.5b" in first.code and "mcp_server_time" in first.code
    assert run_page(PAGE, answers) == []
    assert "21:00 in Tokyo" in capsys.readouterr().out  # the scripted answer, after the real server's tool ran


@pytest.mark.parametrize(
    "rule",
    [
        "[mcp.servers.time]",
        "headers = {",
        "env = {",
        "SecretStr",
        "`<server>__<tool>`",
        "## Lifecycle",
        "interpreter exit",
        "process group",
        "LLMToolSourceError",
        "## Deadlines and errors",
        "notifications/cancelled",
        "structuredContent",
        "llmplex mcp list",
        "--check",
        "--mcp",
    ],
)
def test_item_6_the_page_states_the_rules(rule: str) -> None:
    assert rule in PAGE.read_text(encoding="utf-8")


def test_item_6_the_page_exists() -> None:
    assert Path(PAGE).is_file()
