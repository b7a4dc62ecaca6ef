"""Issue 25 item 6: the "Call log" docs page — in the nav, its schema complete, its dashboard screenshot taken
by the browser here (``LLMPLEX_UPDATE_SCREENSHOTS=1`` writes it into docs/ after a change of the page)."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path
from typing import Any

from llmplex.dashboard.app import create_dashboard
from llmplex.store import calls
from tests.dashboard.support import running, seed_bulk, seed_known
from tests.dashboard.test_item_5_browser import visit

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "concepts" / "call-log.md"
SCREENSHOT = ROOT / "docs" / "images" / "call-log-dashboard.png"
UPDATE = os.environ.get("LLMPLEX_UPDATE_SCREENSHOTS") == "1"  # read at import: each test runs without LLMPLEX_*


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_item_6_the_screenshot_is_taken_by_the_browser_over_a_seeded_log(browser: Any, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'screenshot.db'}"
    seed_bulk(url, 3000, unit="0.005")
    seed_known(url)
    with running(create_dashboard(url)) as server, visit(browser) as seen:
        page = seen.open(server.url + "/")
        page.locator("#rows tr", has_text="Lisbon is sunny").click()
        page.wait_for_selector("#conversation:not([hidden]) .tool-call")
        page.evaluate("window.scrollTo(0, 0)")
        shot = page.screenshot(full_page=True)
        assert seen.errors == []
    width, height = _png_size(shot)
    assert width == 1280 and height > 900  # charts, table and the conversation below them
    if UPDATE:
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        SCREENSHOT.write_bytes(shot)
    assert SCREENSHOT.is_file(), f"{SCREENSHOT} is missing: run this test with LLMPLEX_UPDATE_SCREENSHOTS=1"
    committed = _png_size(SCREENSHOT.read_bytes())
    assert committed[0] == width and abs(committed[1] - height) < 400, (committed, (width, height))


def test_item_6_the_call_log_page_is_in_the_nav_and_shows_the_screenshot() -> None:
    text = PAGE.read_text()
    nav = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^\s+- Call log: concepts/call-log\.md$", nav, re.MULTILINE)
    assert "](../images/call-log-dashboard.png)" in text
    assert "llmplex logs --serve" in text and "/ui" in text
    for topic in ("## Turning it on and off", "## What is never written", "## The schema", "## The dashboard"):
        assert topic in text, topic


def test_item_6_the_schema_table_names_every_column_of_calls() -> None:
    text = PAGE.read_text()
    schema = text.split("## The schema", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"`([a-z_]+)`", schema))
    missing = [column.name for column in calls.columns if column.name not in documented]
    assert not missing, f"columns of calls missing from {PAGE.name}'s schema: {missing}"
