"""The one place a request is let in: who is calling, and may they make this call.

The gateway asks its ``Authenticator`` twice per request, before anything is
sent to a provider: ``authenticate`` turns the credential the client sent into a
``Caller`` (or refuses with a 401), and ``admit`` decides whether that caller may
send this call (a 403 for a model it may not use, a 429 over its limits or
budget) and may add call arguments (``fallbacks`` cut to the models the caller
may use, a ``budget`` tracker). The default, ``MasterKeyAuthenticator``, lets in
the holder of the master key and nobody else; virtual keys plug in here.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

from llmplex.gateway.errors import GatewayError

__all__ = ["Admission", "Authenticator", "CallTicket", "Caller", "MasterKeyAuthenticator"]


@dataclass(frozen=True)
class Caller:
    """Who sent a request: ``name`` is what metrics and logs show (never the key itself)."""

    name: str

    def may_use(self, model: str) -> bool:
        """Whether this caller may call ``model`` (as the request named it); every model by default."""
        return True


@dataclass(frozen=True)
class CallTicket:
    """One call about to be sent: the endpoint, the model as asked, whether it streams, an input estimate, and
    the most it may cost (``worst_case_usd``: what a key's budget reserves; ``None`` when not worked out)."""

    endpoint: str
    model: str
    stream: bool
    estimated_input_tokens: int = 0
    worst_case_usd: Decimal | None = None


@dataclass(frozen=True)
class Admission:
    """A call let in: ``call_args`` are added to the call's keyword arguments (``fallbacks``, ``budget``...)."""

    caller: Caller
    call_args: Mapping[str, Any] = field(default_factory=dict)


class Authenticator(Protocol):
    """Decides who a request is from and whether its call may be sent; raises ``GatewayError`` to refuse."""

    async def authenticate(self, credential: str | None) -> Caller:
        """The caller holding ``credential`` (a bearer token or ``x-api-key``); 401 when there is none."""
        ...

    async def admit(self, caller: Caller, ticket: CallTicket) -> Admission:
        """Let ``ticket`` through for ``caller``, or raise (403 model not allowed, 429 limits or budget)."""
        ...


def unauthorized(reason: str) -> GatewayError:
    """The 401 every refused credential gets (it never repeats the credential)."""
    return GatewayError(
        401,
        f"{reason}; send the gateway key as 'Authorization: Bearer KEY' or 'x-api-key: KEY'",
        code="invalid_api_key",
        kind="auth",
    )


class MasterKeyAuthenticator:
    """Lets in the master key's holder (caller name ``master``), for every model, with no limits."""

    def __init__(self, master_key: str) -> None:
        self._key = master_key.encode()

    def __repr__(self) -> str:
        return "MasterKeyAuthenticator()"

    async def authenticate(self, credential: str | None) -> Caller:
        """The master caller, or a 401."""
        if credential is None:
            raise unauthorized("no API key was sent")
        if not hmac.compare_digest(credential.encode("utf-8", "surrogatepass"), self._key):
            raise unauthorized("the API key is not valid for this gateway")
        return Caller("master")

    async def admit(self, caller: Caller, ticket: CallTicket) -> Admission:
        """Every call of the master key is let in unchanged."""
        return Admission(caller)
