"""Issue 25 item 2: `llmplex logs` reads the call log — last N, search, filters, --json, --cost."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from llmplex.cli.main import cli
from llmplex.store.database import default_url
from tests.calllog.support import all_rows, seed
from tests.support.cli import run_llmplex


def _llmplex(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def seeded() -> str:
    """Five calls over three days, two providers, one failure and one without a price."""
    url = default_url()
    seed(url, when=datetime(2026, 11, 1, 9), prompt="tell me about pelicans", answer="pelicans fish", cost="0.001")
    seed(url, when=datetime(2026, 11, 1, 10), prompt="and herons?", answer="herons wade", cost="0.002")
    seed(
        url, when=datetime(2026, 11, 2, 9), provider="anthropic", model="claude-sonnet-4-5",
        prompt="a haiku on rain", answer="drops on the tin roof", cost="0.0105", conversation_id="conv-rain",
    )  # fmt: skip
    seed(url, when=datetime(2026, 11, 2, 11), provider="anthropic", model="claude-sonnet-4-5", status="error")
    seed(url, when=datetime(2026, 11, 3, 8), provider="local", model="qwen", prompt="offline?", cost=None)
    return url


def _json_lines(result: Result) -> list[dict[str, object]]:
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_item_2_the_last_n_calls_oldest_to_newest(seeded: str) -> None:
    rows = _json_lines(_llmplex("logs", "-n", "2", "--json"))
    assert [r["provider"] for r in rows] == ["anthropic", "local"]
    assert len(_json_lines(_llmplex("logs", "-n", "10", "--json"))) == 5
    assert _json_lines(_llmplex("logs", "-n", "0", "--json")) == []
    assert _llmplex("logs", "-n", "-1").exit_code != 0


def test_item_2_json_names_fields_as_response_and_usage_do(seeded: str) -> None:
    rows = _json_lines(_llmplex("logs", "-n", "10", "--json"))
    first, unpriced = rows[0], rows[-1]
    assert first["text"] == "pelicans fish" and first["provider"] == "openai" and first["model"] == "gpt-4o-mini"
    assert first["finish_reason"] is None or isinstance(first["finish_reason"], str)
    usage = first["usage"]
    assert isinstance(usage, dict)
    assert {"input_tokens", "output_tokens", "total_tokens", "cached_tokens", "cache_write_tokens"} <= set(usage)
    assert {"reasoning_tokens", "cost_usd", "cost_note"} <= set(usage)
    assert usage["cost_usd"] == "0.001" and first["conversation_id"]
    assert unpriced["usage"]["cost_usd"] is None  # unknown is null, never 0  # type: ignore[index]
    assert rows[3]["status"] == "error" and rows[3]["error_type"] == "LLMServerError" and rows[3]["text"] is None


def test_item_2_full_text_search_and_filters(seeded: str) -> None:
    def prompts(*args: str) -> list[object]:
        return [r["messages"][-1]["content"] for r in _json_lines(_llmplex("logs", "-n", "50", "--json", *args))]  # type: ignore[index]

    assert prompts("-q", "pelicans") == ["tell me about pelicans"]
    assert prompts("-q", "wade") == ["and herons?"]  # answers are searched too
    assert prompts("-q", "tin roof") == ["a haiku on rain"]
    assert prompts("-m", "openai:gpt-4o-mini") == ["tell me about pelicans", "and herons?"]
    assert prompts("-m", "qwen") == ["offline?"]
    assert len(prompts("--provider", "anthropic")) == 2
    assert prompts("--cid", "conv-rain") == ["a haiku on rain"]
    assert prompts("--since", "2026-11-02", "--until", "2026-11-03") == ["a haiku on rain", "hello"]
    assert prompts("--since", "2026-11-03T00:00:00+00:00") == ["offline?"]
    assert prompts("--status", "error") == ["hello"]
    assert prompts("--provider", "anthropic", "--status", "ok", "-q", "rain") == ["a haiku on rain"]
    assert prompts("-q", "nothing-like-this") == []
    assert prompts("-q", "PELICANS") == ["tell me about pelicans"]


def test_item_2_cost_totals_by_model_day_and_provider(seeded: str) -> None:
    by_model = {r["model"]: r for r in _json_lines(_llmplex("logs", "--cost", "--json"))}
    assert by_model["openai:gpt-4o-mini"]["cost_usd"] == "0.003" and by_model["openai:gpt-4o-mini"]["calls"] == 2
    assert by_model["anthropic:claude-sonnet-4-5"]["cost_usd"] == "0.0105"
    assert by_model["local:qwen"]["cost_usd"] is None and by_model["local:qwen"]["unpriced_calls"] == 1
    by_day = _json_lines(_llmplex("logs", "--cost", "--by", "day", "--json"))
    assert [(r["day"], r["cost_usd"]) for r in by_day] == [
        ("2026-11-01", "0.003"), ("2026-11-02", "0.0105"), ("2026-11-03", None)
    ]  # fmt: skip
    providers = _json_lines(_llmplex("logs", "--cost", "--by", "provider", "--json"))
    by_provider = {r["provider"]: r["calls"] for r in providers}
    assert by_provider == {"openai": 2, "anthropic": 2, "local": 1}
    text = _llmplex("logs", "--cost").stdout
    assert "total: $0.0135 (1 calls without a known price not counted)" in text
    assert Decimal("0.0135") == Decimal("0.001") + Decimal("0.002") + Decimal("0.0105")


def test_item_2_plain_when_piped_and_a_table_on_a_terminal(seeded: str, monkeypatch: pytest.MonkeyPatch) -> None:
    piped = _llmplex("logs", "-n", "1").stdout
    assert piped.startswith("# 2026-11-03T08:00:00Z  local:qwen") and "cost: unknown" in piped
    assert "\x1b[" not in piped and "│" not in piped and "┃" not in piped
    monkeypatch.setattr("llmplex.cli.logs._is_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", "160")
    table = _llmplex("logs", "-n", "1").stdout
    assert "┃" in table or "│" in table
    assert "local:qwen" in table and "offline?" in table


def test_item_2_the_cli_logs_by_default_and_logs_off_on_path(tmp_path: Path) -> None:
    assert _llmplex("complete", "-m", "mock:echo", "logged by default").exit_code == 0
    assert [r["prompt_text"] for r in all_rows(default_url())] == ["logged by default"]
    assert _llmplex("logs", "path").stdout.strip() == str(tmp_path / "xdg-data" / "llmplex" / "logs.db")
    assert "off" in _llmplex("logs", "off").stdout
    _llmplex("complete", "-m", "mock:echo", "not logged")
    assert "on" in _llmplex("logs", "on").stdout
    _llmplex("complete", "-m", "mock:echo", "logged again")
    assert [r["prompt_text"] for r in all_rows(default_url())] == ["logged by default", "logged again"]
    config = tmp_path / "llmplex.toml"
    config.write_text("[log]\nenabled = false\n")
    _llmplex("complete", "-m", "mock:echo", "the config says no")
    assert len(all_rows(default_url())) == 2


def test_item_2_a_real_process_pipes_plain_text(tmp_path: Path) -> None:
    done = run_llmplex("complete", "-m", "mock:echo", "from a real process", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = run_llmplex("logs", "-n", "1", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "prompt (user): from a real process" in shown.stdout and "\x1b[" not in shown.stdout


def test_item_2_hostile_input_is_a_clear_error(seeded: str, tmp_path: Path) -> None:
    for search in ('unbalanced "quote', "NOT AND OR", "col:umn*", "-minus", "(", "'; DROP TABLE calls; --"):
        found = _llmplex("logs", "-q", search, "--json")  # words, never FTS5 syntax or SQL
        assert found.exit_code == 0 and found.stdout == "", (search, found.output)
    assert len(all_rows(seeded)) == 5
    bad_date = _llmplex("logs", "--since", "last tuesday")
    assert bad_date.exit_code != 0 and "is not a date" in bad_date.stderr
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"\x00garbage" * 500)
    (tmp_path / "llmplex.toml").write_text(f'[log]\ndatabase = "sqlite:///{corrupt}"\n')
    result = _llmplex("logs")
    assert result.exit_code != 0 and "cannot be read" in result.stderr and "Traceback" not in result.output


def test_item_2_an_empty_log_says_so(tmp_path: Path) -> None:
    result = _llmplex("logs")
    assert result.exit_code == 0 and "no calls logged yet" in result.stderr and result.stdout == ""


def test_item_2_every_log_setting_and_the_logs_command_are_documented() -> None:
    from llmplex.config.schema import LogConfig

    root = Path(__file__).resolve().parents[2]
    reference = (root / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    section = reference[reference.index("## `[log]`") :]
    assert not [name for name in LogConfig.model_fields if f"`{name}`" not in section]
    assert "`llmplex logs`" in reference
    assert "concepts/call-log.md" in (root / "mkdocs.yml").read_text(encoding="utf-8")
