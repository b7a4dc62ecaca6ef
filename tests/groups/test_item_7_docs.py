"""Issue 33 item 7: the "Model groups" page covers the strategies, cooldowns, hedging and its cost, sharing across
replicas, and the benchmark's figures beside litellm's Router; it is in the site's navigation."""

from __future__ import annotations

import re
from pathlib import Path

from llmplex.config.groups import STRATEGIES

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "concepts" / "groups.md"


def test_item_7_the_page_is_in_the_navigation_and_has_every_section() -> None:
    assert "concepts/groups.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    for wanted in ("Strategies", "cooldowns", "Hedged requests", "replicas", "Router"):
        assert any(wanted in heading for heading in headings), f"no section on {wanted!r}: {headings}"


def test_item_7_every_strategy_the_config_accepts_is_documented() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for strategy in STRATEGIES:
        assert f"`{strategy}`" in text, f"docs/concepts/groups.md does not describe the {strategy!r} strategy"


def test_item_7_the_benchmark_table_puts_llmplex_beside_the_router() -> None:
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    assert any(row.startswith("| litellm Router") for row in rows)
    assert any(row.startswith("| llmplex") for row in rows)


def test_item_7_every_group_setting_is_documented() -> None:
    from llmplex.config.groups import GroupConfig

    text = PAGE.read_text(encoding="utf-8")
    for field in GroupConfig.model_fields:
        assert f"{field} =" in text or f"`{field}`" in text, f"docs/concepts/groups.md does not describe {field!r}"
