"""Issue 12 item 15: a plugin's sys.exit() or BaseException is contained like any other plugin failure.

The plugins are real entry points of the installed llmplex-testplugins distribution:
``exits`` (sys.exit(4) at import), ``genexit`` (GeneratorExit), ``baseexc`` (a BaseException
subclass of its own), ``regexit`` (sys.exit(5) while registering), the ``exitcmd`` command
(its module calls sys.exit(4)) and the ``exitobserver`` observer (sys.exit(4) on events of
the model ``observer-exit``). KeyboardInterrupt is the user's Ctrl-C and still stops the program.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex import LLMConfigurationError, hookimpl
from llmplex.plugins.host import PluginLoadWarning
from tests.support.cli import rich_tables, run_llmplex, squashed

RATE_LIMITED = 4  # the CLI status a plugin's sys.exit(4) must not fake


@pytest.mark.parametrize(
    ("prefix", "reason"),
    [
        ("exits", "SystemExit: the plugin called sys.exit(4)"),
        ("genexit", "GeneratorExit: stray GeneratorExit at import"),
        ("baseexc", "PluginAbort: a BaseException of the plugin's own"),
        ("regexit", "SystemExit: the plugin called sys.exit(5)"),
    ],
)
def test_item_15_a_plugin_that_exits_or_raises_a_base_exception_is_isolated(
    client: llmplex.Client, prefix: str, reason: str
) -> None:
    with pytest.warns(PluginLoadWarning, match="is broken"), pytest.raises(LLMConfigurationError) as info:
        client.route(f"{prefix}:m")
    assert reason in str(info.value) and f"LLMPLEX_DISABLED={prefix}" in str(info.value)
    assert client.host.broken()[prefix].error == reason
    module = sys.modules.get(f"llmplex_testplugins.{prefix}")
    assert module is None or not client.host.pm.is_registered(module)  # no hook of it stays active
    with pytest.raises(LLMConfigurationError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        client.route(f"{prefix}:m")  # the same way twice, without importing it again
    assert client.complete("mock:echo", "still fine").text == "still fine"
    assert client.complete("good:m", "x").text.startswith("X")


def _providers_table(cwd: Path) -> str:
    """``llmplex providers`` with plugin imports (``--check`` once listing stops importing, issue 12 item 22)."""
    checks = "--check" in run_llmplex("providers", "--help", cwd=cwd).stdout
    result = run_llmplex("providers", *(["--check"] if checks else []), cwd=cwd)
    assert (result.returncode, "Traceback" in result.stderr) == (0, False), result.stderr
    return result.stdout


def test_item_15_llmplex_providers_lists_exiting_plugins_as_broken(isolated_config: Path) -> None:
    table = _providers_table(isolated_config)
    rows = {prefix: squashed(" ".join(cells)) for prefix, cells in rich_tables(table)[0][1].items()}
    for prefix, code in (("exits", 4), ("regexit", 5)):
        assert squashed(f"broken: SystemExit: the plugin called sys.exit({code})") in rows[prefix], table
    assert "broken:GeneratorExit" in rows["genexit"] and "broken:PluginAbort" in rows["baseexc"]
    assert "broken" not in rows["mock"] + rows["good"]


def test_item_15_help_and_other_commands_survive_a_plugin_command_that_exits(isolated_config: Path) -> None:
    helped = run_llmplex("--help", cwd=isolated_config)
    assert helped.returncode == 0, helped.stderr
    assert "exitcmd" in helped.stdout and "(broken plugin command)" in helped.stdout
    assert "hello" in helped.stdout and "complete" in helped.stdout
    ran = run_llmplex("exitcmd", cwd=isolated_config)
    assert ran.returncode == 1, (ran.returncode, ran.stderr)
    assert "command 'exitcmd' from llmplex-testplugins failed to load: SystemExit" in ran.stderr
    assert "Traceback" not in ran.stderr
    hello = run_llmplex("hello", "you", cwd=isolated_config)
    assert hello.returncode == 0, hello.stderr


def test_item_15_cli_using_an_exiting_plugin_fails_with_the_config_status(isolated_config: Path) -> None:
    result = run_llmplex("complete", "-m", "exits:m", "hi", cwd=isolated_config)
    assert result.returncode == 3, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    assert "error: LLMConfigurationError: provider plugin exits (llmplex-testplugins 0.0.1) failed to load" in (
        result.stderr
    )
    assert "warning: llmplex plugin exits" in result.stderr  # a one-line warning, no source location
    assert ".py:" not in result.stderr


def test_item_15_an_observer_calling_sys_exit_4_is_not_the_cli_exit_status(isolated_config: Path) -> None:
    result = run_llmplex("complete", "-m", "mock:observer-exit", "hello", cwd=isolated_config)
    assert result.returncode == 0 != RATE_LIMITED, (result.returncode, result.stderr)
    assert result.stdout.strip() == "hello"
    warning = "warning: llmplex event observer failed: SystemExit: the plugin called sys.exit(4)"
    assert warning in result.stderr.splitlines() and "Traceback" not in result.stderr, result.stderr
    batch = isolated_config / "in.jsonl"
    batch.write_text('{"prompt": "a"}\n{"prompt": "b"}\n', encoding="utf-8")
    out = isolated_config / "out.jsonl"
    ran = run_llmplex("batch", str(batch), "-o", str(out), "-m", "mock:observer-exit", cwd=isolated_config)
    assert ran.returncode == 0, (ran.returncode, ran.stderr)
    assert out.read_text(encoding="utf-8").count('"ok": true') == 2


def test_item_15_an_entry_point_observer_calling_sys_exit_never_escapes_the_public_api(
    client: llmplex.Client,
) -> None:
    model = "mock:observer-exit"
    with pytest.warns(PluginLoadWarning, match=r"observer failed: SystemExit"):
        assert client.complete(model, "one").text == "one"
    with pytest.warns(PluginLoadWarning, match=r"observer failed: SystemExit"):
        streamed = [e.text for e in client.stream(model, "two") if e.type == "text"]
    assert "".join(streamed) == "two"

    async def run() -> list[Any]:
        answer = await client.acomplete(model, "three")
        streamed = [e.text async for e in client.astream(model, "four") if e.type == "text"]
        batched = await llmplex.abatch([{"model": model, "prompt": "five"}], concurrency=2, client=client)
        return [answer.text, "".join(streamed), *(getattr(r, "text", r) for r in batched)]

    with pytest.warns(PluginLoadWarning, match=r"observer failed: SystemExit"):
        assert asyncio.run(run()) == ["three", "four", "five"]


class _Raising:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    @hookimpl
    def llmplex_event(self, event: Any) -> None:
        raise self.error


class _Abort(BaseException):
    pass


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (SystemExit(4), "SystemExit: the plugin called sys.exit(4)"),
        (SystemExit("bye"), "SystemExit: the plugin called sys.exit('bye')"),
        (GeneratorExit(), "GeneratorExit"),
        (_Abort("custom"), "_Abort: custom"),
    ],
)
def test_item_15_an_in_process_observer_raising_a_base_exception_is_warned_about(
    error: BaseException, shown: str
) -> None:
    client = llmplex.Client(plugins=[_Raising(error)])
    with pytest.warns(PluginLoadWarning, match="observer failed") as caught:
        assert client.complete("mock:echo", "fine").text == "fine"
    assert shown in str(caught[0].message)
    # The documented exception to the rule: Ctrl-C (KeyboardInterrupt) still stops the program.
    interrupted = llmplex.Client(plugins=[_Raising(KeyboardInterrupt())])
    with pytest.raises(KeyboardInterrupt):
        interrupted.complete("mock:echo", "stop")
