"""Conformance check of HTTP plugins: a hostile model string never leaves the documented host and path.

The kit sends the class's ``model`` once to learn the documented address (method,
``Host``, path and query), then sends model strings an attacker would write:
``#``, ``?``, ``..``, ``/``, ``@``, ``%2F``, backslashes, whitespace, line breaks
and control characters. Each must be refused before anything is sent (an
``LLMConfigurationError`` or ``LLMBadRequestError`` while nothing, not even an
unreadable request, reached the kit's server: a request sent to another host
fails with a connection error instead) or reach the same host, method and query, with a
path that differs only inside the segment that carries the model, where the
hostile string is percent-encoded (it decodes back to exactly what was given).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from llmplex.client import Client
from llmplex.errors import LLMBadRequestError, LLMConfigurationError, LLMError
from llmplex.testing.kit_base import KitBase
from llmplex.testing.server import Received, WireServer

__all__ = ["AddressChecks", "hostile_models", "steering"]

_PCHAR = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%!$&'()*+,;=:@")
"""What a path segment may hold unencoded (RFC 3986 ``pchar``)."""


def hostile_models(model: str) -> list[str]:
    """Model strings that would change the host, path or query if spliced into a URL: each starts with
    ``model`` (a plugin may route by a model's first letters) but ``..``, which no model is named."""
    return [
        f"{model}#fragment",
        f"{model}?alt=steered&key=stolen",
        f"{model}/../../../steered",
        f"{model}/..",
        f"{model}/steered",
        f"{model}%2F..%2Fsteered",
        f"{model}/%2e%2e/steered",
        f"{model}\\..\\steered",
        f"{model}@evil.example",
        f"{model}@evil.example:443/steered",
        f"{model} steered",
        f"{model}\tsteered",
        f"{model}\r\nHost: evil.example",
        f"{model}\x00steered",
        "..",
    ]


def steering(documented: Received, model: str, received: Received, hostile: str) -> str | None:
    """What in ``received`` (sent for ``hostile``) left the address ``documented`` had (sent for ``model``);
    ``None`` when nothing did."""
    for what, want, got in (
        ("method", documented.method, received.method),
        ("Host header", documented.headers.get("host"), received.headers.get("host")),
        ("query", dict(documented.query), dict(received.query)),
    ):
        if want != got:
            return f"the {what} changed from {want!r} to {got!r}"
    if any("evil.example" in value for value in received.headers.values()):
        return "a header carries what followed a line break in the model"
    want_segments, got_segments = documented.path.split("/"), received.path.split("/")
    if len(want_segments) != len(got_segments):
        return f"the path {received.path!r} has other segments than the documented {documented.path!r}"
    for want, got in zip(want_segments, got_segments, strict=True):
        decoded = unquote(want)
        if model not in decoded:
            if want != got:
                return f"the path {received.path!r} is not the documented {documented.path!r}"
            continue
        if not set(got) <= _PCHAR or got in (".", ".."):
            return f"the model's path segment {got!r} is not percent-encoded"
        if unquote(got) != decoded.replace(model, hostile, 1):
            return f"the model's path segment {got!r} does not decode to the model given"
    return None


class AddressChecks(KitBase):
    """Addresses cannot be steered (HTTP plugins)."""

    def _sent_for(self, llm: Client, transport: WireServer, model: str) -> Received | None:
        """The one request a call to ``model`` sent; ``None`` when the model was refused before sending."""
        before, unreadable = len(transport.received), len(transport.malformed)
        self.fake_response(transport, self.reply("ok"))
        try:
            llm.complete(f"{self.prefix}:{model}", "hi")
        except (LLMConfigurationError, LLMBadRequestError) as error:
            if len(transport.received) == before and len(transport.malformed) == unreadable:
                return None  # refused before sending
            if len(transport.received) == before:
                raise AssertionError(f"the model {model!r} made a request the server could not read") from error
        except LLMError:
            pass  # what the answer says is not this check's concern: where the request went is
        sent = transport.received[before:]
        assert len(transport.malformed) == unreadable, f"the model {model!r} made a request the server could not read"
        assert len(sent) == 1, (
            f"the model {model!r} sent {len(sent)} requests to the documented host, not one: a request that "
            "went to another host never reached it"
        )
        return sent[0]

    def test_a_hostile_model_never_leaves_the_documented_host_and_path(self, llm: Client, transport: Any) -> None:
        """``#``, ``?``, ``..``, ``/``, ``@``, whitespace and control characters in a model string are
        percent-encoded or refused: they never change the host, the path or the query."""
        documented = self._sent_for(llm, transport, self.model)
        assert documented is not None, f"the plugin refused its own model {self.model!r}"
        for hostile in hostile_models(self.model):
            received = self._sent_for(llm, transport, hostile)
            problem = None if received is None else steering(documented, self.model, received, hostile)
            assert problem is None, f"model {hostile!r}: {problem}"
