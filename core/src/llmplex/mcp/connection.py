"""One live session with one MCP server, held by one task on the MCP loop (the only module importing the SDK).

The transport and the ``ClientSession`` are anyio task groups, so they are
entered and left by a single task (``_hold``), which waits for ``close``;
requests run as other tasks of the same loop. A request task cancelled by its
caller (the call's deadline) makes the SDK send ``notifications/cancelled`` for
it. The process of a stdio server is started in its own process group, which
the SDK ends as a whole (stdin closed, then SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, cast

from llmplex.config.mcp import MCPServerConfig
from llmplex.errors import LLMConfigurationError
from llmplex.mcp.reaper import MARKER, reap

if TYPE_CHECKING:
    import mcp_types
    from mcp import ClientSession

__all__ = ["STDERR_TAIL", "Connection", "ConnectionLost", "require_sdk"]

STDERR_TAIL = 2000
"""How many of the last characters a server wrote on stderr an error shows."""


def require_sdk() -> None:
    """Raise ``LLMConfigurationError`` saying how to install the SDK when it is missing."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise LLMConfigurationError(
            "MCP servers need the official MCP SDK, which is not installed: pip install 'llmplex[mcp]'"
        ) from None


class ConnectionLost(Exception):  # noqa: N818 - an internal signal, turned into LLMToolSourceError by the server
    """The session ended or failed; ``reason`` says how (the server's stderr is read separately)."""

    def __init__(self, reason: str, *, protocol: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.protocol = protocol


class Connection:
    """A started (or starting) session; ``tools_changed`` is called when the server's tool list changes."""

    def __init__(self, spec: MCPServerConfig, tools_changed: Callable[[], None]) -> None:
        self.spec = spec
        self.tools_changed = tools_changed
        self.stderr = tempfile.TemporaryFile() if spec.command is not None else None  # noqa: SIM115 - closed by close()
        self.marker = uuid.uuid4().hex  # in the environment of the server's process and its children
        self.session: ClientSession | None = None
        self.failure: ConnectionLost | None = None
        self._stop: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None

    # -- on the MCP loop -----------------------------------------------------------------

    async def start(self) -> None:
        """Start the transport and the session and initialize it; raises ConnectionLost when it cannot."""
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._holder = asyncio.ensure_future(self._hold(ready))
        ready.add_done_callback(lambda done: done.cancelled() or done.exception())  # read here or by nobody
        try:
            await asyncio.shield(ready)
        except asyncio.CancelledError:
            await self.close()
            raise

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        from mcp import ClientSession

        assert self._stop is not None
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(await self._transport(stack))
                session = await stack.enter_async_context(ClientSession(read, write, message_handler=self._on_message))
                await session.initialize()
                self.session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            self.failure = ConnectionLost(_describe(exc))
            if not ready.done():
                ready.set_exception(self.failure)
            if not isinstance(exc, Exception):
                raise
        finally:
            self.session = None
            if self.failure is None:
                self.failure = ConnectionLost("the session was closed")
            if not ready.done():
                ready.set_exception(self.failure)

    async def _transport(self, stack: AsyncExitStack) -> Any:
        """The SDK's transport for the server (an HTTP client it is given is closed with ``stack``)."""
        spec = self.spec
        if spec.command is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            env = {**spec.revealed_env(), MARKER: self.marker}
            params = StdioServerParameters(command=spec.command, args=list(spec.args), env=env, cwd=spec.cwd)
            return stdio_client(params, errlog=cast("Any", self.stderr))
        assert spec.url is not None
        if spec.kind == "sse":
            from mcp.client.sse import sse_client

            return sse_client(spec.url, headers=spec.revealed_headers())
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http_client = await stack.enter_async_context(create_mcp_http_client(headers=spec.revealed_headers()))
        return streamable_http_client(spec.url, http_client=http_client)

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.tools_changed()

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Every tool the server lists, page after page."""
        import mcp_types

        session = self._session()
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _page in range(1000):
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._request(session.list_tools(params=params))
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools
        raise ConnectionLost("the server's tools/list never ended (1000 pages)", protocol=True)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """One tools/call; cancelling the task cancels the request at the server."""
        import mcp_types

        result = await self._request(self._session().call_tool(name, arguments))
        if not isinstance(result, mcp_types.CallToolResult):
            raise ConnectionLost(f"the server answered tools/call with {type(result).__name__}", protocol=True)
        return result

    async def _request(self, pending: Any) -> Any:
        from mcp import MCPError
        from pydantic import ValidationError

        try:
            return await pending
        except MCPError as exc:
            if self.failure is not None or exc.code == -32000:  # CONNECTION_CLOSED
                raise ConnectionLost(self._lost(exc.message)) from None
            raise ConnectionLost(f"the server answered with error {exc.code}: {exc.message}", protocol=True) from None
        except (ValidationError, RuntimeError, ValueError) as exc:
            raise ConnectionLost(f"the server broke the protocol: {_describe(exc)}", protocol=True) from None
        except (OSError, EOFError) as exc:
            raise ConnectionLost(self._lost(_describe(exc))) from None

    def _lost(self, detail: str) -> str:
        return f"the connection ended ({self.failure.reason if self.failure else detail})"

    def _session(self) -> ClientSession:
        if self.session is None:
            raise ConnectionLost(self.failure.reason if self.failure else "the session is not running")
        return self.session

    async def close(self) -> None:
        """End the session, the server's process and every child of it; waits for all of them.

        A session still starting is cancelled (the SDK ends the process it started even then).
        """
        if self._stop is not None:
            self._stop.set()
        holder = self._holder
        if holder is not None:
            if self.session is None and not holder.done():
                holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
        if self.spec.command is not None:
            await reap(self.marker)
        if self.stderr is not None:
            self.stderr.close()

    # -- from any thread -------------------------------------------------------------------

    def stderr_tail(self) -> str:
        """The end of what the server wrote on stderr (raw; the caller masks secrets)."""
        if self.stderr is None or self.stderr.closed:
            return ""
        fd = self.stderr.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - STDERR_TAIL)
        text = os.pread(fd, size - start, start).decode("utf-8", "replace")
        return ("..." if start else "") + text.strip()


def _describe(exc: BaseException) -> str:
    """The innermost useful message of ``exc`` (task groups wrap the real error in ExceptionGroups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, ConnectionLost) else text
