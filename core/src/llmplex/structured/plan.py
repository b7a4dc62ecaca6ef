"""How one request gets structured output: native schema, forced tool call, or prompt instructions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, get_args

from llmplex.errors import LLMConfigurationError, LLMIncompleteError, LLMOutputParseError, LLMRefusalError
from llmplex.provider import Capabilities
from llmplex.reliability.deadline import Deadline
from llmplex.structured.extract import extract_json
from llmplex.structured.schema import OutputInvalidError, OutputSpec, describe_errors
from llmplex.types import Message, OutputSchema, Response, Tool, ToolCall
from llmplex.types.messages import decode_json

__all__ = ["OutputPlan", "Strategy", "choose_strategy"]

Strategy = Literal["native", "tool", "prompt"]
_STRATEGIES: tuple[str, ...] = get_args(Strategy)


def choose_strategy(capabilities: Capabilities, requested: str | None = None) -> Strategy:
    """``requested`` when given, else native JSON schema, else a forced tool call, else the prompt."""
    if requested is not None:
        if requested not in _STRATEGIES:
            raise LLMConfigurationError(
                f"output_strategy must be one of {', '.join(_STRATEGIES)} (or None to choose), got {requested!r}"
            )
        return requested  # type: ignore[return-value]
    if capabilities.native_structured_output:
        return "native"
    return "tool" if capabilities.tools else "prompt"


@dataclass(frozen=True)
class OutputPlan:
    """The chosen strategy for one output spec, and how to read and re-ask answers under it."""

    spec: OutputSpec
    strategy: Strategy

    @property
    def name(self) -> str:
        """The schema's name (also the output tool's name)."""
        return self.spec.schema.name

    def request_output(self) -> OutputSchema | None:
        """The schema to send natively, if this plan sends one."""
        return self.spec.schema if self.strategy == "native" else None

    def output_tool(self) -> Tool | None:
        """The tool whose arguments are the answer, if this plan uses one."""
        if self.strategy != "tool":
            return None
        return Tool(
            name=self.name,
            description=f"Give the final answer as {self.name}: call this tool with the answer as its arguments.",
            parameters=self.spec.schema.json_schema,
        )

    def instructions(self, forced: bool) -> str | None:
        """Text to add to the system prompt (``forced``: the output tool is the tool_choice)."""
        if self.strategy == "prompt":
            schema = json.dumps(self.spec.schema.json_schema, separators=(",", ":"))
            return (
                "Answer with one JSON value that follows this JSON Schema, and nothing else "
                f"(no prose, no code fence):\n{schema}"
            )
        if self.strategy == "tool" and not forced:
            return f"When you have the final answer, give it by calling the tool {self.name!r}."
        return None

    # -- reading answers -------------------------------------------------------------

    def read(self, response: Response, deadline: Deadline | None = None) -> Any:
        """The validated value in ``response``; raises refusal, truncation or parse errors.

        An answer cut off at the token limit is accepted when the value in it is
        already whole and valid (small models often keep generating after it).
        Looking for the value in a long text answer stops at ``deadline``.
        """
        where = {"provider": response.provider or None, "model": response.model or None}
        if response.refusal is not None or response.finish_reason in ("refusal", "content_filter"):
            refusal = response.refusal or response.text or response.finish_reason
            raise LLMRefusalError(f"the model refused to answer: {refusal}", refusal=refusal, **where)
        call = self._output_call(response)
        raw = response.text if call is None else call.arguments
        try:
            return self._parse(raw, call is None, where, deadline)
        except LLMOutputParseError:
            if response.finish_reason != "length":
                raise
        raise LLMIncompleteError(
            f"the answer was cut off at the token limit before the {self.name} value was complete; raise max_tokens",
            reason="length",
            partial_text=raw,
            **where,
        )

    def _output_call(self, response: Response) -> ToolCall | None:
        """The call of the output tool in ``response`` (only under the tool strategy); else the answer is text."""
        if self.strategy != "tool":
            return None
        return next((c for c in response.tool_calls if c.name == self.name), None)

    def _parse(self, raw: str, is_text: bool, where: dict[str, Any], deadline: Deadline | None) -> Any:
        """Decode and validate ``raw``: JSON found in text, or a tool call's JSON arguments."""
        try:
            data = extract_json(raw, deadline) if is_text else decode_json(raw or "{}")
        except ValueError as exc:
            raise LLMOutputParseError(
                f"the answer is not JSON ({exc}); expected a {self.name} value",
                raw_text=raw,
                validation_errors=[{"path": "", "message": str(exc)}],
                **where,
            ) from None
        try:
            return self.spec.validate(data)
        except OutputInvalidError as exc:
            raise LLMOutputParseError(
                f"the answer does not match the {self.name} schema: {exc}",
                raw_text=raw,
                validation_errors=exc.errors,
                **where,
            ) from None

    def reask(self, response: Response, error: LLMOutputParseError) -> list[Message]:
        """The messages that show the model its invalid answer and ask again."""
        problems = describe_errors(error.validation_errors)
        feedback = f"Your answer was not a valid {self.name}: {problems}. Answer again, fixing these errors."
        call = self._output_call(response)
        if call is not None:
            answer = Message.assistant(response.text or None, (call,), response.reasoning)
            return [answer, Message.tool(call.id, feedback, self.name)]
        return [Message.assistant(response.text or "(empty answer)"), Message.user(feedback)]
