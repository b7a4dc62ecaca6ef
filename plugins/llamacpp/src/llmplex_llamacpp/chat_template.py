"""The Jinja chat template used for the bundled Gemma 3 270M base model.

The bundled GGUF has no chat template, so llama.cpp would fall back to
chatml and ignore tools. This template renders Gemma turns, lists the tools
with a worked example, and renders tool calls as
``<tool_call>{"name": ..., "arguments": ...}</tool_call>``; llama.cpp's
template analyser derives its tool-call parser and grammar from that.
"""

from __future__ import annotations

from pathlib import Path

from .model_files import is_bundled_model

GEMMA_CHAT_TEMPLATE = """\
{%- set ns = namespace(messages=messages) -%}
{%- if messages and messages[0].role == 'system' -%}
{{- '<start_of_turn>user\\n' ~ messages[0].content ~ '<end_of_turn>\\n' -}}
{%- set ns.messages = messages[1:] -%}
{%- endif -%}
{%- if tools -%}
{{- '<start_of_turn>user\\nTools:\\n<tools>\\n' -}}
{%- for tool in tools -%}
{{- (tool.function if tool.function is defined else tool) | tojson ~ '\\n' -}}
{%- endfor -%}
{%- set first = tools[0].function if tools[0].function is defined else tools[0] -%}
{{- '</tools>\\nExample: to call a tool, answer:\\n<tool_call>\\n{"name": "'
    ~ first.name ~ '", "arguments": {}}\\n</tool_call><end_of_turn>\\n' -}}
{%- endif -%}
{%- for message in ns.messages -%}
{%- if message.role == 'assistant' -%}
{{- '<start_of_turn>model\\n' -}}
{%- if message.content -%}{{- message.content -}}{%- endif -%}
{%- for call in message.tool_calls or [] -%}
{%- set fn = call.function if call.function is defined else call -%}
{%- if message.content or not loop.first -%}{{- '\\n' -}}{%- endif -%}
{%- set args = fn.arguments if fn.arguments is string else (fn.arguments | tojson) -%}
{{- '<tool_call>\\n{"name": "' ~ fn.name ~ '", "arguments": ' ~ args ~ '}\\n</tool_call>' -}}
{%- endfor -%}
{{- '<end_of_turn>\\n' -}}
{%- elif message.role == 'tool' -%}
{{- '<start_of_turn>user\\n<tool_response>\\n' ~ message.content
    ~ '\\n</tool_response><end_of_turn>\\n' -}}
{%- else -%}
{{- '<start_of_turn>user\\n' ~ message.content ~ '<end_of_turn>\\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<start_of_turn>model\\n' -}}
{%- endif -%}
"""


def chat_template_for(model_path: Path) -> str | None:
    """The template to serve `model_path` with, or None to use the GGUF's own."""
    return GEMMA_CHAT_TEMPLATE if is_bundled_model(model_path) else None
