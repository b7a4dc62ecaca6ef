"""Reasoning of one provider's format carried through another API's wire shape, and back.

An Anthropic client cannot hold an OpenAI reasoning item, nor an OpenAI client
an Anthropic thinking block. The gateway writes such a part into the opaque
field the client's API keeps and sends back unchanged (a thinking block's
``signature``, a reasoning item's ``encrypted_content``) as ``PREFIX`` and the
part's JSON in base64; sent back through the gateway, it is that part again.
"""

from __future__ import annotations

import base64
import binascii
import json

from pydantic import ValidationError

from llmplex.errors import LLMConfigurationError
from llmplex.gateway.errors import GatewayError
from llmplex.types import ReasoningPart

__all__ = ["PREFIX", "carry", "is_carried", "uncarry"]

PREFIX = "llmplex-reasoning."
"""Starts a field that carries a reasoning part (base64 JSON after it)."""


def carry(part: ReasoningPart) -> str:
    """``part`` as the text of an opaque field."""
    return PREFIX + base64.b64encode(json.dumps(part.model_dump(mode="json")).encode()).decode("ascii")


def is_carried(text: object) -> bool:
    """Whether ``text`` is a field the gateway wrote with ``carry``."""
    return isinstance(text, str) and text.startswith(PREFIX)


def uncarry(text: str) -> ReasoningPart:
    """The part ``carry`` wrote; a 400 when ``text`` was altered."""
    try:
        return ReasoningPart.model_validate(json.loads(base64.b64decode(text[len(PREFIX) :], validate=True)))
    except (binascii.Error, ValueError, ValidationError, LLMConfigurationError):
        raise GatewayError(
            400,
            f"reasoning whose opaque field starts with {PREFIX} is not reasoning this gateway wrote; "
            "send reasoning back unchanged",
            param="messages",
        ) from None
