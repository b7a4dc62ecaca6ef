"""Issue 16 item 6: every SDK-backed plugin is tested at the floor of its declared ranges (tox ``sdk-lowest-*``).

The envs resolve with uv's ``lowest-direct`` and first run ``tests.support.sdk_floors --lowest``, which
fails when what got installed is not the floor a plugin declares. These tests prove that check can
fail, and that tox.ini gives every plugin with a third-party dependency such an env running its tests.
"""

from __future__ import annotations

import configparser
import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.support import sdk_floors

ROOT = Path(__file__).resolve().parents[2]


def _fake_install(monkeypatch: pytest.MonkeyPatch, requires: list[str], installed: dict[str, str]) -> None:
    def version(name: str) -> str:
        if name not in installed:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed[name]

    monkeypatch.setattr(sdk_floors.importlib.metadata, "requires", lambda _dist: requires)
    monkeypatch.setattr(sdk_floors.importlib.metadata, "version", version)


def test_item_6_floor_check_fails_when_the_lowest_env_installed_more_than_the_floor(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_install(
        monkeypatch, ["llmplex>=0.1,<0.2", "openai>=2.0,<4", "pydantic>=2.7"], {"openai": "2.0.0", "pydantic": "2.10.0"}
    )
    assert sdk_floors.main(["llmplex-openai", "--lowest"]) == 1
    out, err = capsys.readouterr()
    assert "llmplex-openai: openai <4,>=2.0 -> 2.0.0 (the floor)" in out
    assert "declares pydantic>=2.7 but the lowest resolution installed 2.10.0: raise the floor" in err
    assert "llmplex" not in out.replace("llmplex-openai", "")  # its own core is not an SDK range


def test_item_6_floor_check_passes_at_the_floor_and_only_reports_without_lowest(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_install(monkeypatch, ["anthropic>=2.12,<3", "redis>=5; extra == 'redis'"], {"anthropic": "2.12"})
    assert sdk_floors.main(["llmplex-anthropic", "--lowest"]) == 0
    _fake_install(monkeypatch, ["anthropic>=2.12,<3"], {"anthropic": "2.40.1"})
    assert sdk_floors.main(["llmplex-anthropic"]) == 0  # the newest env prints, never fails
    assert sdk_floors.main(["llmplex-anthropic", "--lowest"]) == 1
    assert "anthropic <3,>=2.12 -> 2.40.1\n" in capsys.readouterr().out


def test_item_6_floor_check_fails_when_the_sdk_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_install(monkeypatch, ["google-genai>=3.4,<4"], {})
    assert sdk_floors.main(["llmplex-gemini", "--lowest"]) == 1


def _sdk_plugins() -> dict[str, list[Requirement]]:
    plugins = {}
    for pyproject in sorted(ROOT.glob("plugins/*/pyproject.toml")):
        dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
        ranged = [Requirement(d) for d in dependencies if not d.startswith("llmplex")]
        ranged = [r for r in ranged if any(s.operator == ">=" for s in r.specifier)]
        if ranged:
            plugins[pyproject.parent.name] = ranged
    return plugins


def test_item_6_every_plugin_with_an_sdk_range_has_a_lowest_env_that_checks_and_tests_it() -> None:
    plugins = _sdk_plugins()
    assert {"openai", "anthropic", "gemini", "litellm", "otel", "llamacpp"} <= set(plugins)
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    (section,) = [s for s in tox.sections() if s.startswith("testenv:sdk-lowest-")]
    factors = section.removeprefix("testenv:sdk-lowest-{").removesuffix("}").split(",")
    assert sorted(factors) == sorted(plugins), "each SDK-backed plugin needs its sdk-lowest-* factor in tox.ini"
    assert tox[section]["uv_resolution"] == "lowest-direct"
    assert tox["tox"]["env_list"].count(section.removeprefix("testenv:")) == 1
    commands = tox[section]["commands"]
    for name in plugins:
        distribution = f"llmplex-{name.replace('_', '-')}"
        assert f"{name}: python -m tests.support.sdk_floors {distribution} --lowest" in commands
        assert f"tests/plugins/{name}" in commands.split(f"{name}: pytest", 1)[1].splitlines()[0]
        assert f"{name}: -e plugins/{name}" in tox[section]["deps"]
