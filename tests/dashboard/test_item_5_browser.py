"""Issue 25 item 5: the dashboard in a real browser (Debian's chromium, driven by Playwright) over a seeded log."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import llmplex
from llmplex.gateway.app import create_app
from llmplex.gateway.keys.access import MasterKeyAuthenticator
from tests.dashboard.support import HOSTILE_PROMPT, KNOWN, SECRETS, Server, running

MASTER_KEY = "sk-gateway-master-browser-0123456789"


class Visit:
    """One browser page with everything it saw: console errors, page errors, requests, response bodies."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.bodies: list[tuple[str, int, str]] = []
        page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("response", self._response)

    def _response(self, response: Any) -> None:
        try:
            body = response.body().decode("utf-8", "replace")
        except Exception:  # a redirect has no body
            body = ""
        self.bodies.append((response.url, response.status, body + str(response.headers)))

    def open(self, url: str) -> Any:
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready=true]", timeout=15_000)
        return self.page

    def rows(self) -> list[str]:
        return [str(row) for row in self.page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.id)")]


@contextmanager
def visit(browser: Any) -> Iterator[Visit]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield Visit(context.new_page())
    finally:
        context.close()


def _bars(page: Any, chart: str) -> dict[str, tuple[str, float]]:
    """The bars of a chart: label -> (the figure it carries, its drawn width or height)."""
    found = page.locator(f"#{chart} rect.bar").evaluate_all(
        "bars => bars.map(b => [b.dataset.label, b.dataset.value, b.getBBox().width, b.getBBox().height])"
    )
    vertical = chart in ("chart-spend", "chart-calls")
    return {label: (value, height if vertical else width) for label, value, width, height in found}


def test_item_5_the_page_loads_with_no_console_error_and_nothing_from_the_network(
    browser: Any, dashboard: Server
) -> None:
    with visit(browser) as seen:
        page = seen.open(dashboard.url + "/")
        assert page.title() == "llmplex call log"
        assert len(seen.rows()) == int(page.locator("#page-info").inner_text().split(" of ")[1])
        page.locator("#rows tr").first.click()
        page.wait_for_selector("#conversation:not([hidden]) .message")
        assert seen.errors == []
        assert seen.requests and all(url.startswith(dashboard.url + "/") for url in seen.requests), seen.requests
        assert all(status == 200 for _, status, _ in seen.bodies), seen.bodies
        assert page.evaluate("document.body.dataset.pwned") is None  # a logged <script> is shown, never run
        assert HOSTILE_PROMPT[:40] in page.locator("#rows").inner_text()


def test_item_5_the_charts_render_the_seeded_figures(browser: Any, dashboard: Server) -> None:
    with visit(browser) as seen:
        page = seen.open(dashboard.url + "/")
        by_model = _bars(page, "chart-model")
        for model, cost in KNOWN.items():
            assert by_model[model][0] == f"{cost.normalize():f}", model
        gpt, claude, gemini = (by_model[m][1] for m in KNOWN)
        assert abs(gpt / claude - 3.75) < 0.02 and abs(claude / gemini - 4) < 0.02  # drawn to scale
        model_text = page.locator("#chart-model").inner_text()
        assert "$3.75" in model_text and "$1.00" in model_text and "$0.2500" in model_text
        spend = _bars(page, "chart-spend")
        assert {day: value for day, (value, _) in spend.items() if day.startswith("2026-11-0")} == {
            "2026-11-01": "3.75",
            "2026-11-02": "1",
            "2026-11-03": "0.25",
        }
        assert abs(spend["2026-11-01"][1] / spend["2026-11-03"][1] - 15) < 0.1
        calls = _bars(page, "chart-calls")
        assert [calls[d][0] for d in ("2026-11-01", "2026-11-02", "2026-11-03")] == ["3", "2", "3"]
        assert _bars(page, "chart-provider")["openai"][0] == "3.75"
        assert page.locator("#chart-key").is_visible() and _bars(page, "chart-key") == {"team-a": ("1", gpt)}
        assert page.locator("[data-total=spend] dd").inner_text() == "$5.00"
        assert page.locator("[data-total=failed] dd").inner_text() == "1"
        assert seen.errors == []


def _search(page: Any, **fields: str) -> str:
    for name, value in fields.items():
        if name == "status":
            page.select_option("#search select[name=status]", value)
        else:
            page.fill(f"#search input[name={name}]", value)
    before = page.locator("#rows").get_attribute("data-render")
    page.click("#search button[type=submit]")
    page.wait_for_function("n => document.querySelector('#rows').dataset.render !== n", arg=before)
    return str(page.locator("#page-info").inner_text()).replace("\N{EN DASH}", "-")  # "1-7 of 7"


def test_item_5_search_narrows_the_table(browser: Any, dashboard: Server) -> None:
    with visit(browser) as seen:
        page = seen.open(dashboard.url + "/")
        everything = len(seen.rows())
        assert _search(page, q="pelicans") == "1-7 of 7" and len(seen.rows()) == 7 < everything
        assert all("pelicans" in text for text in page.locator("#rows tr td:nth-child(4)").all_inner_texts())
        assert _search(page, q="Lisbon") == "1-2 of 2"  # the tool round trip's two rounds
        assert _search(page, q="Lisbon weather") == "1-1 of 1"  # every word, in the first round only
        assert _search(page, q="", status="error") == "1-1 of 1"
        assert "LLMRateLimitError" in page.locator("#rows").inner_text()
        assert _search(page, status="", model="openai:gpt-4o").endswith(" of 3")
        assert _search(page, model="", q="nothing-like-this-was-said").startswith("0-0 of 0")
        assert seen.rows() == [] and seen.errors == []


def test_item_5_the_conversation_view_shows_tool_calls_and_results(browser: Any, dashboard: Server) -> None:
    with visit(browser) as seen:
        page = seen.open(dashboard.url + "/")
        _search(page, q="Lisbon")
        assert "[tool call: weather]" in page.locator("#rows tr").last.inner_text()
        page.locator("#rows tr", has_text="Lisbon is sunny").click()
        page.wait_for_selector("#conversation:not([hidden]) .message.tool")
        roles = page.locator("#messages > li .role").all_inner_texts()
        assert [r.lower() for r in roles] == ["user", "assistant", "tool result of weather (call_weather_1)", "answer"]
        assert page.locator(".tool-call").inner_text() == 'tool call call_weather_1: weather({"city": "Lisbon"})'
        assert "sunny, 21 degrees in Lisbon" in page.locator("#messages .message.tool").inner_text()
        assert "Lisbon is sunny, 21 degrees." in page.locator("#messages > li").last.inner_text()
        turns = page.locator("#turns a")
        assert turns.count() == 2
        turns.first.click()  # the round that asked for the tool: its answer is the tool call
        page.wait_for_function("() => document.querySelectorAll('#messages > li').length === 2")
        assert "weather" in page.locator("#messages > li").last.inner_text()
        assert re.fullmatch(r"\d+", page.locator("#call-id").inner_text())
        other = page.locator("#rows a").last  # from the keyboard: the id is a link
        other.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("id => document.querySelector('#call-id').textContent === id", arg=other.inner_text())
        assert seen.errors == []


def test_item_5_no_secret_appears_in_any_page_or_response(browser: Any, dashboard: Server) -> None:
    with visit(browser) as seen:
        page = seen.open(dashboard.url + "/")
        pages = [page.content()]
        for call_id in seen.rows():
            page.evaluate("id => { location.hash = 'call-' + id }", call_id)
            page.wait_for_function("id => document.querySelector('#call-id').textContent === id", arg=call_id)
            pages.append(page.content())
        _search(page, q="remember my key")
        pages.append(page.content())
        assert len(seen.bodies) > len(pages)
        for url, _, body in seen.bodies:
            assert not [s for s in SECRETS if s in body], url
        for html in pages:
            assert not [s for s in SECRETS if s in html]
        assert "***" in "".join(body for url, _, body in seen.bodies if "/api/calls/" in url)  # masked, not dropped
        assert page.evaluate("document.body.dataset.pwned") is None and seen.errors == []


def test_item_5_the_gateways_ui_refuses_a_request_without_the_master_key(browser: Any, known_log: str) -> None:
    client = llmplex.Client({"log": {"database": known_log}})
    app = create_app(client, MasterKeyAuthenticator(MASTER_KEY), dashboard_key=MASTER_KEY)
    with running(app) as gateway, visit(browser) as seen:
        page = seen.page
        refused = page.goto(gateway.url + "/ui/")
        assert refused is not None and refused.status == 401
        assert page.locator("input[type=password][name=key]").is_visible()
        assert "3.75" not in page.content() and "pelicans" not in page.content()
        api = page.request.get(gateway.url + "/ui/api/summary")
        assert api.status == 401 and "3.75" not in api.text()
        page.fill("input[name=key]", "sk-not-the-master-key-000000")
        page.click("button[type=submit]")
        page.wait_for_selector("p.error:has-text('not the master key')")
        assert page.locator("input[name=key]").is_visible()
        page.fill("input[name=key]", MASTER_KEY)
        page.click("button[type=submit]")
        page.wait_for_selector("body[data-ready=true]", timeout=15_000)
        assert page.url == gateway.url + "/ui/"
        assert page.locator("[data-total=spend] dd").inner_text() == "$5.00"
        assert page.request.get(gateway.url + "/ui/api/summary").status == 200  # the session cookie
        for url, _, body in seen.bodies:
            assert MASTER_KEY not in body and not [s for s in SECRETS if s in body], url
        assert not [e for e in seen.errors if "401" not in e]  # the refused form posts are the only errors
