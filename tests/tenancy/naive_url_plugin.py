"""``naiveurl:``, a provider that puts the model into its URL path: spliced as it is (``encode = false``, the
mutant the conformance kit's address check must kill) or percent-encoded with ``llmplex.http.path_segment``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.http import classify_http_error, path_segment
from llmplex.provider import Capabilities, ProviderInfo, ProviderSettings
from llmplex.types import Request, Response, Usage


class NaiveSettings(ProviderSettings):
    base_url: str = "http://127.0.0.1:9"
    encode: bool = False


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    register(
        ProviderInfo(
            name="naiveurl",
            settings_model=NaiveSettings,
            capabilities=Capabilities(),
            default_model="naive-1",
            create_client=lambda _settings: httpx.Client(),
        )
    )


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    return {"model": request.model, "messages": [{"role": m.role, "content": m.content} for m in request.messages]}


@hookimpl
def llmplex_call(payload: dict[str, Any], settings: NaiveSettings, client: httpx.Client, timeout: float | None) -> Any:
    model = path_segment(payload["model"], "model") if settings.encode else payload["model"]
    answer = client.post(f"{settings.base_url}/v1/models/{model}:generate", json=payload, timeout=timeout or 10)
    answer.raise_for_status()
    return answer.json()


@hookimpl
def llmplex_parse(raw: Any, request: Request) -> Response:
    return Response(text=raw["text"], model=request.model, usage=Usage(input_tokens=3, output_tokens=2))


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    return classify_http_error(error)
