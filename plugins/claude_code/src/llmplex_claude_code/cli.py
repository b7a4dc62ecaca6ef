"""The provider's "client": the resolved ``claude`` executable and how to run one request on it."""

from __future__ import annotations

import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from llmplex.errors import LLMConfigurationError, LLMSubprocessError
from llmplex_claude_code import process
from llmplex_claude_code.command import build_argv, build_env, check_command_line
from llmplex_claude_code.settings import INSTALL_HINT, ClaudeCodeSettings

__all__ = ["ClaudeCLI", "create_client"]

_VERSION = re.compile(r"\d+\.\d+\.\d+")


@dataclass(frozen=True)
class ClaudeCLI:
    """The ``claude`` binary one provider instance runs, with that instance's settings."""

    path: str
    settings: ClaudeCodeSettings

    def version(self, timeout: float = 30.0) -> str:
        """The CLI's version (``claude --version`` prints e.g. ``2.1.197 (Claude Code)``)."""
        done = subprocess.run(
            [self.path, "--version"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
            env=build_env({}, self.settings),
        )
        found = _VERSION.search(done.stdout)
        if done.returncode != 0 or found is None:
            raise LLMSubprocessError(
                f"`{self.path} --version` did not print a version: {done.stdout.strip()[:200]!r}",
                return_code=done.returncode,
                stderr=done.stderr,
            )
        return found.group(0)

    def _invocation(self, payload: dict[str, Any]) -> tuple[list[str], str, dict[str, str], str | None]:
        argv = build_argv(self.path, payload, self.settings)
        env = build_env(payload, self.settings)
        check_command_line(argv, env)
        return argv, payload["prompt"], env, self.settings.cwd

    def run(self, payload: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        """The successful result object of one ``--output-format json`` run."""
        completed = process.run(*self._invocation(payload), timeout)
        return process.check_result(process.find_result(completed.stdout), completed)

    async def arun(self, payload: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        """Async ``run``."""
        completed = await process.arun(*self._invocation(payload), timeout)
        return process.check_result(process.find_result(completed.stdout), completed)

    def stream(self, payload: dict[str, Any], timeout: float | None) -> Iterator[dict[str, Any]]:
        """The stream-json lines of one run, the checked result last."""
        return process.stream_lines(*self._invocation(payload), timeout)

    def astream(self, payload: dict[str, Any], timeout: float | None) -> AsyncIterator[dict[str, Any]]:
        """Async ``stream``."""
        return process.astream_lines(*self._invocation(payload), timeout)


def create_client(settings: ClaudeCodeSettings) -> ClaudeCLI:
    """Resolve the executable once per provider instance."""
    path = settings.resolved_cli()
    if path is None:
        raise LLMConfigurationError(f"the claude CLI was not found ({settings.cli_path or 'claude'}): {INSTALL_HINT}")
    return ClaudeCLI(path, settings)
