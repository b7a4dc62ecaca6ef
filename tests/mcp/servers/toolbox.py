"""An MCP server written with the SDK's own server API, for llmplex's MCP tests.

``python toolbox.py stdio`` speaks on stdin/stdout; ``python toolbox.py http PORT``
(streamable HTTP at /mcp) or ``sse PORT`` (/sse) listens on 127.0.0.1. Each tool
plays one part: a normal answer, a hang, a crash mid-call, an error result, a
JSON-RPC error, an image, a tool list that changes, a child process, structured output.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

server = MCPServer("toolbox")
MARK = os.environ.get("TOOLBOX_MARK_DIR")


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG: red pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def mark(name: str) -> None:
    if MARK:
        Path(MARK, name).write_text("1")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
async def hang(seconds: float = 3600) -> str:
    """Never answer (for a long time); records at the server when the request is cancelled."""
    mark("hang-started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        mark("hang-cancelled")
        raise
    return "woke up"


@server.tool()
def crash(note: str = "") -> str:
    """Die in the middle of the call, after a word on stderr."""
    sys.stderr.write(f"toolbox: crashing on purpose ({note}) secret={os.environ.get('TOOLBOX_SECRET', '')}\n")
    sys.stderr.flush()
    os._exit(7)


@server.tool()
def lookup(city: str) -> str:
    """Fails with an error result for an unknown city."""
    if city != "Paris":
        raise ToolError(f"no weather for {city!r}: only Paris is known")
    return "Paris: 18 C, sunny"


@server.tool()
def broken_protocol() -> str:
    """Answers with a JSON-RPC error instead of a result."""
    raise MCPError(-32603, "the toolbox's internals failed")


@server.tool()
def picture() -> list[str | Image]:
    """An image and a caption."""
    return ["a 2x2 red square", Image(data=png(), format="png")]


@server.tool()
def forecast(city: str) -> dict[str, object]:
    """Structured output."""
    return {"city": city, "high": 21, "low": 12}


@server.tool()
async def unlock(ctx: Context) -> str:
    """Adds the tool 'secret_door' and tells the client the tool list changed."""

    def secret_door() -> str:
        """Behind the door."""
        return "treasure"

    server.add_tool(secret_door)
    await ctx.session.send_tool_list_changed()  # notifications/tools/list_changed on this session
    return "unlocked"


@server.tool()
def spawn() -> int:
    """Starts a child process that would outlive a careless client; returns its pid."""
    child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL)
    return child.pid


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
