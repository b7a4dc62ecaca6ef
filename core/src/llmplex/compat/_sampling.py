"""What the compatibility modules share: sampling options a provider takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmplex.routing import Route

__all__ = ["options_for"]


def options_for(route: Route, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` without those the route's provider cannot take (its ``Capabilities.sampling_options``).

    The seeds always send some (llm_connect's temperature 0.7); a provider without
    the option (claude-code has no temperature) gets the request without it, not an error.
    """
    allowed = route.provider.capabilities.sampling_options
    if allowed is None:
        return dict(options)
    return {name: value for name, value in options.items() if name in allowed}
