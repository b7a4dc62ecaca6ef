"""What a virtual key's budget counts a model with no known price at: the ``[budget]`` ``unpriced_*`` rates."""

from __future__ import annotations

from llmplex.config.schema import BudgetConfig
from llmplex.reliability.budget import Budget

__all__ = ["unpriced_rates"]


def unpriced_rates(config: BudgetConfig | None) -> Budget:
    """A budget with no cap carrying the ``[budget]`` rates for unpriced models (none when the config gives none)."""
    if config is None:
        return Budget()
    return Budget(
        unpriced_input_usd_per_mtok=config.unpriced_input_usd_per_mtok,
        unpriced_output_usd_per_mtok=config.unpriced_output_usd_per_mtok,
    )
