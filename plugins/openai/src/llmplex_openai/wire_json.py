"""The JSON view of what the API answered, whether it arrived decoded or as one of the SDK's models."""

from __future__ import annotations

from typing import Any

from openai import BaseModel

__all__ = ["as_json"]


def as_json(raw: Any) -> Any:
    """``raw`` as decoded JSON: an SDK model becomes the fields it was given (``to_dict()``), anything else is
    returned as is."""
    if type(raw) is dict:  # the lean path's decoded JSON: no class check on every stream event
        return raw
    return raw.to_dict() if isinstance(raw, BaseModel) else raw
