"""Find the JSON value in a model's text answer: the whole answer, a code fence, or the first JSON value in prose.

Linear in the answer's length whatever it holds (300 KB of ``{`` included):
fences are paired by one scan, and in prose only outermost bracket spans are
tried, each once (found by two scans: one that skips JSON strings, one that
does not, for prose with a stray quote). A long scan checks the call's
deadline as it goes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from llmplex.errors import LLMDeadlineExceededError
from llmplex.reliability.deadline import Deadline
from llmplex.types.messages import JSONNestingError, decode_json

__all__ = ["extract_json"]

_FENCE = "```"
_LANGUAGE = re.compile(r"[A-Za-z0-9_-]*[ \t]*\n?")
_TOKENS = re.compile(r'[\[{]+|[\]}"]')  # a run of openers is one token: pushed at once
_STRING_END = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)
_CLOSES = {"}": "{", "]": "["}
_CHECK_EVERY = 4096  # tokens between deadline checks


def extract_json(text: str, deadline: Deadline | None = None) -> Any:
    """The first JSON value in ``text``; raises ``ValueError`` when there is none (or it is nested too deeply).

    Tried in order: the whole text, each fenced code block, then the first
    outermost ``{...}``/``[...]`` span of the text that is JSON. Past
    ``deadline``, raises ``LLMDeadlineExceededError``.
    """
    too_deep: JSONNestingError | None = None
    for candidate in _candidates(text, deadline):
        try:
            return decode_json(candidate)
        except JSONNestingError as exc:
            too_deep = exc
        except ValueError:
            continue
    raise too_deep or ValueError("the answer contains no JSON value")


def _candidates(text: str, deadline: Deadline | None) -> Iterator[str]:
    yield text.strip()
    blocks = list(_fenced(text))
    for block in blocks:
        yield block.strip()
    for strings in (True, False):  # a stray quote in prose hides what follows: then count every bracket
        for source in [*blocks, text]:
            for start, end in _outermost_spans(source, deadline, strings):
                yield source[start:end]


def _fenced(text: str) -> Iterator[str]:
    """The bodies of ```-fenced blocks (an optional language tag dropped), paired in order in one scan."""
    opening = text.find(_FENCE)
    while opening != -1:
        body = opening + len(_FENCE)
        language = _LANGUAGE.match(text, body)
        body = language.end() if language else body
        closing = text.find(_FENCE, body)
        if closing == -1:
            return
        yield text[body:closing]
        opening = text.find(_FENCE, closing + len(_FENCE))


def _outermost_spans(text: str, deadline: Deadline | None, strings: bool) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each bracket span not inside another, in order: one scan of the brackets and quotes.

    With ``strings``, inside brackets a ``"`` opens a JSON string whose brackets
    do not count. A closer that does not match the innermost open bracket is
    ignored, and an opener never closed leaves the spans inside it outermost.
    """
    stack: list[int] = []  # where each open bracket is
    spans: list[tuple[int, int]] = []  # closed spans not (yet) inside another closed span
    position = 0
    for count, token in enumerate(_TOKENS.finditer(text)):
        if deadline is not None and count % _CHECK_EVERY == 0 and deadline.expired:
            raise LLMDeadlineExceededError("the call's deadline passed while looking for the JSON value in the answer")
        at = token.start()
        if at < position:  # inside a string already skipped
            continue
        char = token.group()
        if char == '"':
            if strings and stack:
                closing = _STRING_END.match(text, at + 1)
                if closing is None:
                    break  # a string that never ends: no bracket after it counts
                position = closing.end()
        elif char[0] in "{[":
            stack.extend(range(at, at + len(char)))
        elif stack and text[stack[-1]] == _CLOSES[char]:
            start = stack.pop()
            while spans and spans[-1][0] > start:
                spans.pop()
            spans.append((start, at + 1))
    yield from spans
