"""weakincentives' provider adapters (v0.18.0 API) on llmplex: change the imports, keep the code.

    # from weakincentives.adapters.openai import OpenAIAdapter, OpenAIClientConfig
    # from weakincentives.prompt import MarkdownSection, Prompt, PromptTemplate
    # from weakincentives.runtime import Session
    from llmplex.compat.weakincentives import (
        MarkdownSection, OpenAIAdapter, OpenAIClientConfig, Prompt, PromptTemplate, Session,
    )

Every name of the adapters, prompt, session, budget and deadline modules that
``evaluate`` uses is here, flat. Requests go through llmplex's engine: its
providers, config, retries, deadlines, budgets and events.
"""

from llmplex.compat.weakincentives.adapters import (
    LITELLM_ADAPTER_NAME,
    OPENAI_ADAPTER_NAME,
    AdapterName,
    LiteLLMAdapter,
    OpenAIAdapter,
    ProviderAdapter,
)
from llmplex.compat.weakincentives.budget import (
    Budget,
    BudgetExceededDimension,
    BudgetExceededError,
    BudgetTracker,
    Deadline,
)
from llmplex.compat.weakincentives.config import (
    LiteLLMClientConfig,
    LiteLLMModelConfig,
    LLMConfig,
    OpenAIClientConfig,
    OpenAIModelConfig,
    merge_config_params,
)
from llmplex.compat.weakincentives.errors import (
    PROMPT_EVALUATION_PHASE_BUDGET,
    PROMPT_EVALUATION_PHASE_REQUEST,
    PROMPT_EVALUATION_PHASE_RESPONSE,
    PROMPT_EVALUATION_PHASE_TOOL,
    DeadlineExceededError,
    InvalidValueError,
    OutputParseError,
    PromptEvaluationError,
    PromptEvaluationPhase,
    PromptRenderError,
    PromptValidationError,
    ThrottleDetails,
    ThrottleError,
    ThrottleKind,
)
from llmplex.compat.weakincentives.evaluation import PromptResponse
from llmplex.compat.weakincentives.events import (
    DispatchResult,
    HandlerFailure,
    InProcessDispatcher,
    PromptExecuted,
    PromptRendered,
    TokenUsage,
    ToolInvoked,
)
from llmplex.compat.weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    RenderedPrompt,
    Section,
    StructuredOutputConfig,
)
from llmplex.compat.weakincentives.session import Session, SessionProtocol
from llmplex.compat.weakincentives.slices import (
    Append,
    Clear,
    Extend,
    Replace,
    SliceAccessor,
    SliceView,
    Snapshot,
    append_all,
    replace_latest,
)
from llmplex.compat.weakincentives.throttle import ThrottlePolicy, new_throttle_policy
from llmplex.compat.weakincentives.tool_run import ToolContext
from llmplex.compat.weakincentives.tools import Tool, ToolResult

__all__ = [
    "LITELLM_ADAPTER_NAME",
    "OPENAI_ADAPTER_NAME",
    "PROMPT_EVALUATION_PHASE_BUDGET",
    "PROMPT_EVALUATION_PHASE_REQUEST",
    "PROMPT_EVALUATION_PHASE_RESPONSE",
    "PROMPT_EVALUATION_PHASE_TOOL",
    "AdapterName",
    "Append",
    "Budget",
    "BudgetExceededDimension",
    "BudgetExceededError",
    "BudgetTracker",
    "Clear",
    "Deadline",
    "DeadlineExceededError",
    "DispatchResult",
    "Extend",
    "HandlerFailure",
    "InProcessDispatcher",
    "InvalidValueError",
    "LLMConfig",
    "LiteLLMAdapter",
    "LiteLLMClientConfig",
    "LiteLLMModelConfig",
    "MarkdownSection",
    "OpenAIAdapter",
    "OpenAIClientConfig",
    "OpenAIModelConfig",
    "OutputParseError",
    "Prompt",
    "PromptEvaluationError",
    "PromptEvaluationPhase",
    "PromptExecuted",
    "PromptRenderError",
    "PromptRendered",
    "PromptResponse",
    "PromptTemplate",
    "PromptValidationError",
    "ProviderAdapter",
    "RenderedPrompt",
    "Replace",
    "Section",
    "Session",
    "SessionProtocol",
    "SliceAccessor",
    "SliceView",
    "Snapshot",
    "StructuredOutputConfig",
    "ThrottleDetails",
    "ThrottleError",
    "ThrottleKind",
    "ThrottlePolicy",
    "TokenUsage",
    "Tool",
    "ToolContext",
    "ToolInvoked",
    "ToolResult",
    "append_all",
    "merge_config_params",
    "new_throttle_policy",
    "replace_latest",
]
