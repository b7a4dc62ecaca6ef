"""``client.models(provider)``: each provider's model list, asked once per Client and kept."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from llmplex.engine.attempt import Attempt
from llmplex.errors import LLMConfigurationError, LLMDeadlineExceededError, LLMError, LLMServerError
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import call_before
from llmplex.routing import ProviderInstance, Route
from llmplex.types import ModelInfo

__all__ = ["ModelCatalog"]


class ModelCatalog:
    """The model lists a Client has fetched, by provider prefix (failures are not kept)."""

    def __init__(self) -> None:
        self._lists: dict[str, tuple[ModelInfo, ...]] = {}
        self._lock = threading.Lock()

    def models(
        self, instance: ProviderInstance, refresh: bool = False, deadline: Deadline | None = None
    ) -> list[ModelInfo]:
        """``instance``'s models, from the cache unless ``refresh``, asked before ``deadline``; errors are typed
        ``LLMError``."""
        with self._lock:
            kept = None if refresh else self._lists.get(instance.name)
        if kept is None:
            kept = self._fetch(instance, deadline)
            with self._lock:
                self._lists[instance.name] = kept
        return list(kept)

    def _fetch(self, instance: ProviderInstance, deadline: Deadline | None) -> tuple[ModelInfo, ...]:
        hooks = instance.hooks
        if not hooks.implements("models"):
            raise LLMConfigurationError(
                f"provider {instance.name!r} (plugin {instance.plugin.entry.name!r}) cannot list its models: "
                "it does not implement llmplex_models"
            )
        try:
            listed = call_before(
                lambda: hooks.models(settings=instance.settings, client=instance.client(False)),
                deadline,
                lambda: LLMDeadlineExceededError(
                    f"provider {instance.name!r} did not list its models before the timeout", provider=instance.name
                ),
            )
        except LLMError:
            raise
        except Exception as exc:
            raise Attempt(Route(instance, "")).classify(exc) from None
        return _checked(instance.name, listed)


def _checked(provider: str, listed: object) -> tuple[ModelInfo, ...]:
    if not isinstance(listed, Sequence) or not all(isinstance(m, ModelInfo) for m in listed):
        raise LLMServerError(f"provider {provider!r} listed its models as {type(listed).__name__}, not ModelInfo")
    return tuple(m if m.provider else m.model_copy(update={"provider": provider}) for m in listed)
