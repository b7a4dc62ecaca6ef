"""LiteLLM's exception classes → the core taxonomy.

LiteLLM raises its own subclasses of the OpenAI SDK's exceptions whatever the
provider behind it; they are told apart by class first and HTTP status second.
Nothing here imports LiteLLM: an exception can only be LiteLLM's once LiteLLM
has been imported by a request.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from llmplex.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMBudgetExceededError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMServerError,
    LLMTimeoutError,
)

__all__ = ["classify_error"]

_QUOTA_MARKERS = ("insufficient_quota", "billing", "quota exceeded", "exceeded your current quota")
_MISSING_KEY_MARKERS = ("missing credentials", "api_key client option must be set", "api key not found")
_KEY_HINT = (
    "set api_key for this provider in config, or the provider's own environment variable "
    "(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)"
)


def _headers(error: BaseException) -> dict[str, str]:
    for found in (
        getattr(error, "litellm_response_headers", None),
        getattr(error, "headers", None),
        getattr(getattr(error, "response", None), "headers", None),
    ):
        if isinstance(found, Mapping) and found:
            return {str(k): str(v) for k, v in found.items()}
    return {}


def _message(error: BaseException) -> str:
    return str(getattr(error, "message", None) or error)


def _api_fields(error: BaseException) -> dict[str, Any]:
    status = getattr(error, "status_code", None)
    return {
        "status_code": status if isinstance(status, int) else None,
        "response_body": getattr(error, "body", None),
        "headers": _headers(error),
        "context": {"litellm_error": type(error).__name__, "llm_provider": getattr(error, "llm_provider", None)},
        "cause": error,
    }


def _by_status(error: BaseException, status: int | None) -> LLMError:
    text = _message(error)
    fields = _api_fields(error)
    if any(marker in f"{text} {fields['response_body']}".lower() for marker in _QUOTA_MARKERS):
        return LLMQuotaExhaustedError(f"quota or billing exhausted, retrying will not help: {text}", **fields)
    if status == 429:
        return LLMRateLimitError(text, **fields)
    if status in (401, 403):
        return _rejected_credentials(error)
    if status == 402:
        return LLMQuotaExhaustedError(f"payment required, retrying will not help: {text}", **fields)
    if status is not None and 400 <= status < 500 and status != 408:
        return LLMBadRequestError(text, **fields)
    return _server_error(text, fields)


def _rejected_credentials(error: BaseException) -> LLMAuthenticationError:
    fields = _api_fields(error)
    fields["status_code"] = fields["status_code"] or 401
    return LLMAuthenticationError(f"the provider rejected the credentials ({_message(error)}); {_KEY_HINT}", **fields)


def _server_error(text: str, fields: dict[str, Any]) -> LLMServerError:
    return LLMServerError(text, **fields)


def _transport_failure(error: BaseException) -> LLMError | None:
    """A timeout or refused connection LiteLLM wrapped in another class (it reports some as 500s)."""
    seen: set[int] = set()
    current: BaseException | None = error.__cause__ or error.__context__
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names = {cls.__name__ for cls in type(current).__mro__}
        if names & {"APITimeoutError", "TimeoutException", "TimeoutError"}:
            return LLMTimeoutError(f"the request timed out: {current}", cause=error)
        if names & {"APIConnectionError", "ConnectError", "ConnectionError", "ClientConnectorError"}:
            return LLMConnectionError(f"could not reach the provider: {current}", cause=error)
        current = current.__cause__ or current.__context__
    return None


def _classify_litellm(error: BaseException, litellm: ModuleType) -> LLMError | None:
    text = _message(error)
    if any(marker in text.lower() for marker in _MISSING_KEY_MARKERS):
        return LLMConfigurationError(f"no API key for the provider ({text}); {_KEY_HINT}", cause=error)
    if isinstance(error, litellm.BudgetExceededError):
        return LLMBudgetExceededError(f"LiteLLM's spend budget is exhausted: {text}", cause=error)
    if isinstance(error, litellm.LiteLLMUnknownProvider):
        return LLMConfigurationError(
            f"LiteLLM does not know the provider of this model ({text}); write the model as "
            "'litellm:<provider>/<model>', e.g. 'litellm:anthropic/claude-3-opus' or 'litellm:openai/<name>'",
            cause=error,
        )
    if isinstance(error, litellm.ContextWindowExceededError):
        return LLMBadRequestError(
            f"the prompt does not fit the model's context window ({text}); shorten the messages",
            **_api_fields(error),
        )
    if isinstance(error, litellm.ContentPolicyViolationError):
        return LLMRefusalError(f"the provider's content policy blocked the request: {text}", refusal=text, cause=error)
    if isinstance(error, litellm.Timeout):
        return LLMTimeoutError(f"the request timed out: {text}", cause=error)
    if isinstance(error, litellm.APIConnectionError):
        return LLMConnectionError(f"could not reach the provider: {text}", cause=error)
    if isinstance(error, litellm.AuthenticationError):
        return _rejected_credentials(error)
    if isinstance(error, litellm.RateLimitError):
        return _by_status(error, 429)
    if isinstance(error, (litellm.ServiceUnavailableError, litellm.InternalServerError, litellm.BadGatewayError)):
        return _transport_failure(error) or _server_error(text, _api_fields(error))
    status = getattr(error, "status_code", None)
    if isinstance(error, litellm.APIError) or isinstance(status, int):
        return _by_status(error, status if isinstance(status, int) else None)
    return None


def classify_error(error: BaseException) -> LLMError | None:
    """The core error for a LiteLLM exception; ``None`` for anything else (core's fallback decides)."""
    litellm = sys.modules.get("litellm")
    if litellm is None or not type(error).__module__.startswith(("litellm", "openai")):
        return None
    return _classify_litellm(error, litellm)
