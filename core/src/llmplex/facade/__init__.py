"""``LLMClient``: the model per entity for batch jobs (simulations, ETL), with response chains."""

from llmplex.facade.client import LLMClient, RateLimitWarning
from llmplex.facade.request import LLMRequest

__all__ = ["LLMClient", "LLMRequest", "RateLimitWarning"]
