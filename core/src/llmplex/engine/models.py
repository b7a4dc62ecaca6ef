"""``client.models(provider)``: each provider's model list, asked once per Client and kept."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from llmplex.engine.attempt import Attempt
from llmplex.errors import LLMConfigurationError, LLMError, LLMServerError
from llmplex.routing import ProviderInstance, Route
from llmplex.types import ModelInfo

__all__ = ["ModelCatalog"]


class ModelCatalog:
    """The model lists a Client has fetched, by provider prefix (failures are not kept)."""

    def __init__(self) -> None:
        self._lists: dict[str, tuple[ModelInfo, ...]] = {}
        self._lock = threading.Lock()

    def models(self, instance: ProviderInstance, refresh: bool = False) -> list[ModelInfo]:
        """``instance``'s models, from the cache unless ``refresh``; errors are typed ``LLMError``."""
        with self._lock:
            kept = None if refresh else self._lists.get(instance.name)
        if kept is None:
            kept = self._fetch(instance)
            with self._lock:
                self._lists[instance.name] = kept
        return list(kept)

    def _fetch(self, instance: ProviderInstance) -> tuple[ModelInfo, ...]:
        hooks = instance.hooks
        if not hooks.implements("models"):
            raise LLMConfigurationError(
                f"provider {instance.name!r} (plugin {instance.plugin.entry.name!r}) cannot list its models: "
                "it does not implement llmplex_models"
            )
        try:
            listed = hooks.models(settings=instance.settings, client=instance.client(False))
        except LLMError:
            raise
        except Exception as exc:
            raise Attempt(Route(instance, "")).classify(exc) from None
        return _checked(instance.name, listed)


def _checked(provider: str, listed: object) -> tuple[ModelInfo, ...]:
    if not isinstance(listed, Sequence) or not all(isinstance(m, ModelInfo) for m in listed):
        raise LLMServerError(f"provider {provider!r} listed its models as {type(listed).__name__}, not ModelInfo")
    return tuple(m if m.provider else m.model_copy(update={"provider": provider}) for m in listed)
