"""Issue 12 item 14 (last clause): the command a config error points to shows every plugin's settings."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.support.cli import rich_tables, run_llmplex

KEY = "sk-item14-0123456789abcdefghij"


def settings_rows(output: str, prefix: str) -> dict[str, str]:
    """Setting name -> its row's cells joined by " | ", from the settings table titled for ``prefix``."""
    rows = next(rows for title, rows in rich_tables(output) if f"settings of `{prefix}`" in title)
    return {name: " | ".join(cells) for name, cells in rows.items()}


def test_item_14_the_settings_hint_names_a_command_that_shows_names_types_env_vars_and_defaults(
    tmp_path: Path,
) -> None:
    (tmp_path / "llmplex.toml").write_text(
        '[providers.local]\nplugin = "openai"\nbase_ur = "http://127.0.0.1:8080/v1"\n', encoding="utf-8"
    )
    env = {"OPENAI_API_KEY": KEY}
    failed = run_llmplex("complete", "-m", "local:some-model", "hi", cwd=tmp_path, env=env)
    assert failed.returncode == 3, failed.stderr
    hint = re.search(r"`(llmplex providers[^`]*)`", failed.stderr)
    assert hint, failed.stderr
    shown = run_llmplex(*shlex.split(hint.group(1))[1:], cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    openai = settings_rows(shown.stdout, "openai")
    assert {"api_key", "base_url", "organization", "project", "timeout", "api"} <= set(openai), openai
    assert "OPENAI_API_KEY" in openai["api_key"] and "OPENAI_BASE_URL" in openai["base_url"]
    assert "string" in openai["base_url"] and "float" in openai["timeout"], "types speak TOML"
    assert '"responses"' in openai["api"] and '"chat"' in openai["api"], openai["api"]
    assert "***" in openai["api_key"] and "OPENAI_API_KEY" in openai["api_key"]
    assert KEY not in shown.stdout + shown.stderr, "the key itself is never shown"
    assert not re.search(r"SecretStr|NoneType|Optional|Literal", shown.stdout), "no Python type names"
    llamacpp = settings_rows(shown.stdout, "llamacpp")
    assert "32768" in llamacpp["n_ctx"] and "integer" in llamacpp["n_ctx"], "defaults are shown"
    local = settings_rows(shown.stdout, "local")  # the broken instance still shows what it accepts
    assert "base_url" in local and "OPENAI_API_KEY" not in local["api_key"], "env vars fill only openai:"
