"""The preset table: each OpenAI-compatible provider as data (URL, key variable, what its API reference says).

A preset changes nothing of the Chat Completions translation (that is the
openai plugin's); it names where the API lives, which variable holds its key,
and the documented differences the small hooks of ``quirks`` apply: core
options the API does not take (refused by name before anything is sent),
request fields it refuses, options it names differently, its tool-call id
format, and the message field carrying a reasoning model's thinking.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ALL_OPTIONS", "GENERIC", "PRESETS", "Preset", "ToolCallIds"]

ToolCallIds = Literal["any", "alnum9"]
"""``alnum9``: the API takes only 9-character ``[a-zA-Z0-9]`` tool-call ids (Mistral)."""

ALL_OPTIONS = frozenset(
    {"temperature", "top_p", "max_tokens", "presence_penalty", "frequency_penalty", "stop", "seed", "reasoning_effort"}
)
"""Every core sampling option (``LLMConfig``)."""


@dataclass(frozen=True)
class Preset:
    """One OpenAI-compatible provider.

    Attributes:
        name: the prefix (``mistral`` for ``mistral:mistral-small-latest``).
        title: the provider's name in messages and docs.
        base_url: the API root (``base_url`` overrides it).
        key_env: the variable holding its API key (``None``: a local server needing none).
        default_model: the model a request naming only the prefix gets.
        options: the core options the API takes; any other is refused by name.
        refused_fields: request fields (from ``provider_options``) the API answers 400 for.
        renamed: core option → the API's own name for it.
        dropped_fields: fields the openai translation sends that the API refuses (left out).
        model_refusals: model-name prefix → options that model family refuses.
        tool_call_ids: the tool-call id format the API accepts.
        vision: whether user messages may carry images.
        native_structured_output: whether ``response_format`` ``json_schema`` is honoured.
        embeddings: whether ``POST /embeddings`` exists; ``default_embedding_model`` is used for the prefix alone.
        lists_pulled_models: Ollama: ``llmplex models`` reads ``/api/tags`` (what is pulled).
        docs: the API reference the quirks come from.
    """

    name: str
    title: str
    base_url: str
    key_env: str | None
    default_model: str | None = None
    options: frozenset[str] = ALL_OPTIONS
    refused_fields: frozenset[str] = frozenset()
    renamed: Mapping[str, str] = field(default_factory=dict)
    dropped_fields: frozenset[str] = frozenset()
    model_refusals: Mapping[str, frozenset[str]] = field(default_factory=dict)
    tool_call_ids: ToolCallIds = "any"
    vision: bool = True
    native_structured_output: bool = True
    embeddings: bool = False
    default_embedding_model: str | None = None
    lists_pulled_models: bool = False
    docs: str = ""

    @property
    def local(self) -> bool:
        """A server on this machine that needs no key."""
        return self.key_env is None


_XAI_REASONING = frozenset({"presence_penalty", "frequency_penalty", "stop"})

PRESETS: Mapping[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "mistral",
            "Mistral AI",
            "https://api.mistral.ai/v1",
            "MISTRAL_API_KEY",
            default_model="mistral-small-latest",
            options=ALL_OPTIONS - {"reasoning_effort"},
            renamed={"seed": "random_seed"},
            dropped_fields=frozenset({"stream_options"}),
            tool_call_ids="alnum9",
            embeddings=True,
            default_embedding_model="mistral-embed",
            docs="https://docs.mistral.ai/api/",
        ),
        Preset(
            "groq",
            "Groq",
            "https://api.groq.com/openai/v1",
            "GROQ_API_KEY",
            default_model="llama-3.3-70b-versatile",
            refused_fields=frozenset({"logprobs", "logit_bias", "top_logprobs", "n"}),
            docs="https://console.groq.com/docs/openai",
        ),
        Preset(
            "deepseek",
            "DeepSeek",
            "https://api.deepseek.com",
            "DEEPSEEK_API_KEY",
            default_model="deepseek-chat",
            options=ALL_OPTIONS - {"seed", "reasoning_effort"},
            model_refusals={
                "deepseek-reasoner": frozenset({"temperature", "top_p", "presence_penalty", "frequency_penalty"})
            },
            refused_fields=frozenset({"logprobs", "top_logprobs"}),
            vision=False,
            native_structured_output=False,
            docs="https://api-docs.deepseek.com/api/create-chat-completion",
        ),
        Preset(
            "openrouter",
            "OpenRouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            default_model="openai/gpt-4o-mini",
            embeddings=True,
            docs="https://openrouter.ai/docs/api-reference/overview",
        ),
        Preset(
            "xai",
            "xAI",
            "https://api.x.ai/v1",
            "XAI_API_KEY",
            default_model="grok-3-mini",
            model_refusals={"grok-3-mini": _XAI_REASONING, "grok-4": _XAI_REASONING | {"reasoning_effort"}},
            docs="https://docs.x.ai/docs/api-reference",
        ),
        Preset(
            "together",
            "Together AI",
            "https://api.together.xyz/v1",
            "TOGETHER_API_KEY",
            default_model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
            embeddings=True,
            docs="https://docs.together.ai/reference/chat-completions-1",
        ),
        Preset(
            "fireworks",
            "Fireworks AI",
            "https://api.fireworks.ai/inference/v1",
            "FIREWORKS_API_KEY",
            default_model="accounts/fireworks/models/llama-v3p3-70b-instruct",
            embeddings=True,
            docs="https://docs.fireworks.ai/api-reference/post-chatcompletions",
        ),
        Preset(
            "ollama",
            "Ollama",
            "http://127.0.0.1:11434/v1",
            None,
            default_model="llama3.2",
            embeddings=True,
            lists_pulled_models=True,
            docs="https://docs.ollama.com/api/openai-compatibility",
        ),
        Preset(
            "vllm",
            "vLLM",
            "http://127.0.0.1:8000/v1",
            None,
            embeddings=True,
            docs="https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
        ),
        Preset(
            "lmstudio",
            "LM Studio",
            "http://127.0.0.1:1234/v1",
            None,
            embeddings=True,
            docs="https://lmstudio.ai/docs/app/api/endpoints/openai",
        ),
    )
}
"""Every preset by prefix."""

GENERIC = Preset(
    "openai-compatible",
    "OpenAI-compatible server",
    "",
    None,
    embeddings=True,
    docs="https://platform.openai.com/docs/api-reference/chat",
)
"""The preset-less provider: everything comes from its config table (``base_url``, ``api_key_env``, quirks)."""
