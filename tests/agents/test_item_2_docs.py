"""Issue 32 item 2: the gateway page's table names every request field of the three APIs under its kind."""

from __future__ import annotations

import re
from pathlib import Path

from llmplex.gateway.apis.fields import API_FIELDS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "gateway" / "index.md"
COLUMNS = ("carried", "privacy", "hint", "meaning")
ROWS = {"messages": "/v1/messages", "chat.completions": "/v1/chat/completions", "responses": "/v1/responses"}


def test_item_2_the_gateway_page_lists_every_field_under_its_kind() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for api, table in API_FIELDS.items():
        row = next(line for line in text.splitlines() if line.startswith("|") and f"(`{ROWS[api]}`)" in line)
        cells = [cell.strip() for cell in row.strip("|").split("|")][1:]
        listed = {kind: set(re.findall(r"`([a-z_]+)`", cell)) for kind, cell in zip(COLUMNS, cells, strict=True)}
        for field, kind in table.items():
            assert field in listed[kind], f"{api}: {field} should be listed as {kind}"
        assert set().union(*listed.values()) == set(table), f"{api}: the table lists fields the gateway does not know"
