"""Media types of the content parts: the ones llmplex sends, told apart by magic bytes and file suffix."""

from __future__ import annotations

from typing import Literal

__all__ = ["MEDIA_TYPES", "PartKind", "kind_of", "normalize", "sniff", "type_of_suffix"]

PartKind = Literal["image", "document", "audio"]

MEDIA_TYPES: dict[PartKind, tuple[str, ...]] = {
    "image": ("image/png", "image/jpeg", "image/gif", "image/webp"),
    "document": ("application/pdf",),
    "audio": ("audio/wav", "audio/mpeg"),
}
"""The media types of each kind of part: the ones every provider that takes the kind accepts."""

_ALIASES = {
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "audio/mp3": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "application/x-pdf": "application/pdf",
}

_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
}

_PDF_HEADER_WINDOW = 1024
"""PDF readers look for ``%PDF-`` within the first 1024 bytes (ISO 32000 implementation note)."""


def normalize(media_type: str) -> str:
    """``media_type`` lower-cased, without parameters, and with common aliases (``image/jpg``) resolved."""
    bare = media_type.split(";", 1)[0].strip().lower()
    return _ALIASES.get(bare, bare)


def kind_of(media_type: str) -> PartKind | None:
    """Which kind of part a (normalized) media type is, or ``None`` when llmplex sends no such type."""
    return next((kind for kind, types in MEDIA_TYPES.items() if media_type in types), None)


def type_of_suffix(name: str) -> str | None:
    """The media type a file name or URL path's suffix stands for, if it is a known one."""
    dot = name.rfind(".")
    return None if dot < 0 else _SUFFIXES.get(name[dot:].lower())


def sniff(data: bytes) -> str | None:
    """The media type the bytes' signature shows, or ``None`` when they start like none of the known types."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith(b"RIFF") and data[8:12] == b"WAVE":
        return "audio/wav"
    if data.startswith(b"ID3") or _is_mp3_frame(data):
        return "audio/mpeg"
    if b"%PDF-" in data[:_PDF_HEADER_WINDOW]:
        return "application/pdf"
    return None


def _is_mp3_frame(data: bytes) -> bool:
    """An MPEG audio frame header: 11 sync bits, a defined version and layer III."""
    if len(data) < 2 or data[0] != 0xFF or data[1] & 0xE0 != 0xE0:
        return False
    version, layer = (data[1] >> 3) & 0b11, (data[1] >> 1) & 0b11
    return version != 0b01 and layer == 0b01
