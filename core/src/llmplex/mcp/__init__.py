"""MCP servers as sources of tools: ``complete(model, prompt, tools=[MCPServer.stdio(...), my_function])``.

Needs the ``llmplex[mcp]`` extra (the official ``mcp`` SDK), imported only when
a server starts. The tool loop sees only ``Tool`` values: each MCP tool becomes
one whose async handler calls the server.
"""

from llmplex.mcp.server import MCPServer, MCPTools

__all__ = ["MCPServer", "MCPTools"]
