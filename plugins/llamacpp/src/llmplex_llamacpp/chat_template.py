"""The Jinja chat templates the server uses for the models known by name.

Each renders the conversation, lists the tools with a worked example, and
renders tool calls between text markers; llama.cpp's template analyser derives
its tool-call parser and grammar from how the template renders a call.

- Gemma 3 270M (base model): its GGUF has no template, so llama.cpp would fall
  back to chatml and ignore tools. Calls are ``<tool_call>...</tool_call>``.
- Qwen2.5-Coder-1.5B-Instruct: its own template asks for ``<tool_call>``,
  which is a special token in its vocabulary that this model never emits (it
  writes a ```json block instead, so no call is parsed). This template is
  ChatML with Qwen's default system prompt and calls between the plain-text
  markers ``<function_call>`` and ``</function_call>``, which it follows.
"""

from __future__ import annotations

from pathlib import Path

from .catalogue import for_path

__all__ = ["GEMMA_CHAT_TEMPLATE", "QWEN_CHAT_TEMPLATE", "chat_template_for"]

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

QWEN_CHAT_TEMPLATE = """\
{%- set ns = namespace(system='You are Qwen, created by Alibaba Cloud. You are a helpful assistant.') -%}
{%- if messages and messages[0].role == 'system' -%}
{%- set ns.system = messages[0].content -%}
{%- endif -%}
{{- '<|im_start|>system\\n' ~ ns.system -}}
{%- if tools -%}
{{- '\\n\\nYou can call these tools:\\n<tools>\\n' -}}
{%- for tool in tools -%}
{{- (tool.function if tool.function is defined else tool) | tojson ~ '\\n' -}}
{%- endfor -%}
{%- set first = tools[0].function if tools[0].function is defined else tools[0] -%}
{{- '</tools>\\n\\nTo call a tool, answer with a JSON object with its name and arguments '
    ~ 'between <function_call> and </function_call>, for example:\\n<function_call>\\n{"name": "'
    ~ first.name ~ '", "arguments": {}}\\n</function_call>' -}}
{%- endif -%}
{{- '<|im_end|>\\n' -}}
{%- for message in messages -%}
{%- if message.role == 'system' and loop.first -%}
{%- elif message.role == 'assistant' -%}
{{- '<|im_start|>assistant\\n' -}}
{%- if message.content -%}{{- message.content -}}{%- endif -%}
{%- for call in message.tool_calls or [] -%}
{%- set fn = call.function if call.function is defined else call -%}
{%- if message.content or not loop.first -%}{{- '\\n' -}}{%- endif -%}
{%- set args = fn.arguments if fn.arguments is string else (fn.arguments | tojson) -%}
{{- '<function_call>\\n{"name": "' ~ fn.name ~ '", "arguments": ' ~ args ~ '}\\n</function_call>' -}}
{%- endfor -%}
{{- '<|im_end|>\\n' -}}
{%- elif message.role == 'tool' -%}
{{- '<|im_start|>user\\n<tool_response>\\n' ~ message.content
    ~ '\\n</tool_response>\\nUse this tool result to answer.<|im_end|>\\n' -}}
{%- else -%}
{{- '<|im_start|>' ~ message.role ~ '\\n' ~ message.content ~ '<|im_end|>\\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\\n' -}}
{%- endif -%}
"""

_TEMPLATES = {"gemma": GEMMA_CHAT_TEMPLATE, "qwen": QWEN_CHAT_TEMPLATE}


def chat_template_for(model_path: Path) -> str | None:
    """The template to serve `model_path` with, or None to use the GGUF's own."""
    model = for_path(model_path)
    return None if model is None else _TEMPLATES[model.template]
