"""``[groups.NAME]``: one model name over several deployments (see ``llmplex.routing``).

A group names its deployments (model strings, aliases or other groups), how a
call picks among them (``strategy``), when a failing one sits out
(``allowed_fails`` retryable failures in a row cool it for ``cooldown``), and
optionally ``hedge``: how long a request may go without a first byte before
the same request also goes to another deployment, and ``hedge_reserve``: the
share of each rpm/tpm window a call's first attempt leaves for hedges and
retries (``HEDGE_RESERVE`` by default when ``hedge`` is set, else none).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["HEDGE_RESERVE", "STRATEGIES", "DeploymentConfig", "GroupConfig", "group_problems", "seconds"]

STRATEGIES = ("weighted", "least-busy", "latency", "headroom")
HEDGE_RESERVE = 0.2
"""The share of each rpm/tpm window kept for hedges and retries when a group hedges and sets no ``hedge_reserve``."""
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|min|h)?\s*$")
_UNIT = {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def seconds(value: object) -> float:
    """A duration (``"300ms"``, ``"10s"``, ``"1m"``, or a number of seconds) in seconds; ``ValueError`` else."""
    if isinstance(value, bool):
        raise ValueError('expected a duration such as "10s" or "300ms"')
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        found = _DURATION.match(value) if isinstance(value, str) else None
        if found is None:
            raise ValueError('expected a duration such as "10s", "300ms" or "1m" (or a number of seconds)')
        number = float(found.group(1)) * _UNIT[found.group(2)]
    if not 0 <= number < 86400 * 365:
        raise ValueError("expected a duration of at least 0 seconds and under a year")
    return number


class DeploymentConfig(BaseModel):
    """One deployment of a group: a model string (or alias, or another group), its weight and own limits."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    model: str = Field(min_length=1, description='A model string such as "east:gpt-4o-mini", an alias or a group.')
    weight: float = Field(default=1.0, ge=0, description="Share of calls under the weighted strategy; 0: a spare.")
    rpm: int | None = Field(default=None, ge=1, description="Requests per minute this deployment takes.")
    tpm: int | None = Field(default=None, ge=1, description="Tokens per minute (prompt/4 + max_tokens estimated).")


class GroupConfig(BaseModel):
    """One group: its deployments and how calls are spread over them."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    strategy: Literal["weighted", "least-busy", "latency", "headroom"] = Field(
        default="weighted",
        description="weighted (random by weight), least-busy (fewest in flight), latency (lowest recent latency, "
        "a little exploration), headroom (most rpm/tpm left).",
    )
    cooldown: float = Field(default=5.0, description='How long a failing deployment sits out ("10s"; 0: never).')
    allowed_fails: int = Field(default=3, ge=1, description="Retryable failures in a row that cool a deployment.")
    hedge: float | None = Field(
        default=None, description='No first byte after this long ("300ms"): also send to another deployment.'
    )
    hedge_reserve: float | None = Field(
        default=None,
        ge=0,
        lt=1,
        strict=True,
        description="Share of each deployment's rpm/tpm window first attempts leave for hedges and retries "
        f"(0 to under 1; default {HEDGE_RESERVE} with hedge, else 0).",
    )
    deployments: tuple[DeploymentConfig, ...] = Field(min_length=1)

    @property
    def reserve(self) -> float:
        """The share of each rpm/tpm window a first attempt leaves for hedges and retries."""
        if self.hedge_reserve is not None:
            return self.hedge_reserve
        return HEDGE_RESERVE if self.hedge is not None else 0.0

    @field_validator("cooldown", "hedge", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return value if value is None else seconds(value)

    @field_validator("hedge")
    @classmethod
    def _positive_hedge(cls, value: float | None) -> float | None:
        if value is not None and value <= 0:
            raise ValueError('expected a positive duration such as "300ms" (leave hedge out to turn it off)')
        return value


def group_problems(groups: Mapping[str, GroupConfig], aliases: Mapping[str, str]) -> list[tuple[tuple[str, ...], str]]:
    """What is wrong with ``groups`` on their own: ``(key path, message)`` pairs (empty when nothing is)."""
    problems: list[tuple[tuple[str, ...], str]] = []
    for name, group in groups.items():
        if ":" in name or not name.strip():
            problems.append((("groups", name), "a group name is a plain name without ':' (such as chat)"))
        if name in aliases:
            problems.append((("groups", name), f"the name is also an alias (of {aliases[name]!r}): rename one"))
        if not any(d.weight > 0 for d in group.deployments):
            problems.append((("groups", name, "deployments"), "no deployment has a positive weight"))
        specs = [d.model.strip() for d in group.deployments]
        for spec in {s for s in specs if specs.count(s) > 1}:
            problems.append((("groups", name, "deployments"), f"{spec!r} is listed twice: list it once"))
        loop = _loop(name, groups, aliases, [name])
        if loop:
            problems.append((("groups", name), f"the group contains itself: {' -> '.join(loop)}"))
    return problems


def _loop(name: str, groups: Mapping[str, GroupConfig], aliases: Mapping[str, str], path: list[str]) -> list[str]:
    """The chain by which group ``name`` reaches ``path[0]`` again through its deployments, or ``[]``."""
    for deployment in groups[name].deployments:
        target = _unaliased(deployment.model.strip(), aliases)
        if target not in groups:
            continue
        if target == path[0]:
            return [*path, target]
        if target not in path:
            found = _loop(target, groups, aliases, [*path, target])
            if found:
                return found
    return []


def _unaliased(model: str, aliases: Mapping[str, str]) -> str:
    seen = {model}
    while model in aliases:
        model = aliases[model]
        if model in seen:
            break
        seen.add(model)
    return model
