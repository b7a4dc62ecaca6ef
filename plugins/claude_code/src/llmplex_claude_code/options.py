"""The ``provider_options`` a request may carry: an allow-list, each checked and turned into its CLI flag.

Requests come from anywhere (a batch file, a web form), so none of them chooses
free command-line arguments: only these options, with checked values, reach
the ``claude`` command line. Trusted arguments go in the ``extra_args`` setting.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from llmplex.errors import LLMConfigurationError

__all__ = ["ALLOWED", "option_args"]

_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_MODEL = r"[A-Za-z0-9][A-Za-z0-9._:@/\[\]-]{0,199}"
_MODELS = re.compile(rf"{_MODEL}(?:,{_MODEL}){{0,9}}")

ALLOWED = (
    f"effort ({'|'.join(_EFFORTS)}), max_budget_usd (a positive number of dollars), "
    "fallback_model (model names, comma-separated)"
)


def _effort(value: Any) -> str | None:
    return value if value in _EFFORTS else None


def _budget(value: Any) -> str | None:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return str(value) if number and math.isfinite(value) and value > 0 else None


def _models(value: Any) -> str | None:
    return value if isinstance(value, str) and _MODELS.fullmatch(value) else None


_OPTIONS: dict[str, tuple[str, Callable[[Any], str | None]]] = {
    "effort": ("--effort", _effort),
    "max_budget_usd": ("--max-budget-usd", _budget),
    "fallback_model": ("--fallback-model", _models),
}


def option_args(options: Mapping[str, Any]) -> list[str]:
    """The CLI arguments for a request's ``provider_options``; anything else is refused."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        hint = (
            " (free CLI arguments are not taken from requests: put trusted ones in the provider's extra_args setting)"
            if "args" in unknown
            else ""
        )
        raise LLMConfigurationError(
            f"provider_options {', '.join(map(repr, unknown))} cannot reach the claude command line{hint}; "
            f"claude-code takes only {ALLOWED}"
        )
    argv: list[str] = []
    for name, value in options.items():
        flag, check = _OPTIONS[name]
        checked = check(value)
        if checked is None:
            raise LLMConfigurationError(
                f"provider_options[{name!r}] has an invalid value {value!r:.80}; claude-code takes only {ALLOWED}"
            )
        argv += [flag, checked]
    return argv
