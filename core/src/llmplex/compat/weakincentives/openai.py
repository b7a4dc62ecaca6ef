"""``weakincentives.adapters.openai`` on llmplex: the adapter and the module-level helpers, by the same names.

``OpenAIAdapter`` here builds its SDK client as weakincentives did, with this
module's ``create_openai_client`` (looked up when the adapter is built, so a
test that replaces it is obeyed), and sends every request through that client
inside llmplex's engine. The flat ``llmplex.compat.weakincentives.OpenAIAdapter``
uses llmplex's own openai provider settings instead. The ``_``-prefixed
helpers behave as weakincentives 0.18's, for code and tests that call them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from importlib import import_module
from typing import Any, Final

from llmplex.compat.weakincentives.adapters import OpenAIAdapter as _FlatOpenAIAdapter
from llmplex.compat.weakincentives.config import OpenAIClientConfig, OpenAIModelConfig
from llmplex.compat.weakincentives.errors import ThrottleError
from llmplex.compat.weakincentives.provider_errors import (
    coerce_retry_after,
    normalize_throttle,
    openai_error_payload,
    openai_retry_after,
)
from llmplex.compat.weakincentives.responses_helpers import (
    ProviderChoiceData,
    ProviderToolCallData,
    choice_from_response,
    extract_all_tool_calls,
    normalize_input_messages,
    normalize_tool_arguments,
    responses_tool_choice,
    responses_tool_spec,
    tool_call_from_output,
)
from llmplex.compat.weakincentives.throttle import ThrottlePolicy

__all__ = ["OpenAIAdapter", "OpenAIClientConfig", "OpenAIModelConfig", "create_openai_client"]

_ERROR_MESSAGE: Final[str] = (
    "OpenAI support requires the 'openai' package: `pip install llmplex-openai` "
    "(weakincentives said: install it with `uv sync --extra openai` or `pip install weakincentives[openai]`)."
)


def _load_openai_module() -> Any:
    try:
        return import_module("openai")
    except ModuleNotFoundError as error:
        raise RuntimeError(_ERROR_MESSAGE) from error


def create_openai_client(**kwargs: object) -> Any:
    """``openai.OpenAI(**kwargs)``; a ``RuntimeError`` saying what to install when the SDK is missing."""
    return _load_openai_module().OpenAI(**kwargs)


def _coerce_retry_after(value: object) -> timedelta | None:
    return coerce_retry_after(value)


def _retry_after_from_headers(headers: Mapping[str, Any] | None) -> timedelta | None:
    return coerce_retry_after({str(k).lower(): v for k, v in (headers or {}).items()}.get("retry-after"))


def _retry_after_from_error(error: object) -> timedelta | None:
    return openai_retry_after(error)


def _error_payload(error: object) -> dict[str, Any] | None:
    return openai_error_payload(error)


def _normalize_openai_throttle(error: Exception, *, prompt_name: str) -> ThrottleError | None:
    return normalize_throttle(
        error,
        prompt_name=prompt_name,
        provider="OpenAI",
        retry_after=_retry_after_from_error(error),
        payload=_error_payload(error),
    )


def _normalize_tool_arguments(arguments: object) -> str | None:
    return normalize_tool_arguments(arguments)


def _tool_call_from_output(output: object) -> ProviderToolCallData | None:
    return tool_call_from_output(output)


def _responses_tool_spec(spec: Mapping[str, Any], *, prompt_name: str) -> dict[str, Any]:
    return responses_tool_spec(spec, prompt_name=prompt_name)


def _responses_tool_choice(tool_choice: Any, *, prompt_name: str) -> Any:
    return responses_tool_choice(tool_choice, prompt_name=prompt_name)


def _normalize_input_messages(messages: Any, *, prompt_name: str) -> list[dict[str, Any]]:
    return normalize_input_messages(messages, prompt_name=prompt_name)


def _extract_all_tool_calls(response: object, *, prompt_name: str) -> tuple[list[ProviderToolCallData], Any, Any]:
    return extract_all_tool_calls(response, prompt_name=prompt_name)


def _choice_from_response(response: object, *, prompt_name: str) -> ProviderChoiceData:
    return choice_from_response(response, prompt_name=prompt_name)


class OpenAIAdapter(_FlatOpenAIAdapter):
    """weakincentives' ``OpenAIAdapter``: without ``client`` it builds one with ``create_openai_client``."""

    def __init__(
        self,
        *,
        model: str,
        model_config: OpenAIModelConfig | None = None,
        tool_choice: Any = "auto",
        client: Any = None,
        client_config: OpenAIClientConfig | None = None,
        client_factory: Callable[..., Any] | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
        throttle_policy: ThrottlePolicy | None = None,
        use_native_response_format: bool = True,
    ) -> None:
        if client is None and client_factory is None:
            client_factory = globals()["create_openai_client"]
        super().__init__(
            model=model,
            model_config=model_config,
            tool_choice=tool_choice,
            client=client,
            client_config=client_config,
            client_factory=client_factory,
            client_kwargs=client_kwargs,
            throttle_policy=throttle_policy,
            use_native_response_format=use_native_response_format,
        )
