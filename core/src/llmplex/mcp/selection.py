"""MCP servers in ``tools=``: which of their tools a call gets, and under which names.

The naming rule: a tool keeps its server's name for it, made valid for
providers (a character other than a letter, digit, ``_`` or ``-`` becomes
``_``, and it is cut to 64). When that name is taken by a tool of another
server in the same call, or by a local tool, the server's tools of that name
are called ``<server>__<tool>`` instead (the server's name made valid the
same way); local tools never change name.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llmplex.errors import LLMConfigurationError
from llmplex.mcp.server import MCPServer, MCPTools
from llmplex.reliability.deadline import Deadline
from llmplex.types.tool_result import ToolResult
from llmplex.types.tools import Tool

if TYPE_CHECKING:
    import mcp_types

__all__ = ["MCPTools", "atools_for", "is_source", "servers_in", "tools_for"]

_INVALID = re.compile(r"[^A-Za-z0-9_\-]")


class MCPHandler:
    """Runs one tool of one server; an async handler, so the tool loop cancels it at the call's deadline."""

    def __init__(self, server: MCPServer, tool: str) -> None:
        self.server = server
        self.tool = tool

    async def __call__(self, **arguments: Any) -> ToolResult:
        return await self.server.call(self.tool, arguments)

    def __repr__(self) -> str:
        return f"MCPHandler({self.server.name!r}, {self.tool!r})"


def is_source(item: object) -> bool:
    """Whether a ``tools=`` item is an MCP server or a selection of its tools."""
    return isinstance(item, (MCPServer, MCPTools))


def servers_in(items: Sequence[Any]) -> list[MCPServer]:
    """The servers the ``tools=`` items use."""
    return [item if isinstance(item, MCPServer) else item.server for item in items if is_source(item)]


def tools_for(items: Sequence[Any], local_names: set[str], deadline: Deadline | None) -> list[Any]:
    """``items`` with every MCP source replaced by its tools (servers started and listed, bound by ``deadline``)."""
    listings = {id(server): server.list_tools(deadline=deadline) for server in servers_in(items)}
    return _expand(items, listings, local_names)


async def atools_for(items: Sequence[Any], local_names: set[str], deadline: Deadline | None) -> list[Any]:
    """Async ``tools_for``: the servers start together."""
    servers = {id(server): server for server in servers_in(items)}
    found = await asyncio.gather(*(server.alist_tools(deadline=deadline) for server in servers.values()))
    return _expand(items, dict(zip(servers, found, strict=True)), local_names)


def _expand(items: Sequence[Any], listings: dict[int, list[mcp_types.Tool]], local_names: set[str]) -> list[Any]:
    chosen: list[tuple[MCPServer, list[mcp_types.Tool]]] = []
    for item in items:
        if isinstance(item, MCPServer):
            chosen.append((item, listings[id(item)]))
        elif isinstance(item, MCPTools):
            chosen.append((item.server, item.pick(listings[id(item.server)])))
    counts = Counter(_valid(tool.name) for _, tools in chosen for tool in {t.name: t for t in tools}.values())
    clashing = {n for n, c in counts.items() if c > 1 or n in local_names}
    seen: set[str] = set()
    built: list[list[Tool]] = []
    for server, tools in chosen:
        built.append([_tool(server, tool, clashing, seen) for tool in tools])
    out: list[Any] = []
    groups = iter(built)
    for item in items:
        out.extend(next(groups) if is_source(item) else [item])
    return out


def _tool(server: MCPServer, tool: mcp_types.Tool, clashing: set[str], seen: set[str]) -> Tool:
    name = _valid(tool.name)
    if name in clashing:
        name = _valid(f"{_valid(server.name)}__{name}")
    if name in seen:
        raise LLMConfigurationError(
            f"tool {tool.name!r} of MCP server {server.name!r} is in tools= twice (the server given twice, or two "
            "servers of that name); give each server once and a name of its own (name=)"
        )
    seen.add(name)
    description = tool.description or tool.title or ""
    parameters = dict(tool.input_schema) or {"type": "object", "properties": {}}
    return Tool(name=name, description=description, parameters=parameters, handler=MCPHandler(server, tool.name))


def _valid(name: str) -> str:
    return _INVALID.sub("_", name)[:64] or "_"
