"""Wrong constructor arguments as one ``LLMConfigurationError`` naming each of them, never pydantic's
``ValidationError``: what a message, a tool call or a reasoning part refuses, and why.

``Refusing`` converts at the entry points (the constructor, ``model_validate``), not in a validator, so that a
model validated inside another (a tool call inside a message) is named with its path there
(``Message: tool_calls[0].name: Field required``)."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ValidationError

from llmplex.errors import LLMConfigurationError

__all__ = ["Refusing", "refusal"]


def refusal(owner: str, error: ValidationError) -> LLMConfigurationError:
    """pydantic's complaints about ``owner``'s arguments, each named with its path (``tool_calls[0].id``) and the
    type it got (never the value: it may be a secret or a whole file)."""
    problems = []
    for item in error.errors(include_url=False, include_input=True):
        head, *rest = item["loc"] or ("(the value)",)
        name = str(head) + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in rest)
        if item["type"] == "missing":
            problems.append(f"{name}: Field required")
            continue
        got = "an unknown argument" if item["type"] == "extra_forbidden" else type(item.get("input")).__name__
        problems.append(f"{name}: {item['msg']} (got {got})")
    return LLMConfigurationError(f"{owner}: {'; '.join(problems)}")


class Refusing(BaseModel):
    """A model whose wrong arguments are an ``LLMConfigurationError`` (``refusal``), built or validated."""

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise refusal(type(self).__name__, exc) from None

    # pydantic validates a model nested in another without calling this (as with its own __init__): the
    # outer model's entry point names the error with its whole path
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> Self:
        """``BaseModel.model_validate``, wrong arguments refused as ``LLMConfigurationError``."""
        try:
            return super().model_validate(obj, **options)
        except ValidationError as exc:
            raise refusal(cls.__name__, exc) from None

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **options: Any) -> Self:
        """``BaseModel.model_validate_json``, wrong arguments refused as ``LLMConfigurationError``."""
        try:
            return super().model_validate_json(json_data, **options)
        except ValidationError as exc:
            raise refusal(cls.__name__, exc) from None
