"""Merge config layers, validate them, and word errors by file and key."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from llmplex.config.schema import Config
from llmplex.config.sources import Layer, default_layers, file_layer
from llmplex.errors import LLMConfigurationError
from llmplex.redaction import REDACTED

__all__ = ["Origins", "load_config", "validate_settings", "validation_message"]

_SECRET_HINTS = ("key", "secret", "token", "password")


class Origins:
    """Which source set each key, so that errors can name the file."""

    def __init__(self) -> None:
        self._by_path: dict[tuple[str, ...], str] = {}

    def record(self, path: tuple[str, ...], source: str) -> None:
        """Note that ``source`` set the key at ``path``."""
        self._by_path[path] = source

    def source_of(self, path: Sequence[str | int]) -> str:
        """The source of the longest recorded prefix of ``path``."""
        parts = tuple(str(p) for p in path)
        for end in range(len(parts), 0, -1):
            if parts[:end] in self._by_path:
                return self._by_path[parts[:end]]
        return "defaults"


def _merge(
    into: dict[str, Any], layer: Mapping[str, Any], source: str, origins: Origins, path: tuple[str, ...]
) -> None:
    for key, value in layer.items():
        here = (*path, key)
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value, source, origins, here)
        else:
            into[key] = dict(value) if isinstance(value, Mapping) else value
            _record_tree(value, source, origins, here)


def _record_tree(value: Any, source: str, origins: Origins, path: tuple[str, ...]) -> None:
    origins.record(path, source)
    if isinstance(value, Mapping):
        for key, sub in value.items():
            _record_tree(sub, source, origins, (*path, key))


def _shown(key: str, value: Any) -> str:
    if any(hint in key.lower() for hint in _SECRET_HINTS):
        return REDACTED
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def validation_message(error: ValidationError, origins: Origins, prefix: tuple[str, ...] = ()) -> str:
    """One line per problem: source, dotted key, what was expected, what was found."""
    lines = []
    for problem in error.errors(include_url=False):
        path = (*prefix, *(str(p) for p in problem["loc"]))
        key = ".".join(path)
        expected = problem["msg"]
        if problem["type"] == "extra_forbidden":
            expected = "no such key (check the spelling; see `llmplex providers` for settings)"
        found = "nothing" if problem["type"] == "missing" else _shown(key, problem.get("input"))
        lines.append(f"{origins.source_of(path)}: key '{key}': {expected}; found {found}")
    return "invalid configuration:\n  " + "\n  ".join(lines)


def load_config(
    config: Config | Mapping[str, Any] | str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Config, Origins]:
    """Build the effective config: files and environment, then ``config``, then ``overrides``.

    ``config`` may be a :class:`Config`, a mapping, or the path of a TOML file.
    """
    environ = os.environ if environ is None else environ
    layers: list[Layer] = default_layers(environ, cwd or Path.cwd())
    if isinstance(config, Config):
        layers.append(("Config object", config.model_dump(exclude_unset=True)))
    elif isinstance(config, (str, Path)):
        loaded = file_layer(Path(config), named_by="the config argument / --config")
        assert loaded is not None
        layers.append(loaded)
    elif config is not None:
        layers.append(("config argument", dict(config)))
    if overrides:
        layers.append(("keyword argument", dict(overrides)))
    merged: dict[str, Any] = {}
    origins = Origins()
    for source, data in layers:
        _merge(merged, data, source, origins, ())
    try:
        return Config.model_validate(merged), origins
    except ValidationError as exc:
        raise LLMConfigurationError(validation_message(exc, origins)) from None


def validate_settings(
    model: type[BaseModel], data: Mapping[str, Any], origins: Origins, prefix: tuple[str, ...]
) -> BaseModel:
    """Validate one provider's settings table, wording errors like the rest of the config."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise LLMConfigurationError(validation_message(exc, origins, prefix)) from None
