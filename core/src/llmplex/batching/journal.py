"""An append-only journal of finished batch requests, so an interrupted run resumes where it stopped.

The first line identifies the input (a fingerprint and the request count); each
further line is ``{"index": i, "record": {...}}``, written and flushed as soon
as request ``i`` finishes. A process that dies (Ctrl-C, crash, ``kill -9``)
loses at most the line it was writing, which is dropped on resume; requests
that were in flight are simply run again.
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
        if not path.exists():
            file = path.open("w", encoding="utf-8")
            file.write(json.dumps({"format": _FORMAT, "fingerprint": fingerprint, "total": total}) + "\n")
            file.flush()
            return cls(path, file, {})
        done = _read(path, fingerprint, total)
        return cls(path, path.open("a", encoding="utf-8"), done)

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
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        with path.open("r+b") as file:  # drop a line torn by a kill mid-write
            file.truncate(len(complete))
    lines = complete.decode("utf-8").splitlines()
    try:
        header = json.loads(lines[0]) if lines else {}
    except ValueError:
        header = {}
    if header.get("format") != _FORMAT:
        raise LLMConfigurationError(f"{path} is not an llmplex batch journal; delete it or choose another output")
    if header.get("fingerprint") != fingerprint or header.get("total") != total:
        raise LLMConfigurationError(
            f"journal {path} was written for a different requests file or model; "
            "resume with the same input and --model, or delete the journal to start over"
        )
    done: dict[int, dict[str, Any]] = {}
    for line in lines[1:]:
        entry = json.loads(line)
        done[int(entry["index"])] = entry["record"]
    return done
