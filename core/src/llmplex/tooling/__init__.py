"""Tools: declarations from Python functions, argument validation, and the tool-calling loop."""

from llmplex.tooling.context import ToolContext

__all__ = ["ToolContext"]
