"""``MCPServer``: an MCP server as a source of tools, started on first use and kept until closed."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar
from urllib.parse import urlsplit

from pydantic import ValidationError

from llmplex.config.mcp import MCPServerConfig
from llmplex.errors import LLMConfigurationError, LLMDeadlineExceededError, LLMToolSourceError
from llmplex.masking.values import is_secret_name, looks_like_key, redact, register_secret
from llmplex.mcp import loop
from llmplex.mcp.connection import Connection, ConnectionLost, require_sdk
from llmplex.mcp.results import tool_result
from llmplex.reliability.deadline import Deadline
from llmplex.types.tool_result import ToolResult

if TYPE_CHECKING:
    import mcp_types

__all__ = ["CLOSE_TIMEOUT", "MCPServer", "MCPTools"]

T = TypeVar("T")

CLOSE_TIMEOUT = 15.0
"""Seconds ``close()`` waits for a session and its process group to end (the SDK escalates to SIGKILL in ~4 s)."""

_running: weakref.WeakSet[MCPServer] = weakref.WeakSet()


class MCPServer:
    """An MCP server whose tools the model may call: ``complete(..., tools=[server, my_function])``.

    Build one with ``MCPServer.stdio``, ``MCPServer.http`` or ``MCPServer.sse``
    (or from a ``[mcp.servers.NAME]`` table: ``Client.mcp_server(NAME)``). Nothing
    starts until a call uses it; then it is reused by every call until
    ``close()`` (the client that used it closes it too, and so does interpreter
    exit). A server that cannot start, crashes, breaks the protocol or lists no
    tools raises ``LLMToolSourceError`` naming it, with the end of its stderr.
    """

    def __init__(self, config: MCPServerConfig, *, name: str) -> None:
        """A server described by ``config`` (a ``[mcp.servers.NAME]`` table) under ``name``."""
        if not isinstance(name, str) or not name.strip():
            raise LLMConfigurationError(f"an MCP server needs a name (name=...), got {name!r}")
        self.name = name
        self.config = config
        for key, value in (*config.env.items(), *config.headers.items()):
            if is_secret_name(key) or looks_like_key(value.get_secret_value()):
                register_secret(value.get_secret_value())
        self._connection: Connection | None = None
        self._listing: list[mcp_types.Tool] | None = None
        self._starting: asyncio.Lock | None = None  # lives on the MCP loop

    # -- building ------------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        startup_timeout: float = 30.0,
    ) -> Self:
        """A server run as a process speaking MCP on its stdin and stdout; ``name`` defaults to the command's."""
        table = {"command": command, "args": tuple(args), "env": dict(env or {}), "startup_timeout": startup_timeout}
        if cwd is not None:
            table["cwd"] = str(cwd)
        return cls(_config(table, "MCPServer.stdio"), name=name or Path(command).stem)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Literal["http", "sse"] = "http",
        startup_timeout: float = 30.0,
    ) -> Self:
        """A running server at ``url``, over streamable HTTP (``transport="sse"``: the older SSE transport)."""
        table = {"url": url, "headers": dict(headers or {}), "transport": transport, "startup_timeout": startup_timeout}
        config = _config(table, "MCPServer.http")
        return cls(config, name=name or (urlsplit(url).hostname or "mcp"))

    @classmethod
    def sse(
        cls, url: str, *, name: str | None = None, headers: Mapping[str, str] | None = None, startup_timeout: float = 30
    ) -> Self:
        """A running server at ``url`` over the older HTTP+SSE transport."""
        return cls.http(url, name=name, headers=headers, transport="sse", startup_timeout=startup_timeout)

    def __repr__(self) -> str:
        where = self.config.command if self.config.command is not None else redact(self.config.url or "")
        return f"MCPServer({self.name!r}, {self.config.kind}: {where!r}, running={self.running})"

    def tools(self, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None) -> MCPTools:
        """Some of this server's tools for ``tools=``: those named in ``include`` (all by default), less ``exclude``."""
        return MCPTools(self, include, exclude)

    # -- lifecycle -----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a session with the server is open."""
        connection = self._connection
        return connection is not None and connection.session is not None

    def list_tools(self, *, timeout: float | None = None, deadline: Deadline | None = None) -> list[mcp_types.Tool]:
        """Start the server if needed and return the tools it lists (the SDK's ``Tool`` values).

        Bounded by ``deadline`` (or ``timeout`` seconds) and the server's ``startup_timeout``.
        """
        if deadline is None and timeout is not None:
            deadline = Deadline.after(timeout)
        return self._wait(self._listed, deadline, "list its tools")

    async def alist_tools(self, *, deadline: Deadline | None = None) -> list[mcp_types.Tool]:
        """Async ``list_tools``, bounded by ``deadline`` and the server's ``startup_timeout``."""
        return await self._await(self._listed, deadline, "list its tools")

    def close(self) -> None:
        """End the session and the server's process with its children (idempotent; a later use restarts it)."""
        if self._connection is not None:
            try:
                loop.submit(self._close).result(CLOSE_TIMEOUT)
            except TimeoutError:
                raise self._not_closed() from None

    async def aclose(self) -> None:
        """Async ``close``."""
        if self._connection is not None:
            try:
                await asyncio.wait_for(asyncio.wrap_future(loop.submit(self._close)), CLOSE_TIMEOUT)
            except TimeoutError:
                raise self._not_closed() from None

    def _not_closed(self) -> LLMToolSourceError:
        return LLMToolSourceError(
            f"MCP server {self.name!r} did not end within {CLOSE_TIMEOUT:g} s of being closed; a process that "
            "survives SIGKILL is stuck in the kernel, a remote server in its session's DELETE request",
            server=self.name,
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- calls ---------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call ``tool`` with ``arguments`` (cancelling this cancels the request at the server)."""
        return await asyncio.wrap_future(loop.submit(lambda: self._call(tool, arguments)))

    # -- on the MCP loop -----------------------------------------------------------------

    async def _listed(self) -> list[mcp_types.Tool]:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            connection = await self._connected()
            if self._listing is None:
                try:
                    listing = await connection.list_tools()
                except ConnectionLost as exc:
                    raise await self._failed("failed while listing its tools", exc) from None
                if not listing:
                    raise await self._failed("lists no tools", ConnectionLost("tools/list returned none"))
                self._listing = listing
            return self._listing

    async def _connected(self) -> Connection:
        connection = self._connection
        if connection is not None and connection.session is not None:
            return connection
        if connection is not None:
            await connection.close()
        self._listing = None
        require_sdk()
        connection = self._connection = Connection(self.config, self._tools_changed)
        _running.add(self)
        try:
            await connection.start()
        except ConnectionLost as exc:
            raise await self._failed("failed to start", exc) from None
        return connection

    def _tools_changed(self) -> None:
        self._listing = None  # the next call lists them again

    async def _call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        connection = self._connection
        if connection is None or connection.session is None:
            connection = await self._connected()
        try:
            result = await connection.call_tool(tool, arguments)
        except ConnectionLost as exc:
            raise await self._failed(f"failed while running tool {tool!r}", exc) from None
        return tool_result(result)

    async def _failed(self, what: str, exc: ConnectionLost) -> LLMToolSourceError:
        """The typed error for a failure; a lost connection is closed (the next use starts the server again)."""
        connection = self._connection
        stderr = connection.stderr_tail() if connection is not None else ""
        if connection is not None and not exc.protocol:
            self._connection = None
            await connection.close()
        shown = f"; it wrote on stderr:\n{stderr}" if stderr else ""
        if not stderr and self.config.command is not None:
            shown = " (it wrote nothing on stderr)"
        where = self.config.command if self.config.command is not None else redact(self.config.url or "")
        return LLMToolSourceError(
            f"MCP server {self.name!r} ({self.config.kind}: {where}) {what}: {exc.reason}{shown}",
            server=self.name,
            stderr=stderr,
        )

    async def _close(self) -> None:
        connection, self._connection, self._listing = self._connection, None, None
        if connection is not None:
            await connection.close()

    # -- waiting from other threads and loops --------------------------------------------

    def _bound(self, deadline: Deadline | None) -> tuple[float, bool]:
        """Seconds to wait and whether the call's deadline (not the startup timeout) is the nearer bound."""
        limit = self.config.startup_timeout
        if deadline is not None and deadline.remaining() < limit:
            return max(deadline.remaining(), 0.0), True
        return limit, False

    def _wait(self, make: Callable[[], Awaitable[T]], deadline: Deadline | None, what: str) -> T:
        seconds, by_deadline = self._bound(deadline)
        started = time.monotonic()
        future = loop.submit(make)
        try:
            return future.result(seconds)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise self._timed_out(what, by_deadline, time.monotonic() - started) from None

    async def _await(self, make: Callable[[], Awaitable[T]], deadline: Deadline | None, what: str) -> T:
        seconds, by_deadline = self._bound(deadline)
        started = time.monotonic()
        try:
            return await asyncio.wait_for(asyncio.wrap_future(loop.submit(make)), seconds)
        except TimeoutError:
            raise self._timed_out(what, by_deadline, time.monotonic() - started) from None

    def _timed_out(self, what: str, by_deadline: bool, waited: float) -> Exception:
        if by_deadline:
            return LLMDeadlineExceededError(
                f"the call's deadline passed while MCP server {self.name!r} was starting to {what} "
                f"({waited:.2f} s); give the call more time (timeout=) or start the server sooner",
                context={"mcp_server": self.name},
            )
        return LLMToolSourceError(
            f"MCP server {self.name!r} did not start and {what} within its startup_timeout of "
            f"{self.config.startup_timeout:g} s; check that it runs, or raise startup_timeout",
            server=self.name,
        )


class MCPTools:
    """Some tools of one server (``server.tools(include=..., exclude=...)``), for ``tools=``."""

    def __init__(self, server: MCPServer, include: Sequence[str] | None, exclude: Sequence[str] | None) -> None:
        for label, names in (("include", include), ("exclude", exclude)):
            if names is not None and (isinstance(names, str) or not all(isinstance(n, str) for n in names)):
                raise LLMConfigurationError(f"{label}= takes a list of tool names, got {names!r}")
        self.server = server
        self.include = tuple(include) if include is not None else None
        self.exclude = tuple(exclude or ())

    def __repr__(self) -> str:
        return f"MCPTools({self.server.name!r}, include={self.include!r}, exclude={self.exclude!r})"

    def pick(self, listing: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
        """The listed tools this selection keeps; a name it gives that the server lacks is an error."""
        names = [tool.name for tool in listing]
        unknown = [n for n in (*(self.include or ()), *self.exclude) if n not in names]
        if unknown:
            raise LLMConfigurationError(
                f"MCP server {self.server.name!r} has no tool named {', '.join(map(repr, unknown))}; "
                f"it has: {', '.join(names)}"
            )
        kept = [t for t in listing if (self.include is None or t.name in self.include) and t.name not in self.exclude]
        if not kept:
            raise LLMConfigurationError(
                f"include=/exclude= leave no tool of MCP server {self.server.name!r}; it has: {', '.join(names)}"
            )
        return kept


def _config(table: dict[str, Any], where: str) -> MCPServerConfig:
    try:
        return MCPServerConfig.model_validate(table)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'server'}: {e['msg']}" for e in exc.errors())
        raise LLMConfigurationError(f"{where}: {problems}") from None


def _close_all() -> None:
    """At interpreter exit: end every session still open, together."""
    servers = [server for server in list(_running) if server._connection is not None]
    if not servers:
        return

    async def close_all() -> None:
        await asyncio.gather(*(server._close() for server in servers), return_exceptions=True)

    try:
        loop.submit(close_all).result(CLOSE_TIMEOUT)
    except (concurrent.futures.TimeoutError, RuntimeError):
        return


loop.on_exit(_close_all)
