"""An append-only journal of finished batch requests, so an interrupted run resumes where it stopped.

The first line identifies the input (a fingerprint and the request count); each
further line is ``{"index": i, "record": {...}}``, written and flushed as soon
as request ``i`` finishes. A provider-native batch adds two lines per batch:
``{"submit": {"label", "provider", "rows": {custom_id: i}}}`` before it is sent
and ``{"batch": {"label", "id"}}`` once the provider has given its id, so a
resumed run polls the same batches instead of sending their requests again.
A process that dies (Ctrl-C, crash, ``kill -9``) loses at most the line it was
writing, which is dropped on resume; requests that were in flight are simply
run again. Every other line must be one this
module wrote: a damaged journal stops the run and is left exactly as it is.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from llmplex.errors import LLMConfigurationError

__all__ = ["Journal", "Submission"]

_FORMAT = "llmplex-batch-journal/1"
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@dataclass
class Submission:
    """One provider batch of this run: its label, provider prefix, ``custom_id -> row`` and, once known, its id."""

    label: str
    provider: str
    rows: dict[str, int]
    batch_id: str | None = None


class Journal:
    """The journal file of one batch run, open for appending."""

    def __init__(
        self,
        path: Path,
        file: IO[str],
        done: dict[int, dict[str, Any]],
        submissions: dict[str, Submission] | None = None,
    ) -> None:
        self.path = path
        self.done = done
        self.submissions = submissions if submissions is not None else {}
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
            done, submissions = _read(path, fingerprint, total)
            return cls(path, path.open("a", encoding="utf-8"), done, submissions)
        except OSError as exc:
            raise LLMConfigurationError(
                f"cannot use the journal {path}: {exc.strerror or exc}; choose an output in a writable directory"
            ) from None

    def record(self, index: int, record: dict[str, Any]) -> None:
        """Write one finished request and hand the line to the operating system at once."""
        self._write({"index": index, "record": record})
        self.done[index] = record

    def submitting(self, label: str, provider: str, rows: dict[str, int]) -> Submission:
        """Write that the provider batch ``label`` of ``rows`` (``custom_id -> row``) is about to be sent."""
        self._write({"submit": {"label": label, "provider": provider, "rows": rows}})
        submission = self.submissions[label] = Submission(label, provider, rows)
        return submission

    def submitted(self, submission: Submission, batch_id: str) -> None:
        """Write the id the provider gave the batch ``submission``."""
        self._write({"batch": {"label": submission.label, "id": batch_id}})
        submission.batch_id = batch_id

    def _write(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Flush to disk and close."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def remove(self) -> None:
        """Close and delete the journal (the run is complete)."""
        self.close()
        self.path.unlink()


def _read(path: Path, fingerprint: str, total: int) -> tuple[dict[int, dict[str, Any]], dict[str, Submission]]:
    """The finished records and provider batches of a journal; the file is changed (a torn last line
    dropped) only once all of it read."""
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
    submissions: dict[str, Submission] = {}
    for number, line in enumerate(lines[1:], start=2):
        entry = _json(line)
        problem = _problem(entry, total, submissions)
        if problem:
            raise LLMConfigurationError(
                f"journal {path} line {number} is damaged: {problem}. Nothing was sent and the journal was left "
                "as it is: delete that line to run its request again, or delete the journal to start over."
            )
        if "submit" in entry:
            submit = entry["submit"]
            submissions[submit["label"]] = Submission(submit["label"], submit["provider"], submit["rows"])
        elif "batch" in entry:
            submissions[entry["batch"]["label"]].batch_id = entry["batch"]["id"]
        else:
            done[entry["index"]] = entry["record"]
    if end != len(data):
        with path.open("r+b") as file:
            file.truncate(end)
    return done, submissions


def _json(line: bytes) -> Any:
    """The JSON value on ``line``, or ``None`` when there is none (not UTF-8, not JSON, nested too deeply)."""
    try:
        return json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def _problem(entry: Any, total: int, submissions: dict[str, Submission]) -> str | None:
    """What is wrong with a journal line's value, or ``None`` when it is a line this module wrote."""
    if isinstance(entry, dict) and set(entry) == {"submit"}:
        return _submit_problem(entry["submit"], total, submissions)
    if isinstance(entry, dict) and set(entry) == {"batch"}:
        return _batch_problem(entry["batch"], submissions)
    if not isinstance(entry, dict) or set(entry) != {"index", "record"}:
        return 'it is not a JSON object {"index": ..., "record": {...}}'
    index, record = entry["index"], entry["record"]
    if not _is_row(index, total):
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


def _is_row(index: Any, total: int) -> bool:
    return type(index) is int and 0 <= index < total


def _submit_problem(submit: Any, total: int, submissions: dict[str, Submission]) -> str | None:
    if not isinstance(submit, dict) or set(submit) != {"label", "provider", "rows"}:
        return 'it is not a JSON object {"submit": {"label": ..., "provider": ..., "rows": {...}}}'
    label, provider, rows = submit["label"], submit["provider"], submit["rows"]
    if not isinstance(label, str) or not _CUSTOM_ID.fullmatch(label) or label in submissions:
        return f"its batch label {label!r:.80} is not a new label of letters, digits, '_' and '-'"
    if not isinstance(provider, str) or not provider:
        return f"its provider {provider!r:.40} is not a provider name"
    if not isinstance(rows, dict) or not rows:
        return "its rows are not a JSON object of custom ids and request indexes"
    for custom_id, index in rows.items():
        if not _CUSTOM_ID.fullmatch(custom_id) or not _is_row(index, total):
            return f"its row {custom_id!r:.80}: {index!r:.40} is not a custom id and a request index below {total}"
    return None


def _batch_problem(batch: Any, submissions: dict[str, Submission]) -> str | None:
    if not isinstance(batch, dict) or set(batch) != {"label", "id"}:
        return 'it is not a JSON object {"batch": {"label": ..., "id": ...}}'
    label, batch_id = batch["label"], batch["id"]
    submission = submissions.get(label) if isinstance(label, str) else None
    if submission is None:
        return f"its batch label {label!r:.80} names no submission on an earlier line"
    if not isinstance(batch_id, str) or not batch_id or len(batch_id) > 512:
        return f"its batch id {batch_id!r:.80} is not the provider's id of a batch"
    if submission.batch_id is not None:
        return f"the batch {label} already has the id {submission.batch_id!r} on an earlier line"
    return None
