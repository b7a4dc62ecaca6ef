"""The pipeline hooks of one provider plugin, bound so no other provider sees its payloads."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pluggy

__all__ = ["PIPELINE_HOOKS", "ProviderHooks", "bind_provider_hooks"]

PIPELINE_HOOKS = (
    "llmplex_format",
    "llmplex_call",
    "llmplex_acall",
    "llmplex_stream",
    "llmplex_astream",
    "llmplex_parse",
    "llmplex_parse_event",
    "llmplex_classify_error",
    "llmplex_delete_response",
    "llmplex_tool_declarations",
    "llmplex_embed",
    "llmplex_aembed",
    "llmplex_models",
    "llmplex_acount_tokens",
    "llmplex_batch_limits",
    "llmplex_batch_submit",
    "llmplex_batch_find",
    "llmplex_batch_poll",
    "llmplex_batch_results",
)


@dataclass(frozen=True)
class ProviderHooks:
    """Hook callers restricted to one provider plugin plus non-provider wrappers."""

    format: Any
    call: Any
    acall: Any
    stream: Any
    astream: Any
    parse: Any
    parse_event: Any
    classify_error: Any
    delete_response: Any
    tool_declarations: Any
    embed: Any
    aembed: Any
    models: Any
    acount_tokens: Any
    batch_limits: Any
    batch_submit: Any
    batch_find: Any
    batch_poll: Any
    batch_results: Any
    implemented: frozenset[str]

    def implements(self, hook: str) -> bool:
        """Whether the provider plugin itself implements ``llmplex_<hook>``."""
        return f"llmplex_{hook}" in self.implemented


def _direct(caller: Any) -> Any:
    """The caller itself, or — when exactly one plain implementation taking arguments is bound — that
    function, called with its own arguments picked by name (what pluggy would do, minus its dispatch)."""
    impls = caller.get_hookimpls()
    if len(impls) != 1 or impls[0].wrapper or impls[0].hookwrapper or not impls[0].argnames:
        return caller
    function, argnames = impls[0].function, impls[0].argnames
    if len(argnames) == 1:
        (name,) = argnames

        def call(**kwargs: Any) -> Any:
            return function(kwargs[name])

    else:
        pick = operator.itemgetter(*argnames)  # the named values as a tuple, in one C call

        def call(**kwargs: Any) -> Any:
            return function(*pick(kwargs))

    call.get_hookimpls = caller.get_hookimpls  # type: ignore[attr-defined]
    return call


def bind_provider_hooks(pm: pluggy.PluginManager, plugin: object, other_providers: Sequence[object]) -> ProviderHooks:
    """Subset hook callers for ``plugin``, removing every other provider plugin."""
    callers = {name: pm.subset_hook_caller(name, remove_plugins=other_providers) for name in PIPELINE_HOOKS}
    implemented = frozenset(
        name
        for name in PIPELINE_HOOKS
        if any(
            impl.plugin is plugin and not (impl.wrapper or impl.hookwrapper) for impl in callers[name].get_hookimpls()
        )
    )
    return ProviderHooks(
        **{name.removeprefix("llmplex_"): _direct(caller) for name, caller in callers.items()},
        implemented=implemented,
    )
