"""Pydantic models built from values that already have their fields' types, without validating them again.

What ``model_construct`` does, without its per-call work (defaults, aliases, the fields set worked out): for the
objects built on every call or streamed chunk (a prompt's request, a text or usage event, a usage, the final
answer). The caller vouches for the values; each caller's tests check the result equals the validated model.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["assembled"]

_Model = TypeVar("_Model", bound=BaseModel)

_new = object.__new__
_set_dict, _set_fields_set, _set_extra, _set_private = (
    BaseModel.__dict__[name].__set__
    for name in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
)
"""The setters of the four slots a pydantic model's instance holds (what ``model_construct`` sets)."""


def assembled(
    cls: type[_Model], values: dict[str, Any], fields_set: set[str], private: dict[str, Any] | None = None
) -> _Model:
    """An instance of ``cls`` holding ``values`` (every field, in the fields' order) as they are, with
    ``fields_set`` as its fields set and ``private`` as its private attributes; no extra fields."""
    model: _Model = _new(cls)
    _set_dict(model, values)
    _set_fields_set(model, fields_set)
    _set_extra(model, None)
    _set_private(model, private)
    return model
