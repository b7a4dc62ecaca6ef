"""Plugin discovery through the installed llmplex-testplugins distribution: laziness and isolation."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.plugins.host import PluginLoadWarning


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (sys.modules checks need a clean process)."""
    import os

    full_env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPLEX_")} | env
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full_env, check=False
    )


def test_listing_providers_imports_no_plugin() -> None:
    result = run_python(
        """
        import sys, llmplex
        client = llmplex.Client()
        names = sorted(client.host.entries())
        assert {"mock", "good", "sentinel"} <= set(names), names
        loaded = [m for m in sys.modules if m.startswith("llmplex_testplugins.")]
        assert loaded == [], loaded
        print("ok")
        """
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_plugin_is_imported_on_first_use_of_its_prefix() -> None:
    result = run_python(
        """
        import sys, llmplex
        client = llmplex.Client()
        client.complete("mock:echo", "x")
        assert "llmplex_testplugins.good" not in sys.modules
        client.complete("good:m", "x")
        assert "llmplex_testplugins.good" in sys.modules
        assert "llmplex_testplugins.sentinel" not in sys.modules
        print("ok")
        """
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_disabled_provider_is_never_imported() -> None:
    result = run_python(
        """
        import sys, llmplex
        client = llmplex.Client()
        try:
            client.complete("sentinel:m", "x")
        except llmplex.LLMConfigurationError as exc:
            print("error:", exc)
        from llmplex.cli.providers import check_rows
        row = next(r for r in check_rows(client) if r.prefix == "sentinel")
        print("row:", row.enabled, row.status)
        print("imported:", "llmplex_testplugins.sentinel" in sys.modules)
        """,
        LLMPLEX_DISABLED="sentinel,broken",
    )
    assert "error: provider 'sentinel' is disabled" in result.stdout, result.stderr
    assert "row: no: provider 'sentinel' is disabled (listed in 'disabled' / LLMPLEX_DISABLED) disabled\n" in (
        result.stdout
    )
    assert "imported: False" in result.stdout


def test_allow_list_blocks_everything_else() -> None:
    client = llmplex.Client(enabled=["mock"])
    assert client.complete("mock:echo", "ok").text == "ok"
    with pytest.raises(LLMConfigurationError, match="not in the 'enabled' allow-list"):
        client.route("good:m")


@pytest.mark.parametrize(
    ("prefix", "reason"),
    [
        ("broken", "RuntimeError: this plugin is broken on purpose"),
        ("empty", "registered nothing, not its entry-point name 'empty'"),
        ("thief", "registers prefix 'mock', which llmplex owns"),
        ("badhook", "implements unknown hook 'llmplex_frobnicate'"),
    ],
)
def test_broken_plugins_are_reported_and_isolated(client: llmplex.Client, prefix: str, reason: str) -> None:
    with pytest.warns(PluginLoadWarning, match="is broken"), pytest.raises(LLMConfigurationError) as info:
        client.route(f"{prefix}:m")
    assert reason in str(info.value)
    assert f"LLMPLEX_DISABLED={prefix}" in str(info.value)
    assert reason.split(": ", 1)[-1] in client.host.broken()[prefix].error
    # The other providers keep working, including one loaded afterwards.
    assert client.complete("mock:echo", "still fine").text == "still fine"
    assert client.complete("good:m", "x").text.startswith("X")


def test_a_broken_plugin_fails_the_same_way_twice_without_reimport(client: llmplex.Client) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        for _ in range(2):
            with pytest.raises(LLMConfigurationError, match="broken on purpose"):
                client.route("broken:m")


@pytest.mark.parametrize(
    ("failure", "imports"),
    [
        # what a concurrent import of the SDK (user code beside an import a deadline abandoned) can raise
        (ImportError("cannot import name 'OpenAI' from partially initialized module 'openai'"), 2),
        (RuntimeError("this plugin is broken on purpose"), 1),  # the plugin's own failure: broken for good
    ],
)
def test_only_a_failed_import_is_tried_again_on_the_next_call(
    client: llmplex.Client, monkeypatch: pytest.MonkeyPatch, failure: Exception, imports: int
) -> None:
    import importlib
    from types import SimpleNamespace

    import llmplex.plugins.host as host_module

    tries: list[str] = []

    def import_module(name: str) -> object:
        if name == "llmplex_testplugins.good":
            tries.append(name)
            if len(tries) == 1:
                raise failure
        return importlib.import_module(name)

    monkeypatch.setattr(host_module, "importlib", SimpleNamespace(import_module=import_module))
    with pytest.warns(PluginLoadWarning, match="is broken"), pytest.raises(LLMConfigurationError) as info:
        client.route("good:m")
    assert ("tried again on the next call" in str(info.value)) is (imports == 2)
    if imports == 2:
        assert client.complete("good:m", "x").text.startswith("X")
        assert "good" not in client.host.broken()
    else:
        with pytest.raises(LLMConfigurationError, match="broken on purpose"):
            client.route("good:m")
    assert len(tries) == imports


def test_thief_did_not_take_the_mock_prefix(client: llmplex.Client) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        with pytest.raises(LLMConfigurationError):
            client.route("thief:m")
    assert client.router.instance("mock").plugin.entry.distribution == "llmplex"


def test_non_provider_plugin_wraps_pipeline_and_observes_events(client: llmplex.Client) -> None:
    from llmplex_testplugins import recorder

    recorder.EVENTS.clear()
    client.complete("mock:wrapped", "hello")
    backend = client.provider_client("mock")
    assert backend.calls[-1]["wrapped_by"] == "recorder"
    kinds = [type(e).__name__ for e in recorder.EVENTS]
    assert kinds[:3] == ["RequestStarted", "PromptRendered", "PromptExecuted"]
    client.complete("mock:plain", "hello")
    assert "wrapped_by" not in backend.calls[-1]


def test_in_process_plugin_with_unknown_hook_is_rejected() -> None:
    class Bad:
        @llmplex.hookimpl
        def llmplex_nonsense(self) -> None:
            """Not a hook."""

    with pytest.raises(LLMConfigurationError, match="unknown hook 'llmplex_nonsense'"):
        llmplex.Client(plugins=[Bad()])


def test_in_process_plugin_with_wrong_hook_arguments_is_rejected() -> None:
    class Bad:
        @llmplex.hookimpl
        def llmplex_format(self, request: object, colour: str) -> None:
            """``colour`` is not an argument of llmplex_format."""

    with pytest.raises(LLMConfigurationError, match="colour"):
        llmplex.Client(plugins=[Bad()])
