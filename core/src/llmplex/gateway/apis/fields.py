"""Every request field of the three APIs, and what the gateway does with it.

The kinds:

- ``carried``: translated and sent to the provider;
- ``hint``: changes only cost, speed or bookkeeping, never what the answer says: left out and named in
  ``x-llmplex-dropped`` by default (``[gateway] drop_hints = false`` refuses it like a meaning field);
- ``meaning``: changes what the answer says (tools, media, structured output, ``n`` > 1): refused with a 400
  unless the provider it is routed to drops unsupported things (``drop_unsupported``), then named as dropped;
- ``privacy``: governs what the provider keeps (``store``, ``include``): carried, or the request is refused;
  never dropped.

A field a client sends that is in no table is a hint: named as dropped, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

__all__ = ["API_FIELDS", "Kind", "sort_fields"]

Kind = Literal["carried", "hint", "meaning", "privacy"]

_MESSAGES: dict[str, Kind] = {
    "model": "carried",
    "max_tokens": "carried",
    "messages": "carried",
    "system": "carried",
    "stop_sequences": "carried",
    "temperature": "carried",
    "top_p": "carried",
    "tools": "carried",
    "tool_choice": "carried",
    "stream": "carried",
    "thinking": "carried",
    "output_config": "carried",
    "cache_control": "carried",
    "metadata": "hint",
    "service_tier": "hint",
    "speed": "hint",
    "inference_geo": "hint",
    "context_management": "hint",
    "compaction": "hint",
    "container": "hint",
    "diagnostics": "hint",
    "user_profile_id": "hint",
    "workspace_id": "hint",
    "billing_policy": "hint",
    "fallbacks": "hint",
    "fallback_credit_token": "hint",
    "thread": "hint",
    "betas": "hint",
    "top_k": "meaning",
    "mcp_servers": "meaning",
}

_CHAT: dict[str, Kind] = {
    "model": "carried",
    "messages": "carried",
    "stream": "carried",
    "stream_options": "carried",
    "temperature": "carried",
    "top_p": "carried",
    "presence_penalty": "carried",
    "frequency_penalty": "carried",
    "seed": "carried",
    "stop": "carried",
    "max_tokens": "carried",
    "max_completion_tokens": "carried",
    "n": "carried",
    "tools": "carried",
    "tool_choice": "carried",
    "response_format": "carried",
    "reasoning_effort": "carried",
    "metadata": "hint",
    "user": "hint",
    "safety_identifier": "hint",
    "service_tier": "hint",
    "prompt_cache_key": "hint",
    "prompt_cache_retention": "hint",
    "parallel_tool_calls": "hint",
    "prediction": "hint",
    "verbosity": "hint",
    "store": "privacy",
    "logprobs": "meaning",
    "top_logprobs": "meaning",
    "logit_bias": "meaning",
    "audio": "meaning",
    "modalities": "meaning",
    "web_search_options": "meaning",
    "functions": "meaning",
    "function_call": "meaning",
}

_RESPONSES: dict[str, Kind] = {
    "model": "carried",
    "input": "carried",
    "instructions": "carried",
    "tools": "carried",
    "tool_choice": "carried",
    "temperature": "carried",
    "top_p": "carried",
    "max_output_tokens": "carried",
    "previous_response_id": "carried",
    "stream": "carried",
    "reasoning": "carried",
    "text": "carried",
    "parallel_tool_calls": "carried",
    "prompt_cache_key": "carried",
    "store": "privacy",
    "include": "privacy",
    "metadata": "hint",
    "user": "hint",
    "safety_identifier": "hint",
    "service_tier": "hint",
    "prompt_cache_retention": "hint",
    "stream_options": "hint",
    "truncation": "hint",
    "client_metadata": "hint",
    "background": "meaning",
    "conversation": "meaning",
    "prompt": "meaning",
    "top_logprobs": "meaning",
    "max_tool_calls": "meaning",
}

API_FIELDS: Mapping[str, Mapping[str, Kind]] = {
    "messages": _MESSAGES,
    "chat.completions": _CHAT,
    "responses": _RESPONSES,
}
"""For each API (by its endpoint name), every request field the gateway knows and its kind."""


def sort_fields(api: str, given: Iterable[str]) -> tuple[list[str], list[str]]:
    """The hints and the meaning fields among ``given`` (the fields a request set), in the order given; a field
    in no table counts as a hint. Carried and privacy fields are the translation's own to handle."""
    table = API_FIELDS[api]
    hints = [name for name in given if table.get(name, "hint") == "hint"]
    meanings = [name for name in given if table.get(name) == "meaning"]
    return hints, meanings
