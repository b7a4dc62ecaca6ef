"""``weakincentives.adapters.litellm`` on llmplex: the adapter and the module-level helpers, by the same names.

``LiteLLMAdapter`` here gets its completion as weakincentives did, from this
module's ``create_litellm_completion`` (looked up when the adapter is built),
and calls it inside llmplex's engine; the flat
``llmplex.compat.weakincentives.LiteLLMAdapter`` uses llmplex's litellm provider.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from importlib import import_module
from typing import Any, Final

from llmplex.compat.weakincentives.adapters import LiteLLMAdapter as _FlatLiteLLMAdapter
from llmplex.compat.weakincentives.config import LiteLLMClientConfig, LiteLLMModelConfig
from llmplex.compat.weakincentives.errors import ThrottleError
from llmplex.compat.weakincentives.provider_errors import (
    coerce_retry_after,
    error_payload,
    litellm_retry_after,
    normalize_throttle,
)
from llmplex.compat.weakincentives.throttle import ThrottlePolicy

__all__ = ["LiteLLMAdapter", "LiteLLMClientConfig", "LiteLLMModelConfig", "create_litellm_completion"]

_ERROR_MESSAGE: Final[str] = (
    "LiteLLM support requires the 'litellm' package: `pip install llmplex-litellm` "
    "(weakincentives said: install it with `uv sync --extra litellm` or `pip install weakincentives[litellm]`)."
)


def _load_litellm_module() -> Any:
    try:
        return import_module("litellm")
    except ModuleNotFoundError as error:
        raise RuntimeError(_ERROR_MESSAGE) from error


def create_litellm_completion(**kwargs: object) -> Callable[..., Any]:
    """``litellm.completion``, with ``kwargs`` added to every call (a request's own keywords win)."""
    module = _load_litellm_module()
    if not kwargs:
        return module.completion  # type: ignore[no-any-return]

    def completion(*args: object, **request: object) -> Any:
        return module.completion(*args, **{**kwargs, **request})

    return completion


def _coerce_retry_after(value: object) -> timedelta | None:
    return coerce_retry_after(value)


def _retry_after_from_error(error: object) -> timedelta | None:
    return litellm_retry_after(error)


def _error_payload(error: object) -> dict[str, Any] | None:
    return error_payload(error)


def _normalize_litellm_throttle(error: Exception, *, prompt_name: str) -> ThrottleError | None:
    return normalize_throttle(
        error,
        prompt_name=prompt_name,
        provider="LiteLLM",
        retry_after=_retry_after_from_error(error),
        payload=_error_payload(error),
    )


class LiteLLMAdapter(_FlatLiteLLMAdapter):
    """weakincentives' ``LiteLLMAdapter``: without ``completion`` it gets one from ``create_litellm_completion``."""

    def __init__(
        self,
        *,
        model: str,
        tool_choice: Any = "auto",
        completion: Callable[..., Any] | None = None,
        completion_factory: Callable[..., Any] | None = None,
        completion_kwargs: Mapping[str, Any] | None = None,
        completion_config: LiteLLMClientConfig | None = None,
        model_config: LiteLLMModelConfig | None = None,
        client: Any = None,
        throttle_policy: ThrottlePolicy | None = None,
    ) -> None:
        if completion is None and completion_factory is None and client is None:
            completion_factory = globals()["create_litellm_completion"]
        super().__init__(
            model=model,
            tool_choice=tool_choice,
            completion=completion,
            completion_factory=completion_factory,
            completion_kwargs=completion_kwargs,
            completion_config=completion_config,
            model_config=model_config,
            client=client,
            throttle_policy=throttle_policy,
        )
