"""Run the CLI without a shell, in its own process group, and kill the whole group at the deadline."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from llmplex_claude_code.failures import CLIExitError, CLIOutputError, CLIResultError, CLITimeoutError

__all__ = ["Completed", "arun", "astream_lines", "check_result", "find_result", "kill_group", "run", "stream_lines"]

_LINE_LIMIT = 64 * 1024 * 1024
_PIPES: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
"""All three streams piped (``asyncio.subprocess.PIPE`` is the same constant)."""


@dataclass(frozen=True)
class Completed:
    """A finished run: exit status and what it wrote."""

    return_code: int
    stdout: str
    stderr: str


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (the CLI and everything it started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _start(argv: Sequence[str], env: dict[str, str], cwd: str | None) -> subprocess.Popen[bytes]:
    """The CLI with piped streams, leading its own process group."""
    return subprocess.Popen(argv, **_PIPES, env=env, cwd=cwd, start_new_session=True)


async def _astart(argv: Sequence[str], env: dict[str, str], cwd: str | None) -> asyncio.subprocess.Process:
    """Async ``_start``; stdout lines may be as long as one stream-json event gets."""
    return await asyncio.create_subprocess_exec(
        *argv, **_PIPES, env=env, cwd=cwd, start_new_session=True, limit=_LINE_LIMIT
    )


def run(argv: Sequence[str], stdin: str, env: dict[str, str], cwd: str | None, timeout: float | None) -> Completed:
    """Run to completion with ``stdin`` as input."""
    process = _start(argv, env, cwd)
    try:
        out, err = process.communicate(stdin.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        process.communicate()
        raise CLITimeoutError(timeout or 0.0) from None
    except BaseException:
        kill_group(process.pid)
        process.wait()
        raise
    return Completed(process.returncode, out.decode(errors="replace"), err.decode(errors="replace"))


async def arun(
    argv: Sequence[str], stdin: str, env: dict[str, str], cwd: str | None, timeout: float | None
) -> Completed:
    """Async ``run`` (``asyncio.create_subprocess_exec``)."""
    process = await _astart(argv, env, cwd)
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout)
    except TimeoutError:
        kill_group(process.pid)
        await process.wait()
        raise CLITimeoutError(timeout or 0.0) from None
    except BaseException:
        kill_group(process.pid)
        await process.wait()
        raise
    return Completed(process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace"))


def _json_object(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def check_result(result: dict[str, Any] | None, completed: Completed) -> dict[str, Any]:
    """The successful result, or the exception that says why there is none."""
    if result is None:
        if completed.return_code != 0:
            raise CLIExitError(completed.return_code, completed.stderr, completed.stdout)
        raise CLIOutputError("no result object", completed.stdout, completed.return_code, completed.stderr)
    if result.get("is_error"):
        raise CLIResultError(result, completed.return_code, completed.stderr)
    if completed.return_code != 0:
        raise CLIExitError(completed.return_code, completed.stderr, completed.stdout)
    return result


def find_result(stdout: str) -> dict[str, Any] | None:
    """The ``{"type": "result", ...}`` object of ``--output-format json`` output."""
    whole = _json_object(stdout.strip())
    if whole is not None and whole.get("type") == "result":
        return whole
    for line in reversed(stdout.splitlines()):
        found = _json_object(line.strip())
        if found is not None and found.get("type") == "result":
            return found
    return None


def _pipes(process: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes], IO[bytes]]:
    if process.stdin is None or process.stdout is None or process.stderr is None:
        raise RuntimeError("the CLI process was started without pipes")
    return process.stdin, process.stdout, process.stderr


@dataclass
class _StreamOutput:
    """Sorts stream-json stdout: events pass on, the result waits for the exit status, other text is kept."""

    result: dict[str, Any] | None = None
    other: list[str] = field(default_factory=list)

    def event(self, raw: bytes) -> dict[str, Any] | None:
        """The event on this stdout line to pass on, if it is one."""
        line = raw.decode(errors="replace").strip()
        event = _json_object(line) if line else None
        if event is None:
            if line:
                self.other.append(line)
        elif event.get("type") == "result":
            self.result = event
        else:
            return event
        return None

    def checked_result(self, return_code: int, stderr: str) -> dict[str, Any]:
        """The result line once the process ended (see ``check_result``)."""
        return check_result(self.result, Completed(return_code, "\n".join(self.other), stderr))


def stream_lines(
    argv: Sequence[str], stdin: str, env: dict[str, str], cwd: str | None, timeout: float | None
) -> Iterator[dict[str, Any]]:
    """The JSON lines of ``--output-format stream-json``; the result line last, once the exit status is known."""
    process = _start(argv, env, cwd)
    stdin_pipe, stdout_pipe, stderr_pipe = _pipes(process)
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        kill_group(process.pid)

    timer = threading.Timer(timeout, expire) if timeout else None
    errors: list[bytes] = []
    drain = threading.Thread(target=lambda: errors.append(stderr_pipe.read()), daemon=True)
    try:
        if timer is not None:
            timer.start()
        drain.start()
        with contextlib.suppress(BrokenPipeError):
            stdin_pipe.write(stdin.encode())
            stdin_pipe.close()
        output = _StreamOutput()
        for raw in stdout_pipe:
            event = output.event(raw)
            if event is not None:
                yield event
        process.wait()
        drain.join()
        if timed_out.is_set():
            raise CLITimeoutError(timeout or 0.0)
        yield output.checked_result(process.returncode, b"".join(errors).decode(errors="replace"))
    finally:
        if timer is not None:
            timer.cancel()
        if process.poll() is None:
            kill_group(process.pid)
            process.wait()


async def astream_lines(
    argv: Sequence[str], stdin: str, env: dict[str, str], cwd: str | None, timeout: float | None
) -> AsyncIterator[dict[str, Any]]:
    """Async ``stream_lines``."""
    process = await _astart(argv, env, cwd)
    if process.stdin is None or process.stdout is None or process.stderr is None:
        raise RuntimeError("the CLI process was started without pipes")
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    drain = asyncio.ensure_future(process.stderr.read())
    try:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(stdin.encode())
            await process.stdin.drain()
            process.stdin.close()
        output = _StreamOutput()
        while True:
            left = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                raw = await asyncio.wait_for(process.stdout.readline(), left)
            except TimeoutError:
                raise CLITimeoutError(timeout or 0.0) from None
            if not raw:
                break
            event = output.event(raw)
            if event is not None:
                yield event
        left = None if deadline is None else max(0.0, deadline - loop.time())
        try:
            await asyncio.wait_for(process.wait(), left)
        except TimeoutError:
            raise CLITimeoutError(timeout or 0.0) from None
        yield output.checked_result(process.returncode or 0, (await drain).decode(errors="replace"))
    finally:
        if process.returncode is None:
            kill_group(process.pid)
            await process.wait()
        drain.cancel()
