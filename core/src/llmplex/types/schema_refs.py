"""``$ref`` checks for JSON Schemas in tool parameters and outputs: every reference must resolve inside the schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["dangling_ref"]


def dangling_ref(schema: Mapping[str, Any]) -> str | None:
    """Which ``$ref`` in ``schema`` points to nothing inside it (naming where), or ``None`` when all resolve.

    Only the schema itself is searched: nothing is fetched, so a remote ``$ref`` dangles too.
    """
    refs: list[_Ref] = []
    stack: list[tuple[tuple[str, ...], tuple[Mapping[str, Any], ...], Any]] = [((), (), schema)]
    while stack:  # iterative: a hostile schema may nest deeper than the recursion limit
        path, scopes, node = stack.pop()
        if isinstance(node, Mapping):
            if any(isinstance(node.get(key), str) for key in ("$id", "id")):
                scopes = (*scopes, node)  # a new base URI for the $refs below
            if isinstance(node.get("$ref"), str):
                refs.append(_Ref(path, scopes, node["$ref"]))
            stack += [((*path, str(k)), scopes, v) for k, v in node.items() if k not in _DATA_KEYWORDS]
        elif isinstance(node, list):
            stack += [((*path, str(i)), scopes, v) for i, v in enumerate(node)]
    return _unresolvable(schema, sorted(refs, key=lambda ref: ref.path)) if refs else None


@dataclass(frozen=True)
class _Ref:
    path: tuple[str, ...]
    scopes: tuple[Mapping[str, Any], ...]
    target: str


_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})  # their values are data, not schemas
_ROOT = "urn:llmplex:schema"


def _unresolvable(schema: Mapping[str, Any], refs: list[_Ref]) -> str | None:
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012, specification_with

    specification = specification_with(str(schema.get("$schema", "")), default=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(_ROOT, specification.create_resource(schema)).crawl()
    for ref in refs:
        resolver = registry.resolver(base_uri=_ROOT)
        for scope in ref.scopes:
            resolver = resolver.in_subresource(specification.create_resource(scope))
        try:
            resolver.lookup(ref.target)
        except (Unresolvable, ValueError):
            where = "/".join((*ref.path, "$ref"))
            return (
                f"$ref {ref.target!r} at {where} points to nothing in the schema; define it (under $defs) or remove it"
            )
    return None
