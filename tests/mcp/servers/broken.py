"""MCP servers that fail in the ways llmplex must report: ``python broken.py exit|empty|silent``.

exit: prints a line with a secret on stderr and exits before speaking MCP; noisy: 120 kB on stderr, then exits;
empty: a working server that lists no tools; silent: never answers initialize.
"""

from __future__ import annotations

import os
import sys
import time

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "noisy":
        sys.stderr.write("noise " * 20000 + "\nbroken: the last words\n")
        sys.exit(4)
    if mode == "exit":
        sys.stderr.write(f"broken: cannot open database (password={os.environ.get('DB_PASSWORD', '')})\n")
        sys.exit(3)
    elif mode == "silent":
        time.sleep(3600)
    else:
        from mcp.server.mcpserver import MCPServer

        MCPServer("empty").run("stdio")
