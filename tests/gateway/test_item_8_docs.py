"""Issue 22 item 8: the "Gateway" docs section is in the nav and names every option of the gateway's commands."""

from __future__ import annotations

import re
from pathlib import Path

import click
import yaml

from llmplex.cli.keys import keys_command
from llmplex.cli.serve import serve_command
from llmplex.cli.spend import spend_command

ROOT = Path(__file__).resolve().parents[2]
SECTION = ("index.md", "quickstart.md", "agents.md", "keys.md", "replicas.md", "metrics.md", "benchmark.md")


def _gateway_nav() -> list[str]:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    sections = [entry["Gateway"] for entry in nav if isinstance(entry, dict) and "Gateway" in entry]
    assert len(sections) == 1, "mkdocs.yml needs one top-level 'Gateway' section"
    return [item if isinstance(item, str) else next(iter(item.values())) for item in sections[0]]


def _options(command: click.Command, prefix: str = "") -> dict[str, str]:
    """Every long option of ``command`` and its subcommands, with the command it belongs to."""
    found = {
        f"{prefix}{command.name} {opt}": opt
        for param in command.params
        if isinstance(param, click.Option)
        for opt in param.opts
        if opt.startswith("--")
    }
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            found.update(_options(sub, f"{prefix}{command.name} "))
    return found


def _section_text() -> str:
    return "\n".join((ROOT / "docs" / "gateway" / page).read_text(encoding="utf-8") for page in SECTION)


def test_item_8_every_gateway_page_is_in_the_gateway_nav_section() -> None:
    nav = _gateway_nav()
    assert nav == [f"gateway/{page}" for page in SECTION]
    for page in nav:
        assert (ROOT / "docs" / page).is_file(), page


def test_item_8_the_section_names_every_serve_keys_and_spend_option() -> None:
    options = {**_options(serve_command), **_options(keys_command), **_options(spend_command)}
    assert {"serve --workers", "keys create --budget-period", "keys update --models", "spend --by"} <= set(options)
    text = _section_text()
    missing = [where for where, opt in options.items() if not re.search(re.escape(opt) + r"(?![\w-])", text)]
    assert not missing, f"the Gateway docs do not name these options: {missing}"
    for subcommand in keys_command.commands:
        assert f"llmplex keys {subcommand}" in text, subcommand


def test_item_8_the_check_catches_an_option_the_docs_lack() -> None:
    @click.command("serve")
    @click.option("--reload-on-change", is_flag=True)
    def imaginary() -> None:
        """A serve with an option no page names."""

    text = _section_text()
    assert "serve --reload-on-change" in _options(imaginary)
    assert not re.search(re.escape("--reload-on-change") + r"(?![\w-])", text)


def test_item_8_the_quickstart_starts_the_gateway_in_one_command_and_points_both_sdks_at_it() -> None:
    quickstart = (ROOT / "docs" / "gateway" / "quickstart.md").read_text(encoding="utf-8")
    assert re.search(r"^\$ LLMPLEX_MASTER_KEY=\S.* llmplex serve$", quickstart, re.M), "one command to a gateway"
    assert "from openai import OpenAI" in quickstart and "from anthropic import Anthropic" in quickstart
    assert 'base_url="http://127.0.0.1:4000/v1"' in quickstart and 'base_url="http://127.0.0.1:4000"' in quickstart


def test_item_8_the_benchmark_page_gives_the_gateway_and_litellm_figures() -> None:
    page = (ROOT / "docs" / "gateway" / "benchmark.md").read_text(encoding="utf-8")
    assert "bench/gateway.py" in page and "litellm proxy" in page
    for figure in ("added p50", "added p99", "requests/s at 64", "requests/s at 256", "time to first", "RSS"):
        assert figure in page, figure
