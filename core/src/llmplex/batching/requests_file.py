"""Read a JSONL requests file: one request per line, each a JSON object of complete() arguments."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmplex.errors import LLMConfigurationError

__all__ = ["FileRequest", "read_requests"]


@dataclass(frozen=True)
class FileRequest:
    """One line: its ``id`` (echoed in the result), the complete() arguments, or why the line is invalid."""

    id: Any = None
    arguments: dict[str, Any] = field(default_factory=dict)
    error: LLMConfigurationError | None = None


def read_requests(path: Path, model: str | None) -> tuple[list[FileRequest], str]:
    """The requests of ``path`` (blank lines skipped) and a fingerprint of the input and model.

    A line is ``{"prompt": "..."}`` or ``{"messages": [...]}`` plus any complete()
    keyword (``system``, ``temperature``, ``output`` as a JSON Schema, ...), an
    optional ``model`` that overrides ``model``, and an optional ``id``.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LLMConfigurationError(f"cannot read requests file {path}: {exc.strerror or exc}") from None
    fingerprint = hashlib.sha256(data + b"\0" + (model or "").encode()).hexdigest()
    requests = []
    # JSON Lines: split on newlines only (a JSON string may hold U+2028 and the like); a leading BOM is allowed
    for number, raw in enumerate(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        if raw.strip():
            requests.append(_parse_line(number, raw, model))
    return requests, fingerprint


def _parse_line(number: int, raw: bytes, model: str | None) -> FileRequest:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return FileRequest(
            error=LLMConfigurationError(
                f"line {number} is not valid UTF-8 (byte {exc.start + 1} of the line); save the file as UTF-8"
            )
        )
    try:
        item = json.loads(text)
    except ValueError as exc:
        return FileRequest(error=LLMConfigurationError(f"line {number} is not JSON: {exc}"))
    except RecursionError:
        return FileRequest(error=LLMConfigurationError(f"line {number} is JSON nested too deeply to read"))
    if not isinstance(item, dict):
        return FileRequest(error=LLMConfigurationError(f'line {number} must be a JSON object like {{"prompt": "..."}}'))
    request_id = item.pop("id", None)
    if model is not None:
        item.setdefault("model", model)
    return FileRequest(request_id, item)
