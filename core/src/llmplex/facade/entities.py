"""The entities an LLMClient serves: plain dicts, found by id, with bookkeeping under ``entity[key]`` (``"_llm"``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.types import Usage

__all__ = [
    "STATE_KEY",
    "EntityIndex",
    "default_id_of",
    "previous_response",
    "record_usage",
    "slide_chain",
    "split_entity_key",
]

logger = logging.getLogger("llmplex")


def default_id_of(entity: dict[str, Any]) -> Any:
    """``entity["identity"]["id"]``, or ``None`` when it is missing."""
    identity = entity.get("identity")
    return identity.get("id") if isinstance(identity, dict) else None


class EntityIndex:
    """Entities by id (as a string); entities without an id are skipped with a warning in the log."""

    def __init__(self, entities: Iterable[dict[str, Any]], id_of: Callable[[dict[str, Any]], Any]) -> None:
        self.by_id: dict[str, dict[str, Any]] = {}
        skipped = 0
        for entity in entities:
            try:
                entity_id = id_of(entity)
            except (KeyError, IndexError, TypeError, AttributeError):
                entity_id = None
            if entity_id is None:
                skipped += 1
                continue
            self.by_id[str(entity_id)] = entity
        self.skipped = skipped
        if skipped:
            logger.warning("LLMClient skipped %d entities without an id", skipped)

    def resolve(self, entity_key: str) -> tuple[str, dict[str, Any], str | None]:
        """``(entity id, entity, chain name)`` for ``"chain:entity_id"`` or ``"entity_id"``."""
        chain, entity_id = split_entity_key(entity_key)
        entity = self.by_id.get(entity_id)
        if entity is None:
            raise LLMConfigurationError(
                f"entity_key {entity_key!r} names entity {entity_id!r}, which is not among the client's "
                f"{len(self.by_id)} entities with an id; write it as 'chain:entity_id'"
            )
        return entity_id, entity, chain


def split_entity_key(entity_key: str) -> tuple[str | None, str]:
    """``"chain:entity_id"`` as ``(chain, entity_id)``; a key without ``:`` is an entity id alone."""
    chain, sep, entity_id = entity_key.partition(":")
    return (chain or None, entity_id) if sep else (None, entity_key)


STATE_KEY = "_llm"


def _bookkeeping(entity: dict[str, Any], key: str, create: bool = True) -> dict[str, Any]:
    """``entity[key]``, created empty when missing (unless only reading: ``create=False``)."""
    data = entity.setdefault(key, {}) if create else entity.get(key, {})
    if not isinstance(data, dict):
        raise LLMConfigurationError(
            f"entity[{key!r}] must be a dict (llmplex keeps its records there), got {data!r:.60}"
        )
    return data


def _chain_ids(data: dict[str, Any], chain: str, key: str) -> list[Any]:
    ids = data.get(f"{chain}_chain") or []
    if not isinstance(ids, list):
        raise LLMConfigurationError(
            f"entity[{key!r}][{chain + '_chain'!r}] must be a list of response ids, got {ids!r:.60}"
        )
    return ids


def previous_response(entity: dict[str, Any], chain: str, key: str) -> str | None:
    """The last response id of ``chain`` on ``entity`` (reading changes nothing)."""
    ids = _chain_ids(_bookkeeping(entity, key, create=False), chain, key)
    return str(ids[-1]) if ids else None


def slide_chain(entity: dict[str, Any], chain: str, response_id: str, depth: int, key: str) -> list[str]:
    """Append ``response_id`` to the chain, keep the last ``depth`` ids, return the evicted ones."""
    data = _bookkeeping(entity, key)
    ids = [*_chain_ids(data, chain, key), response_id]
    data[f"{chain}_chain"] = ids[-depth:]
    return ids[:-depth]


def record_usage(entity: dict[str, Any], usage: Usage, key: str) -> None:
    """Add one request's tokens to ``entity[key]["usage"]``."""
    totals = _bookkeeping(entity, key).setdefault("usage", {})
    added = {"total_input_tokens": usage.input_tokens, "total_output_tokens": usage.output_tokens, "total_requests": 1}
    counts = totals.values() if isinstance(totals, dict) else [totals]
    if not isinstance(totals, dict) or any(isinstance(v, bool) or not isinstance(v, int) for v in counts):
        raise LLMConfigurationError(
            f"entity[{key!r}]['usage'] must be a dict of whole-number totals, got {totals!r:.80}; fix or remove it"
        )
    for name, amount in added.items():
        totals[name] = totals.get(name, 0) + amount
