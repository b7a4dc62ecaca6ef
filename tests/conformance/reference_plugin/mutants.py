"""Single-bug mutants of the reference plugin: each one a real, externally visible bug the kit must catch.

A mutant is a replacement of one exact piece of the plugin's source (it must occur
exactly once). The first eleven are the bugs issue 14 found the old kit letting
through; the rest are other mistakes a plugin author makes.

The plugin classifies errors with ``llmplex.http``'s status mapping, so the
classification bugs are those of an author who writes the classifier by hand
instead: each such mutant is ``HAND_ROLLED`` (which passes the kit, see
``CONTROLS``) with one bug.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["CONTROLS", "HAND_ROLLED", "MUTANTS", "Mutant", "apply"]

PLUGIN = Path("llmplex_reference") / "__init__.py"


@dataclass(frozen=True)
class Mutant:
    """``old`` replaced by ``new`` in ``file`` (relative to the plugin's source directory).

    ``check`` names the kit's test expected to kill the mutant (a function, or one of its parameters as pytest
    names it): its run starts with that test, and goes on through the rest of the kit if it passes, so the hint
    saves time and never decides a verdict.
    """

    name: str
    bug: str
    old: str
    new: str
    file: Path = PLUGIN
    check: str = ""


def apply(mutant: Mutant, source: Path) -> None:
    """Patch the copy of the plugin under ``source``; fail unless ``old`` occurs exactly once."""
    path = source / mutant.file
    text = path.read_text()
    count = text.count(mutant.old)
    if count != 1:
        raise ValueError(f"mutant {mutant.name}: the replaced text occurs {count} times in {mutant.file}, not once")
    path.write_text(text.replace(mutant.old, mutant.new))


_OPTIONS = "    payload.update(request.config.set_options())\n"


def _without_option(name: str) -> str:
    return f"    payload.update({{k: v for k, v in request.config.set_options().items() if k != {name!r}}})\n"


CLASSIFY = 'return classify_http_error(error, key_hint="check REFERENCE_API_KEY")'

HAND_ROLLED = """from llmplex.errors import (
        LLMAuthenticationError, LLMBadRequestError, LLMQuotaExhaustedError, LLMRateLimitError, LLMServerError,
    )

    if not isinstance(error, httpx.HTTPStatusError):
        return None
    answer, status = error.response, error.response.status_code
    try:
        body = answer.json()
    except ValueError:
        body = answer.text
    detail = body.get("error") or {} if isinstance(body, dict) else {}
    message = f"the server answered {status}: {detail.get('message') or answer.reason_phrase}"
    facts: dict[str, Any] = {"status_code": status, "response_body": body, "headers": answer.headers, "cause": error}
    if "insufficient_quota" in (detail.get("code"), detail.get("type")):
        return LLMQuotaExhaustedError(message, **facts)
    if status == 429:
        return LLMRateLimitError(message, **facts)
    if status in (401, 403):
        return LLMAuthenticationError(f"{message}; check REFERENCE_API_KEY", **facts)
    if status == 408 or status >= 500:
        return LLMServerError(message, **facts)
    return LLMBadRequestError(message, **facts)"""
"""A correct classifier written by hand, as plugins did before ``llmplex.http`` had the status mapping."""


def _hand_rolled(name: str, bug: str, old: str, new: str, *, check: str) -> Mutant:
    """The plugin with ``HAND_ROLLED`` as its classifier, ``old`` replaced by ``new`` in it."""
    if HAND_ROLLED.count(old) != 1:
        raise ValueError(f"mutant {name}: the replaced text occurs {HAND_ROLLED.count(old)} times in HAND_ROLLED")
    return Mutant(name, f"{bug} (a hand-written classifier)", CLASSIFY, HAND_ROLLED.replace(old, new), check=check)


CONTROLS: tuple[Mutant, ...] = (
    Mutant("hand_rolled_classifier", "none: the correct hand-written classifier", CLASSIFY, HAND_ROLLED),
)
"""Rewrites that are no bug: the kit must pass them (the classifier mutants are these with one bug)."""

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "tool_result_without_call_id",
        "a tool result is sent without the id of the call it answers",
        '{"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content or ""}',
        '{"role": "tool", "content": message.content or ""}',
        check="test_tool_results",
    ),
    Mutant(
        "tool_choice_dropped",
        "tool_choice never reaches the wire",
        '        payload["tool_choice"] = _tool_choice(request.tool_choice)\n',
        "        pass\n",
        check="test_tool_choice[none]",
    ),
    Mutant(
        "stream_flag_missing",
        "a streaming request does not carry stream: true",
        '        payload["stream"] = True\n',
        "",
        check="test_tool_calls",
    ),
    Mutant(
        "timeout_ignored",
        "the timeout core passes is ignored (httpx's own default is used)",
        "return httpx.USE_CLIENT_DEFAULT if timeout is None else timeout",
        "return httpx.USE_CLIENT_DEFAULT",
        check="test_timeout_is_honoured",
    ),
    Mutant(
        "streamed_tool_calls_all_index_0",
        "every streamed tool call is given index 0",
        'tool_call_index=call["index"],',
        "tool_call_index=0,",
        check="test_several_tool_calls",
    ),
    Mutant(
        "no_response_id_on_streams",
        "streamed responses carry no response id",
        'ids = {"response_id": raw_event.get("id"), "model": raw_event.get("model")}',
        'ids = {"model": raw_event.get("model")}',
        check="test_stream_assembles_to_the_complete_answer",
    ),
    Mutant(
        "blocking_io_in_async_hook",
        "llmplex_acall sends with blocking sync httpx inside the coroutine",
        'answer = await client.post("/chat/completions", json=payload, timeout=_timeout(timeout))',
        'answer = httpx.post(f"{client.base_url}chat/completions", json=payload, headers=client.headers, '
        "timeout=_timeout(timeout))",
        check="test_async_path_does_not_block_the_event_loop",
    ),
    Mutant(
        "system_prompt_as_user_turn",
        "the system prompt is sent as a user turn",
        'out: dict[str, Any] = {"role": message.role, "content": message.content}',
        'out: dict[str, Any] = {"role": "user" if message.role == "system" else message.role, '
        '"content": message.content}',
        check="test_multi_turn",
    ),
    Mutant(
        "length_finish_not_mapped",
        "finish_reason length is not mapped (it becomes 'other')",
        '"length": "length", ',
        "",
        check="test_length_finish",
    ),
    _hand_rolled(
        "html_502_escapes_as_json_error",
        "a non-JSON error body (an HTML 502) escapes as a JSONDecodeError",
        "    try:\n        body = answer.json()\n    except ValueError:\n        body = answer.text\n",
        "    body = answer.json()\n",
        check="test_errors_are_classified[bad_gateway]",
    ),
    Mutant(
        "only_first_tool_call_parsed",
        "only the first of several tool calls is parsed",
        'for c in message.get("tool_calls") or ()',
        'for c in (message.get("tool_calls") or [])[:1]',
        check="test_several_tool_calls",
    ),
    Mutant(
        "usage_input_output_swapped",
        "input and output token counts are swapped",
        'input_tokens=raw.get("prompt_tokens") or 0,\n        output_tokens=raw.get("completion_tokens") or 0,',
        'input_tokens=raw.get("completion_tokens") or 0,\n        output_tokens=raw.get("prompt_tokens") or 0,',
        check="test_plain_text",
    ),
    Mutant(
        "cached_tokens_dropped",
        "cached tokens are not read",
        "        cached_tokens=cached,\n",
        "",
        check="test_usage_details",
    ),
    _hand_rolled(
        "quota_as_rate_limit",
        "a 429 for exhausted quota is treated as a (retryable) rate limit",
        '"insufficient_quota" in (detail.get("code"), detail.get("type"))',
        'detail.get("code") == "quota_exceeded"',
        check="test_errors_are_classified[quota]",
    ),
    _hand_rolled(
        "retry_after_ignored",
        "Retry-After is not read (the response headers are not passed to the error)",
        '"headers": answer.headers, ',
        "",
        check="test_retry_after_is_read[rate_limit-seconds]",
    ),
    _hand_rolled(
        "401_as_bad_request",
        "401 is classified as a bad request",
        "if status in (401, 403):",
        "if status == 403:",
        check="test_errors_are_classified[authentication]",
    ),
    Mutant(
        "temperature_dropped",
        "temperature never reaches the wire",
        _OPTIONS,
        _without_option("temperature"),
        check="test_only_given_options_reach_the_wire",
    ),
    Mutant(
        "stop_dropped",
        "stop sequences never reach the wire",
        _OPTIONS,
        _without_option("stop"),
        check="test_only_given_options_reach_the_wire",
    ),
    Mutant(
        "max_tokens_dropped",
        "max_tokens never reaches the wire",
        _OPTIONS,
        _without_option("max_tokens"),
        check="test_only_given_options_reach_the_wire",
    ),
    Mutant(
        "tool_arguments_as_string",
        "tool-call arguments are sent JSON-encoded twice (a string, not the object)",
        '"function": {"name": c.name, "arguments": c.arguments}}',
        '"function": {"name": c.name, "arguments": json.dumps(c.arguments)}}',
        check="test_tool_results",
    ),
    Mutant(
        "model_not_forwarded",
        "the request's model is not sent (a fixed model is)",
        'payload: dict[str, Any] = {"model": request.model,',
        'payload: dict[str, Any] = {"model": "gpt-4o-mini",',
        check="test_plain_text",
    ),
    Mutant(
        "refusal_ignored",
        "a refusal is not read",
        'refusal = message.get("refusal")',
        "refusal = None",
        check="test_refusal",
    ),
    _hand_rolled(
        "503_as_bad_request",
        "503 and 529 (overloaded) are bad requests, never retried",
        "if status == 408 or status >= 500:",
        "if status in (408, 500, 502):",
        check="test_errors_are_classified[unavailable]",
    ),
    Mutant(
        "assistant_tool_calls_dropped",
        "an assistant turn is sent without the tool calls it made",
        "    if message.tool_calls:\n",
        "    if False:\n",
        check="test_tool_results",
    ),
    Mutant(
        "streamed_usage_dropped",
        "usage of a streamed answer is not read",
        '    if raw_event.get("usage"):\n',
        "    if False:\n",
        check="test_usage_details",
    ),
    Mutant(
        "tool_descriptions_dropped",
        "tool definitions are sent without their descriptions",
        '"description": t.description, ',
        "",
        check="test_tool_calls",
    ),
    Mutant(
        "streamed_model_not_read",
        "a stream does not say which model answered, so it is priced and logged as the model asked for",
        'ids = {"response_id": raw_event.get("id"), "model": raw_event.get("model")}',
        'ids = {"response_id": raw_event.get("id"), "model": None}',
        check="test_stream_counts_like_the_whole_answer",
    ),
    Mutant(
        "reasoning_not_kept",
        "an answer's reasoning_details are not kept, so the next turn of a thinking tool loop is refused",
        'for detail in message.get("reasoning_details") or ()',
        "for detail in ()",
        check="test_two_turn_tool_call_round_trips_reasoning_verbatim",
    ),
    Mutant(
        "reasoning_not_replayed",
        "the reasoning an assistant message carries is not sent back on the next turn",
        '        out["reasoning_details"] = details\n',
        "        pass\n",
        check="test_two_turn_tool_call_round_trips_reasoning_verbatim",
    ),
    Mutant(
        "streamed_reasoning_not_kept",
        "a streamed answer loses its reasoning_details, so a streamed thinking tool loop cannot continue",
        '        state.data.setdefault("reasoning", []).extend(delta.get("reasoning_details") or ())\n',
        "",
        check="test_two_turn_tool_call_round_trips_reasoning_verbatim",
    ),
    Mutant(
        "reasoning_signature_rewritten",
        "reasoning is sent back re-encoded (its signature's padding stripped), which the provider rejects",
        "details = [part.data for part in message.reasoning if part.format == REASONING]",
        'details = [{**part.data, "data": str(part.data.get("data", "")).rstrip("=")} for part in message.reasoning]',
        check="test_two_turn_tool_call_round_trips_reasoning_verbatim",
    ),
)
