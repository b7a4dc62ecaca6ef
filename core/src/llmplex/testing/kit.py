"""``ProviderConformanceTests``: the standard tests every provider plugin must pass.

A plugin's test module subclasses the base class, declares what the provider is
and can do, and fakes its transport. An HTTP plugin subclasses
``HTTPConformanceTests`` instead and only
translates the kit's scenarios into its API's JSON (a
``WireAdapter``); any other transport (a CLI, an
in-process backend) implements the methods below itself:

* the ``transport`` fixture sets the fake up and returns a handle the methods receive;
* ``fake_response(transport, reply)`` queues one answer in the provider's wire shape;
* ``fake_stream(transport, reply)`` queues the same answer as a stream;
* ``fake_error(transport, error)`` queues one failure of the given kind;
* ``fake_stall(transport, seconds)`` queues an answer that does not come;
* ``sent_payloads(transport)`` returns the request bodies that reached the wire;
* ``sent_requests(transport)`` reads them back as ``SentRequest``.

Answers are consumed in the order they were queued. Capability flags (see
``KitBase``) decide which checks apply. A standard
test may only be overridden with a new function marked
``pytest.mark.xfail(reason=...)``: any other override, deletion or skip fails the
kit (see ``llmplex.testing.enforcement``).
"""

from __future__ import annotations

from typing import Any

from llmplex.testing.check_errors import ErrorChecks
from llmplex.testing.check_money import MoneyChecks
from llmplex.testing.check_parts import PartChecks
from llmplex.testing.check_reasoning import ReasoningChecks
from llmplex.testing.check_requests import RequestChecks
from llmplex.testing.check_responses import ResponseChecks
from llmplex.testing.check_runtime import RuntimeChecks
from llmplex.testing.check_setup import SetupChecks
from llmplex.testing.enforcement import check_subclass
from llmplex.testing.kit_base import CITY_SCHEMA, SECRET, WEATHER_CALL, WEATHER_TOOL

__all__ = ["CITY_SCHEMA", "SECRET", "WEATHER_CALL", "WEATHER_TOOL", "ProviderConformanceTests"]


class ProviderConformanceTests(
    RuntimeChecks, ErrorChecks, MoneyChecks, ReasoningChecks, ResponseChecks, PartChecks, RequestChecks, SetupChecks
):
    """Subclass me (named ``Test...``) in your plugin's tests.

    Declare:
        prefix: the provider prefix your entry point serves.
        model: a model name to send requests to.
        sent_model: the name the provider receives for ``model`` when the plugin
            rightly sends another (LiteLLM's ``openai/gemma`` reaches the server as
            ``gemma``); default: ``model`` as routed.
        settings: the provider settings the test client uses (no key needed).
        secret_setting: the settings field holding the API key (``None`` if there
            is none); the kit puts a known secret there and checks that it never leaks.
        supports_tools, supports_native_structured_output, supports_streaming,
        supports_response_chains: must equal the ``Capabilities`` the plugin registers.
        supports_async: the plugin implements ``llmplex_acall`` itself.
        supports_parallel_tool_calls: one assistant turn may carry several tool calls
            (with tools; default ``True``).
        usage_fields: the ``Usage`` fields the provider reports (default: input,
            output, cached and reasoning tokens); the others must stay 0.
        reports_refusals: the provider has a refusal field or stop reason (default ``True``).
        reports_response_id: answers carry an id (default ``True``).
        always_sent_options: core names of options the provider requires and the
            plugin always sends (``{"max_tokens"}`` for Anthropic).
        unsupported_error_kinds: error kinds the provider cannot produce, each with
            the reason; their tests are reported as xfailed with that reason.
        input_parts: the kinds of content part (``"image"``, ``"document"``,
            ``"audio"``) the provider instance takes, as its ``Capabilities.input_parts``
            say; each must reach the wire with its bytes, the others be refused unsent.
        keeps_reasoning: answers carry reasoning the next turn must send back (the provider's
            ``Capabilities.reasoning_formats``); the wire adapter puts ``Reply.reasoning`` where the
            provider puts its signature.
        reports_retry_after: a rate-limit answer can say how long to wait (HTTP
            ``Retry-After``); ``False`` when the transport has no such field (a CLI's
            result), and then ``retry_after`` must stay ``None``.
    """

    # pytest runs inherited tests base first: setup, requests, responses, errors, then the slow runtime checks.

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_subclass(cls, ProviderConformanceTests)
