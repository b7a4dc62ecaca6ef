"""Issue 12 item 22: `llmplex providers` lists from entry-point metadata; only `--check` imports plugins."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

from tests.support.cli import modules_imported_by, rich_tables, run_llmplex

SDK_MODULES = {"openai", "anthropic", "google.genai", "litellm"}
PROVIDER_ENTRIES = list(entry_points(group="llmplex.providers"))


def row(output: str, prefix: str) -> str:
    """The cells of the providers table's row for ``prefix``, joined by " | "."""
    return " | ".join(rich_tables(output)[0][1][prefix])


def test_item_22_providers_imports_no_plugin_and_no_sdk(tmp_path: Path) -> None:
    result, imported = modules_imported_by("providers", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "llmplex.cli.providers" in imported  # the dump works
    assert not imported & SDK_MODULES, f"`llmplex providers` imported {sorted(imported & SDK_MODULES)}"
    plugin_modules = {ep.value.partition(":")[0] for ep in PROVIDER_ENTRIES}
    assert not imported & plugin_modules, f"`llmplex providers` imported plugins {sorted(imported & plugin_modules)}"


def test_item_22_providers_lists_every_entry_point_from_its_metadata(tmp_path: Path) -> None:
    result = run_llmplex("providers", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for ep in PROVIDER_ENTRIES:
        line = row(result.stdout, ep.name)
        assert ep.dist is not None
        assert ep.dist.name in line and ep.dist.version in line and ep.value in line, line
        assert "yes" in line, line  # enabled


def test_item_22_providers_shows_disabled_plugins_and_configured_instances(tmp_path: Path) -> None:
    (tmp_path / "llmplex.toml").write_text(
        '[providers.local]\nplugin = "openai"\nbase_url = "http://127.0.0.1:8080/v1"\n', encoding="utf-8"
    )
    result = run_llmplex("providers", cwd=tmp_path, env={"LLMPLEX_DISABLED": "sentinel"})
    assert result.returncode == 0, result.stderr
    assert "no" in row(result.stdout, "sentinel") and "disabled" in row(result.stdout, "sentinel")
    local = row(result.stdout, "local")
    # the config file's path may wrap inside its cell (a long temporary directory under xdist): read it unwrapped
    assert "openai" in local and "llmplex-openai" in local and "llmplex.toml" in local.replace(" ", ""), local
    assert "local" in row(result.stdout, "openai"), "the openai row names the instances configured on it"


def test_item_22_providers_check_imports_plugins_and_reports_the_broken_one(tmp_path: Path) -> None:
    result, imported = modules_imported_by("providers", "--check", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert {"llmplex_openai.plugin", "openai"} <= imported
    assert "broken: RuntimeError: this plugin is broken on purpose" in row(result.stdout, "broken")
    openai = row(result.stdout, "openai")
    assert "ok" in openai and "tools" in openai and "streaming" in openai, openai  # capabilities
    assert "no: api_key not set (GOOD_API_KEY)" in row(result.stdout, "good")


def test_item_22_the_cli_help_says_what_check_does(tmp_path: Path) -> None:
    result = run_llmplex("providers", "--help", cwd=tmp_path)
    assert result.returncode == 0
    assert "--check" in result.stdout and "import" in result.stdout
