"""Issue 26 item 6: each new provider has a row in ``llmplex providers`` (and ``--check``) and a docs page with
its setup, key variables, what it supports and an example, in the site's nav."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import rich_tables, run_llmplex

ROOT = Path(__file__).resolve().parents[2]
NEW = {
    "azure": ("llmplex-azure", "AZURE_OPENAI_API_KEY"),
    "mistral": ("llmplex-openai-compatible", "MISTRAL_API_KEY"),
    "groq": ("llmplex-openai-compatible", "GROQ_API_KEY"),
    "deepseek": ("llmplex-openai-compatible", "DEEPSEEK_API_KEY"),
    "openrouter": ("llmplex-openai-compatible", "OPENROUTER_API_KEY"),
    "xai": ("llmplex-openai-compatible", "XAI_API_KEY"),
    "together": ("llmplex-openai-compatible", "TOGETHER_API_KEY"),
    "fireworks": ("llmplex-openai-compatible", "FIREWORKS_API_KEY"),
    "ollama": ("llmplex-openai-compatible", "11434"),
    "vllm": ("llmplex-openai-compatible", "8000"),
    "lmstudio": ("llmplex-openai-compatible", "1234"),
    "openai-compatible": ("llmplex-openai-compatible", "api_key_env"),
}


def test_item_6_every_new_provider_has_a_row_in_llmplex_providers(tmp_path: Path) -> None:
    result = run_llmplex("providers", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {prefix: cells for _, table in rich_tables(result.stdout) for prefix, cells in table.items()}
    for prefix, (distribution, _) in NEW.items():
        assert prefix in rows, f"no row for {prefix}: {result.stdout}"
        assert distribution in " ".join(rows[prefix])


def test_item_6_check_imports_each_and_says_what_is_missing_naming_the_variable(tmp_path: Path) -> None:
    result = run_llmplex("providers", "--check", cwd=tmp_path, env={"MISTRAL_API_KEY": "", "GROQ_API_KEY": ""})
    rows = {prefix: cells for _, table in rich_tables(result.stdout) for prefix, cells in table.items()}
    for prefix in NEW:
        assert prefix in rows and "ok" in rows[prefix], f"{prefix} is not ok: {rows.get(prefix)}"
    assert "MISTRAL_API_KEY" in " ".join(rows["mistral"]) and "GROQ_API_KEY" in " ".join(rows["groq"])
    assert "AZURE_OPENAI_ENDPOINT" in " ".join(rows["azure"])
    assert rows["ollama"][4] == "yes", "a local server needs no key"


@pytest.mark.parametrize("prefix", sorted(NEW))
def test_item_6_every_new_provider_has_a_docs_page_in_the_nav(prefix: str) -> None:
    page = ROOT / "docs" / "providers" / f"{prefix}.md"
    text = page.read_text(encoding="utf-8")
    mark = NEW[prefix][1]
    assert mark in text, f"{page.name} does not name {mark}"
    assert "```python" in text or "```toml" in text, f"{page.name} has no example"
    if prefix != "openai-compatible":
        for heading in ("## Setup", "## What it supports", "## Example"):
            assert heading in text, f"{page.name} lacks {heading!r}"
    assert f"providers/{prefix}.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
