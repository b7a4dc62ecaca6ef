"""llmplex-echo: a provider plugin for a tiny JSON echo API, written as a third party would.

Wire format: ``POST {base_url}/v1/echo`` with ``{"model", "messages", "options"}``
answers ``{"id", "model", "text", "usage": {"input_tokens", "output_tokens"}, "finish_reason"}``
(``"stop"``, or ``"length"`` when ``max_tokens`` cut the text);
failures are an HTTP status with ``{"error": {"type", "message"}}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from pydantic import SecretStr

from llmplex.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConfigurationError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
)
from llmplex.hookspecs import hookimpl
from llmplex.http import sync_client
from llmplex.provider import Capabilities, ProviderInfo, ProviderSettings
from llmplex.types import Request, Response, Usage


class EchoSettings(ProviderSettings):
    """``api_key`` (``ECHO_API_KEY``) and the API's ``base_url`` (``ECHO_BASE_URL``)."""

    env_vars = {"api_key": ("ECHO_API_KEY",), "base_url": ("ECHO_BASE_URL",)}

    api_key: SecretStr | None = None
    base_url: str = "https://api.echo.example"


def _client(settings: EchoSettings) -> httpx.Client:
    key = settings.api_key.get_secret_value() if settings.api_key else None
    # llmplex.http's client holds every request to the call's deadline, the whole response included
    return sync_client(base_url=settings.base_url, headers={"authorization": f"Bearer {key}"} if key else None)


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Serve the ``echo:`` prefix."""
    register(
        ProviderInfo(
            name="echo",
            settings_model=EchoSettings,
            capabilities=Capabilities(streaming=False),
            default_model="echo-1",
            create_client=_client,
            description="Example third-party plugin: a JSON echo API.",
        )
    )


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    """Messages and the options that were set; tools cannot be expressed."""
    if request.tools or any(m.role == "tool" or m.tool_calls for m in request.messages):
        raise LLMConfigurationError("the echo provider has no tools: remove tools= and tool messages")
    messages = [{"role": m.role, "content": m.content or ""} for m in request.messages]
    return {"model": request.model, "messages": messages, "options": request.config.set_options()}


@hookimpl
def llmplex_call(payload: dict[str, Any], client: httpx.Client, timeout: float | None) -> Any:
    """POST the payload; an error status raises ``httpx.HTTPStatusError``."""
    answer = client.post("/v1/echo", json=payload, timeout=timeout)
    answer.raise_for_status()
    return answer.json()


@hookimpl
def llmplex_parse(raw: dict[str, Any]) -> Response:
    """The API's answer as a core Response; an answer cut by ``max_tokens`` ends with finish reason ``length``."""
    return Response(
        text=raw["text"],
        model=raw["model"],
        response_id=raw["id"],
        usage=Usage(**raw["usage"]),
        finish_reason="length" if raw.get("finish_reason") == "length" else "stop",
        raw=raw,
    )


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """Error statuses as the core taxonomy; core's fallback maps httpx timeouts, connection failures and the rest."""
    if not isinstance(error, httpx.HTTPStatusError):
        return None
    answer, status = error.response, error.response.status_code
    body = answer.json() if answer.headers.get("content-type", "").startswith("application/json") else answer.text
    detail = body.get("error", {}) if isinstance(body, dict) else {}
    facts: dict[str, Any] = {"status_code": status, "response_body": body, "headers": answer.headers, "cause": error}
    message = f"echo API answered {status}: {detail.get('message', answer.reason_phrase)}"
    if detail.get("type") == "insufficient_quota":
        return LLMQuotaExhaustedError(message, **facts)
    if status == 429:  # the error reads Retry-After (seconds or an HTTP date) and retry-after-ms from headers
        return LLMRateLimitError(message, **facts)
    if status >= 500 or status == 408:  # the server's trouble or a timeout: core retries these
        return LLMServerError(message, **facts)
    if status in (401, 403):
        return LLMAuthenticationError(f"{message}; check ECHO_API_KEY", **facts)
    return LLMBadRequestError(message, **facts)
