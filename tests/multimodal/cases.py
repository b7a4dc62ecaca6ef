"""The parts every wire-shape test sends: each kind from a path, from bytes and (image, document) from a URL."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from llmplex import Audio, Document, Image
from llmplex.testing import media

PROMPT = "Describe it."
URLS = {"image": "https://example.com/img/cat.png", "document": "https://example.com/docs/report.pdf"}
FILES = {"image": ("cat.png", media.PNG), "document": ("report.pdf", media.PDF), "audio": ("question.wav", media.WAV)}
CLASSES: dict[str, type[Image] | type[Document] | type[Audio]] = {"image": Image, "document": Document, "audio": Audio}
CASES = [
    (kind, source)
    for kind in ("image", "document", "audio")
    for source in ("path", "bytes", "url")
    if (kind, source) != ("audio", "url")
]
CASE_IDS = [f"{kind}-{source}" for kind, source in CASES]


def make(kind: str, source: str, directory: Path) -> Image | Document | Audio:
    """One part of ``kind`` built the ``source`` way (a file written to ``directory`` for ``path``)."""
    part_class = CLASSES[kind]
    name, data = FILES[kind]
    if source == "path":
        (directory / name).write_bytes(data)
        return part_class.from_path(directory / name)
    if source == "bytes":
        return part_class.from_bytes(data)
    assert part_class is not Audio
    return part_class.from_url(URLS[kind])  # type: ignore[union-attr]


def b64(data: bytes) -> str:
    """Standard base64, as the wire carries it."""
    return base64.b64encode(data).decode("ascii")


def data_url(kind: str) -> str:
    """The ``data:`` URL of the sample file of ``kind``."""
    data = FILES[kind][1]
    media_type = {"image": "image/png", "document": "application/pdf", "audio": "audio/wav"}[kind]
    return f"data:{media_type};base64,{b64(data)}"


def filename(source: str) -> str:
    """The document's file name as a provider gets it."""
    return "report.pdf" if source in ("path", "url") else "document.pdf"


CHAT_PARTS: dict[tuple[str, str], Any] = {
    ("image", "path"): {"type": "image_url", "image_url": {"url": data_url("image")}},
    ("image", "bytes"): {"type": "image_url", "image_url": {"url": data_url("image")}},
    ("image", "url"): {"type": "image_url", "image_url": {"url": URLS["image"]}},
    ("document", "path"): {"type": "file", "file": {"filename": "report.pdf", "file_data": data_url("document")}},
    ("document", "bytes"): {"type": "file", "file": {"filename": "document.pdf", "file_data": data_url("document")}},
    ("audio", "path"): {"type": "input_audio", "input_audio": {"data": b64(media.WAV), "format": "wav"}},
    ("audio", "bytes"): {"type": "input_audio", "input_audio": {"data": b64(media.WAV), "format": "wav"}},
}
"""What OpenAI Chat Completions (and LiteLLM, which takes its shape) is sent for each case."""
