"""Issue 12 item 2: the clock starts when the user calls, before config, plugin discovery and imports.

In a fresh interpreter the first call also builds the default client, finds and imports the provider plugin
and its SDK: that used to happen before the deadline started (``timeout=1`` against a hanging server raised
after ~1.9 s). The call now ends at ``timeout`` seconds from the call itself, even when those imports take
longer than the timeout (they run under the deadline's guard and are abandoned at it).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fault_server import Fault, FaultServer

OVERRUN = 0.05
KEY = "sk-fresh-process-key-0123456789"

FIRST_CALL = """
import sys, time
import llmplex

started = time.monotonic()
try:
    {call}
except llmplex.LLMDeadlineExceededError:
    print(f"{{time.monotonic() - started:.4f}}")
else:
    sys.exit("the call against a hanging server returned")
"""


@pytest.fixture
def hanging_config(tmp_path: Path) -> Iterator[Path]:
    """A config whose ``hang:`` provider is the OpenAI plugin pointed at a server that never answers."""
    with FaultServer(default=Fault.hang(30)) as server:
        config = tmp_path / "llmplex.toml"
        config.write_text(
            f'[providers.hang]\nplugin = "openai"\nbase_url = "{server.url}"\napi = "chat"\napi_key = "{KEY}"\n'
        )
        yield config


def _seconds_in_fresh_process(call: str, config: Path) -> float:
    result = subprocess.run(
        [sys.executable, "-c", FIRST_CALL.format(call=call)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "LLMPLEX_CONFIG": str(config), "XDG_CONFIG_HOME": str(config.parent)},
        cwd=config.parent,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # not even a warning from the import the deadline abandoned, as the process exits
    return float(result.stdout.strip())


def test_item_02_a_first_module_level_call_ends_one_timeout_after_it_was_made(hanging_config: Path) -> None:
    seconds = _seconds_in_fresh_process('llmplex.complete("hang:gpt-4o-mini", "hi", timeout=1)', hanging_config)
    assert seconds < 1 + OVERRUN


def test_item_02_a_first_client_stream_ends_one_timeout_after_it_was_made(hanging_config: Path) -> None:
    call = 'client = llmplex.Client(); started = time.monotonic(); list(client.stream("hang:m", "hi", timeout=1))'
    seconds = _seconds_in_fresh_process(call, hanging_config)
    assert seconds < 1 + OVERRUN
