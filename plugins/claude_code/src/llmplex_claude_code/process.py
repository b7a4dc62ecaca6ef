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
from dataclasses import dataclass
from typing import IO, Any

from llmplex_claude_code.failures import CLIExitError, CLIOutputError, CLIResultError, CLITimeoutError

__all__ = ["Completed", "arun", "astream_lines", "check_result", "kill_group", "run", "stream_lines"]

_LINE_LIMIT = 64 * 1024 * 1024


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


def run(argv: Sequence[str], stdin: str, env: dict[str, str], cwd: str | None, timeout: float | None) -> Completed:
    """Run to completion with ``stdin`` as input."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
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
    """Async :func:`run` (``asyncio.create_subprocess_exec``)."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
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


def stream_lines(
    argv: Sequence[str], stdin: str, env: dict[str, str], cwd: str | None, timeout: float | None
) -> Iterator[dict[str, Any]]:
    """The JSON lines of ``--output-format stream-json``; the result line last, once the exit status is known."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
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
        result, other = None, []
        for raw in stdout_pipe:
            line = raw.decode(errors="replace").strip()
            event = _json_object(line) if line else None
            if event is None:
                other.append(line)
            elif event.get("type") == "result":
                result = event
            else:
                yield event
        process.wait()
        drain.join()
        if timed_out.is_set():
            raise CLITimeoutError(timeout or 0.0)
        completed = Completed(
            process.returncode, "\n".join(filter(None, other)), b"".join(errors).decode("utf-8", "replace")
        )
        yield check_result(result, completed)
    finally:
        if timer is not None:
            timer.cancel()
        if process.poll() is None:
            kill_group(process.pid)
            process.wait()


async def astream_lines(
    argv: Sequence[str], stdin: str, env: dict[str, str], cwd: str | None, timeout: float | None
) -> AsyncIterator[dict[str, Any]]:
    """Async :func:`stream_lines`."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
        limit=_LINE_LIMIT,
    )
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
        result, other = None, []
        while True:
            left = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                raw = await asyncio.wait_for(process.stdout.readline(), left)
            except TimeoutError:
                raise CLITimeoutError(timeout or 0.0) from None
            if not raw:
                break
            line = raw.decode(errors="replace").strip()
            event = _json_object(line) if line else None
            if event is None:
                other.append(line)
            elif event.get("type") == "result":
                result = event
            else:
                yield event
        left = None if deadline is None else max(0.0, deadline - loop.time())
        try:
            await asyncio.wait_for(process.wait(), left)
        except TimeoutError:
            raise CLITimeoutError(timeout or 0.0) from None
        stderr = (await drain).decode(errors="replace")
        completed = Completed(process.returncode or 0, "\n".join(filter(None, other)), stderr)
        yield check_result(result, completed)
    finally:
        if process.returncode is None:
            kill_group(process.pid)
            await process.wait()
        drain.cancel()
