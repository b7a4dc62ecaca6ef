"""Conversation messages and the tool calls an assistant message may carry."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Message", "Role", "ToolCall"]

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """A request from the model to run one tool with JSON arguments."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = Field(default="{}", description="The arguments as the model sent them: a JSON text.")

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON (raises ``ValueError`` when they are not JSON)."""
        return json.loads(self.arguments or "{}")


class Message(BaseModel):
    """One turn of a conversation."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = Field(default=None, description="On a tool message: the call it answers.")
    name: str | None = Field(default=None, description="On a tool message: the tool's name.")

    @classmethod
    def system(cls, content: str) -> Message:
        """A system prompt."""
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> Message:
        """A user turn."""
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str | None = None, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        """An assistant turn, with optional tool calls."""
        return cls(role="assistant", content=content, tool_calls=tool_calls)

    @classmethod
    def tool(cls, tool_call_id: str, content: str, name: str | None = None) -> Message:
        """The result of a tool call, sent back to the model."""
        return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name)
