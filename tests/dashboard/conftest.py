"""Fixtures of the dashboard tests: seeded call logs, a running dashboard, Debian's chromium under Playwright."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmplex.dashboard.app import create_dashboard
from tests.dashboard.support import Server, running, seed_bulk, seed_known

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BULK_CALLS = 100_000

for _module, _install in (("starlette", "pip install -e 'core[gateway]'"), ("playwright", "pip install playwright")):
    if importlib.util.find_spec(_module) is None:
        raise RuntimeError(f"the dashboard tests need {_module}: {_install}")


@pytest.fixture
def known_log(tmp_path: Path) -> str:
    """A call log with known figures, a hostile prompt, a tool round trip and secrets in reach (its URL)."""
    url = f"sqlite:///{tmp_path / 'known.db'}"
    seed_known(url)
    return url


@pytest.fixture
def dashboard(known_log: str) -> Iterator[Server]:
    """The dashboard over ``known_log`` on 127.0.0.1."""
    with running(create_dashboard(known_log)) as server:
        yield server


@pytest.fixture(scope="session")
def bulk_log(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A call log of 100,000 calls (written once per session)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('bulk') / 'bulk.db'}"
    seed_bulk(url, BULK_CALLS)
    return url


@pytest.fixture
def browser() -> Iterator[Any]:
    """Debian's chromium, headless, driven by Playwright (no browser download: the system's chromium).

    One per test: Playwright's sync API keeps an event loop running while it is open, which would make
    every later ``asyncio.run`` of the session fail."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run tools/ensure_services.sh (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()
