"""An append-only journal of finished batch requests, so an interrupted run resumes where it stopped.

The first line identifies the input (a fingerprint and the request count); each
further line is ``{"index": i, "record": {...}}``, written and flushed as soon
as request ``i`` finishes. A process that dies (Ctrl-C, crash, ``kill -9``)
loses at most the line it was writing, which is dropped on resume; requests
that were in flight are simply run again. Every other line must be one this
module wrote: a damaged journal stops the run and is left exactly as it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from llmplex.errors import LLMConfigurationError

__all__ = ["Journal"]

_FORMAT = "llmplex-batch-journal/1"


class Journal:
    """The journal file of one batch run, open for appending."""

    def __init__(self, path: Path, file: IO[str], done: dict[int, dict[str, Any]]) -> None:
        self.path = path
        self.done = done
        self._file = file

    @classmethod
    def open(cls, path: Path, fingerprint: str, total: int, *, resume: bool) -> Journal:
        """Start a new journal, or (``resume``) continue the one at ``path`` written for the same input."""
        if path.exists() and not resume:
            raise LLMConfigurationError(
                f"journal {path} exists from an earlier run: pass --resume to continue it, or delete it to start over"
            )
        try:
            if not path.exists():
                file = path.open("w", encoding="utf-8")
                file.write(json.dumps({"format": _FORMAT, "fingerprint": fingerprint, "total": total}) + "\n")
                file.flush()
                return cls(path, file, {})
            done = _read(path, fingerprint, total)
            return cls(path, path.open("a", encoding="utf-8"), done)
        except OSError as exc:
            raise LLMConfigurationError(
                f"cannot use the journal {path}: {exc.strerror or exc}; choose an output in a writable directory"
            ) from None

    def record(self, index: int, record: dict[str, Any]) -> None:
        """Write one finished request and hand the line to the operating system at once."""
        self._file.write(json.dumps({"index": index, "record": record}, separators=(",", ":")) + "\n")
        self._file.flush()
        self.done[index] = record

    def close(self) -> None:
        """Flush to disk and close."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def remove(self) -> None:
        """Close and delete the journal (the run is complete)."""
        self.close()
        self.path.unlink()


def _read(path: Path, fingerprint: str, total: int) -> dict[int, dict[str, Any]]:
    """The finished records of a journal; the file is changed (a torn last line dropped) only once all of it read."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1  # past the last complete line: anything after it was cut by a kill mid-write
    lines = data[:end].split(b"\n")[:-1]
    header = _json(lines[0]) if lines else None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise LLMConfigurationError(f"{path} is not an llmplex batch journal; delete it or choose another output")
    if header.get("fingerprint") != fingerprint or header.get("total") != total:
        raise LLMConfigurationError(
            f"journal {path} was written for a different requests file or model; "
            "resume with the same input and --model, or delete the journal to start over"
        )
    done: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(lines[1:], start=2):
        entry = _json(line)
        problem = _problem(entry, total)
        if problem:
            raise LLMConfigurationError(
                f"journal {path} line {number} is damaged: {problem}. Nothing was sent and the journal was left "
                "as it is: delete that line to run its request again, or delete the journal to start over."
            )
        done[entry["index"]] = entry["record"]
    if end != len(data):
        with path.open("r+b") as file:
            file.truncate(end)
    return done


def _json(line: bytes) -> Any:
    """The JSON value on ``line``, or ``None`` when there is none (not UTF-8, not JSON, nested too deeply)."""
    try:
        return json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def _problem(entry: Any, total: int) -> str | None:
    """What is wrong with a journal line's value, or ``None`` when it is a record this module wrote."""
    if not isinstance(entry, dict) or set(entry) != {"index", "record"}:
        return 'it is not a JSON object {"index": ..., "record": {...}}'
    index, record = entry["index"], entry["record"]
    if type(index) is not int or not 0 <= index < total:
        return f"its index {index!r:.40} is not a whole number from 0 to {total - 1}"
    ok = isinstance(record, dict) and (
        (record.get("ok") is True and isinstance(record.get("response"), dict))
        or (
            record.get("ok") is False
            and isinstance(record.get("error"), dict)
            and all(isinstance(record["error"].get(key), str) for key in ("type", "message"))
        )
    )
    return None if ok else 'its record is not {"ok": true, "response": {...}} or {"ok": false, "error": {...}}'
