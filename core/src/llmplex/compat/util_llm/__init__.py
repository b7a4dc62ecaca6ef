"""util_llm's LLM client (``src/utils/llm``) on llmplex: change the imports, keep the code.

    # from src.utils.llm import LLMClient, LLMRequest
    # from src.utils.llm_adapters.openai import OpenAIAdapter
    # from src.utils.llm_errors import LLMError
    from llmplex.compat.util_llm import LLMClient, LLMError, LLMRequest, OpenAIAdapter

Requests go through llmplex's ``openai`` provider (Responses API) with its
retries, deadlines and events; entity state stays under ``entity["_openai"]``.
"""

from llmplex.compat.util_llm.adapter import AdapterResponse, OpenAIAdapter, ResponseDebugInfo, ResponseUsage
from llmplex.compat.util_llm.client import LLMClient, ResponseChainManager
from llmplex.compat.util_llm.errors import LLMIncompleteError, LLMRateLimitError, LLMRefusalError, LLMTimeoutError
from llmplex.compat.util_llm.stats import BatchStats, RequestResult
from llmplex.errors import (
    LLMAPIError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMError,
    LLMOutputParseError,
    LLMServerError,
)
from llmplex.facade.request import LLMRequest

__all__ = [
    "AdapterResponse",
    "BatchStats",
    "LLMAPIError",
    "LLMClient",
    "LLMConfigurationError",
    "LLMConnectionError",
    "LLMError",
    "LLMIncompleteError",
    "LLMOutputParseError",
    "LLMRateLimitError",
    "LLMRefusalError",
    "LLMRequest",
    "LLMServerError",
    "LLMTimeoutError",
    "OpenAIAdapter",
    "RequestResult",
    "ResponseChainManager",
    "ResponseDebugInfo",
    "ResponseUsage",
]
