"""Issue 32 item 6: docs that say only what is tested (the recipes are read by tests/agents/real_cli.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.agents.real_cli import DOCS, recipe

GATEWAY = Path(__file__).resolve().parents[2] / "docs" / "gateway"


def test_item_6_the_coding_agents_page_has_both_recipes() -> None:
    config = tomllib.loads(recipe("codex-config"))
    provider = config["model_providers"][config["model_provider"]]
    assert (provider["wire_api"], provider["base_url"]) == ("responses", "http://127.0.0.1:4000/v1")
    assert "$ export ANTHROPIC_BASE_URL=http://127.0.0.1:4000" in recipe("claude-env")
    text = DOCS.read_text(encoding="utf-8")
    assert "TIMINGS" not in text and "tests/agents/test_item_4_real_agents.py" in text


def test_item_6_the_quickstart_no_longer_says_agents_just_work() -> None:
    quickstart = (GATEWAY / "quickstart.md").read_text(encoding="utf-8")
    assert "Coding agents that take" not in quickstart and "(agents.md)" in quickstart


def test_item_6_keys_md_says_an_unpriced_model_under_a_usd_budget_is_refused() -> None:
    keys = (GATEWAY / "keys.md").read_text(encoding="utf-8")
    assert "counts $0 toward a budget" not in keys
    assert "refused with a 400 before anything is sent" in keys and "unpriced_input_usd_per_mtok" in keys
