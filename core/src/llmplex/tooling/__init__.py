"""The tool-calling loop: running handlers with validated arguments, rounds until a final answer.

``ToolContext`` lives in ``llmplex.types`` (the engine carries it); it is re-exported here.
"""

from llmplex.types.tool_context import ToolContext

__all__ = ["ToolContext"]
