"""Merge config layers, validate them, and word errors by file and key."""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from llmplex.config.schema import Config
from llmplex.config.sources import ENV_PREFIX, NOT_CONFIG, Layer, default_layers, file_layer
from llmplex.config.wording import KEY_ERROR, describe, dotted_key, expected
from llmplex.errors import LLMConfigurationError
from llmplex.masking.values import REDACTED, is_secret_name, mask_setting

__all__ = ["Origins", "load_config", "validate_settings", "validation_message"]


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


def _shown(path: Sequence[str | int], value: Any) -> str:
    """What was found, masked (``mask_setting``) under a secret-looking key anywhere on
    ``path`` or when it looks like a key; credentials in a URL are masked either way."""
    if any(isinstance(part, str) and is_secret_name(part) for part in path):
        return REDACTED
    masked = mask_setting(str(path[-1]) if path else "", value)
    return REDACTED if masked == REDACTED else describe(masked)


def _key_path(loc: Sequence[str | int], data: Any) -> tuple[str | int, ...]:
    """The keys of ``loc`` that exist in ``data``: pydantic adds union members' type names to it."""
    path: list[str | int] = []
    for part in loc:
        inside = isinstance(data, Mapping) and part in data
        inside = inside or (isinstance(data, (list, tuple)) and isinstance(part, int) and 0 <= part < len(data))
        if not inside and path and not isinstance(data, Mapping):
            continue  # a union member's type name, not a key
        data = data[part] if inside else None  # else a key that is missing or not allowed: the path ends here
        path.append(part)
    return tuple(path)


def validation_message(
    error: ValidationError, origins: Origins, data: Mapping[str, Any], prefix: tuple[str, ...] = ()
) -> str:
    """One line per problem: source, dotted key, what was expected, what was found — in TOML terms.

    ``data`` is what was validated; ``prefix`` is its own key path in the config.
    """
    problems: dict[tuple[str | int, ...], tuple[list[str], str]] = {}
    for problem in error.errors(include_url=False):
        ctx = problem.get("ctx") or {}
        if problem["type"] == KEY_ERROR:
            path, found_value = (*prefix, *ctx["key"]), ctx.get("found")
        else:
            path, found_value = (*prefix, *_key_path(problem["loc"], data)), problem.get("input")
        wanted = expected(problem)
        if problem["type"] == "extra_forbidden":
            wanted = "no such key (check the spelling; `llmplex providers --check` lists every setting)"
        found = "nothing" if problem["type"] == "missing" else _shown(path, found_value)
        wants, _ = problems.setdefault(path, ([], found))
        if wanted not in wants:
            wants.append(wanted)
    lines = [
        f"{origins.source_of(path)}: key '{dotted_key(path)}': {' or '.join(wants)}; found {found}"
        for path, (wants, found) in problems.items()
    ]
    return "invalid configuration:\n  " + "\n  ".join(lines)


class UnknownSettingWarning(UserWarning):
    """An ``LLMPLEX_*`` environment variable that names no setting: it is ignored (as pydantic-settings ignores
    variables that match no field), and the warning names the closest setting."""


_ENV_SOURCE = "environment variable "


def _closest_variable(name: str) -> str:
    """The known ``LLMPLEX_*`` name nearest ``name`` (its first ``__`` part replaced), for a warning."""
    head, sep, rest = name.partition("__")
    known = sorted({f"{ENV_PREFIX}{key.upper()}" for key in Config.model_fields} | NOT_CONFIG)
    # a key for llmplex itself (LLMPLEX_KEY) is most likely the gateway's master key
    pool = [n for n in known if n.endswith("KEY")] if head.endswith("KEY") else known
    best = difflib.get_close_matches(head, pool, n=1, cutoff=0)[0]
    return best + sep + rest if best not in NOT_CONFIG else best


def _known_settings(layers: list[Layer]) -> list[Layer]:
    """``layers`` without the environment variables whose first key is no setting (each one warned about)."""
    kept = []
    for source, data in layers:
        if source.startswith(_ENV_SOURCE) and isinstance(data, Mapping) and not set(data) <= set(Config.model_fields):
            name = source.removeprefix(_ENV_SOURCE)
            warnings.warn(
                f"environment variable {name} is not an llmplex setting and is ignored; did you mean "
                f"{_closest_variable(name)}? (docs: Configuration > Environment variables; "
                "`llmplex providers --check` lists each provider's settings)",
                UnknownSettingWarning,
                stacklevel=3,
            )
            continue
        kept.append((source, data))
    return kept


def load_config(
    config: Config | Mapping[str, Any] | str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Config, Origins]:
    """Build the effective config: files and environment, then ``config``, then ``overrides``.

    ``config`` may be a ``Config``, a mapping, or the path of a TOML file.
    """
    environ = os.environ if environ is None else environ
    layers: list[Layer] = _known_settings(default_layers(environ, cwd or Path.cwd()))
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
        message = validation_message(exc, origins, merged)
    raise LLMConfigurationError(message)  # outside the handler: no __context__ holding the raw values


def validate_settings(
    model: type[BaseModel], data: Mapping[str, Any], origins: Origins, prefix: tuple[str, ...]
) -> BaseModel:
    """Validate one provider's settings table, wording errors like the rest of the config."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        message = validation_message(exc, origins, data, prefix)
    raise LLMConfigurationError(message)  # outside the handler: no __context__ holding the raw values
