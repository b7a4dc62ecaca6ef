"""Issue 12 item 18: the CLI prints user and config text as written: rich reads no markup or emoji codes in it.

Model names, config keys, paths and messages here carry ``[bold]``-style tags, TOML table
headers (``[providers.*]``) and ``:ok:``-style emoji codes, which rich would otherwise
swallow or replace.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import rich_tables, run_llmplex, squashed

CONFIG = """\
[aliases]
"[fast]" = "mock:[bold]x[/bold]"

[providers."[local]"]
plugin = "openai"
base_url = "http://127.0.0.1:8080/v1/:thumbs_up:/[red]x[/red]"

[providers."nope:ok:"]
plugin = "[b]gone[/b]"

[providers."[bad]"]
plugin = "openai"
timeout = "[bold]slow[/bold] :fire:"
"""
EMOJI = ("🔥", "🆗", "👍")


def _project(tmp_path: Path) -> Path:
    """A project directory whose own name rich would read as markup and an emoji code."""
    project = tmp_path / "[work] :fire:"
    project.mkdir()
    (project / "llmplex.toml").write_text(CONFIG, encoding="utf-8")
    return project


def _has(cell: str, text: str) -> bool:
    return squashed(text) in squashed(cell)


def test_item_18_providers_listing_shows_prefixes_plugins_and_paths_as_written(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = run_llmplex("providers", cwd=project)
    assert result.returncode == 0, result.stderr
    rows = rich_tables(result.stdout)[0][1]
    assert {"[local]", "[bad]", "nope:ok:"} <= set(rows), sorted(rows)
    assert _has(rows["nope:ok:"][1], "[b]gone[/b] (not installed)"), rows["nope:ok:"]
    assert _has(rows["[local]"][-1], f"{project}/llmplex.toml"), rows["[local]"]
    assert _has(rows["openai"][-1], "instances: [bad], [local]"), rows["openai"]
    assert not any(e in result.stdout for e in EMOJI), result.stdout


def test_item_18_providers_check_shows_settings_hints_and_errors_as_written(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = run_llmplex("providers", "--check", cwd=project)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert not any(e in out for e in EMOJI), out
    tables = dict(rich_tables(out))
    rows = rich_tables(out)[0][1]
    configured = rows["openai"][4]
    assert _has(configured, "api_key in its [providers.*] table"), configured  # the hint rich used to eat
    status = rows["[bad]"][5]
    assert _has(status, """key 'providers."[bad]".timeout': expected a number"""), status
    assert _has(status, 'found the string "[bold]slow[/bold] :fire:"'), status
    base_url = tables['settings of `[local]` ([providers."[local]"] in llmplex.toml)']["base_url"]
    assert _has(base_url[4], '"http://127.0.0.1:8080/v1/:thumbs_up:/[red]x[/red]"'), base_url


def test_item_18_error_lines_and_batch_progress_keep_brackets(tmp_path: Path) -> None:
    """A guard for the paths that print through click (error lines) or show no user text (the bar)."""
    project = _project(tmp_path)
    missing = run_llmplex("complete", "-m", "nosuch[red]x[/red]:ok:", "hi", cwd=project)
    assert missing.returncode == 3, missing.stderr
    assert "unknown provider 'nosuch[red]x[/red]'" in missing.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "llmplex.toml").write_text('[aliases]\n"[x] :ok:" = 5\n', encoding="utf-8")
    config_error = run_llmplex("complete", "-m", "mock:echo", "hi", cwd=bad)
    assert config_error.returncode == 3, config_error.stderr
    assert """key 'aliases."[x] :ok:"': expected a string; found the integer 5""" in config_error.stderr
    requests = project / "in [1] :ok:.jsonl"
    requests.write_text(json.dumps({"model": "mock:[bold]m[/bold]", "prompt": "[red]hi[/red] :fire:"}) + "\n")
    out = project / "out [1].jsonl"
    ran = run_llmplex("batch", str(requests), "-o", str(out), "--progress", cwd=project)
    assert ran.returncode == 0, ran.stderr
    assert "batch" in ran.stderr and "1 requests: 1 ok, 0 failed" in ran.stderr
    assert not any(e in ran.stderr for e in EMOJI) and "Traceback" not in ran.stderr
    record = json.loads(out.read_text(encoding="utf-8"))
    assert (record["response"]["text"], record["response"]["model"]) == ("[red]hi[/red] :fire:", "[bold]m[/bold]")
