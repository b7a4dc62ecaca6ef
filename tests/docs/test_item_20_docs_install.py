"""Issue 12 item 20: the README and the docs name a command that installs MkDocs and serves the site, and
`tox -e docs` builds the site from that same list (so CI proves the command is enough)."""

from __future__ import annotations

import configparser
import re

import yaml

from tests.docs.markdown import DOCS, README, ROOT

REQUIREMENTS = "docs/requirements.txt"
# What provides each theme, plugin and Markdown extension mkdocs.yml uses (None: MkDocs or Markdown itself).
PROVIDED_BY = {
    "material": "mkdocs-material",
    "search": None,
    "mkdocstrings": "mkdocstrings-python",
    "admonition": None,
    "tables": None,
    "toc": None,
    "pymdownx": "mkdocs-material",  # pymdown-extensions is a dependency of mkdocs-material
}


def requirement_names() -> set[str]:
    lines = (ROOT / REQUIREMENTS).read_text(encoding="utf-8").splitlines()
    return {re.split(r"[\[<>=!~ ;]", line.strip(), maxsplit=1)[0] for line in lines if line.strip()[:1].isalnum()}


def test_item_20_readme_and_docs_name_a_command_that_installs_mkdocs_and_serves() -> None:
    for page in (README, DOCS / "index.md"):
        commands = re.findall(r"`([^`]*mkdocs serve[^`]*)`", page.read_text(encoding="utf-8"))
        assert commands, f"{page.name}: name the command that serves the docs"
        for command in commands:
            assert f"pip install -r {REQUIREMENTS} && mkdocs serve" in command, f"{page.name}: {command}"
    assert "mkdocs-material" in requirement_names(), "mkdocs-material brings mkdocs itself"


def test_item_20_the_requirements_cover_everything_mkdocs_yml_uses() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    used = {config["theme"]["name"]}
    used |= {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}
    used |= {(next(iter(e)) if isinstance(e, dict) else e).split(".")[0] for e in config["markdown_extensions"]}
    unknown = used - set(PROVIDED_BY)
    assert not unknown, f"mkdocs.yml uses {sorted(unknown)}: add what provides it to {REQUIREMENTS} and PROVIDED_BY"
    missing = {PROVIDED_BY[name] for name in used} - {None} - requirement_names()
    assert not missing, f"add {sorted(missing)} to {REQUIREMENTS}"


def test_item_20_tox_docs_builds_strictly_from_those_requirements_alone() -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    deps = [line.strip() for line in tox["testenv:docs"]["deps"].splitlines() if line.strip()]
    assert deps == [f"-r {REQUIREMENTS}"], "the docs env installs what the README's command installs, nothing more"
    assert "mkdocs build --strict" in tox["testenv:docs"]["commands"]
