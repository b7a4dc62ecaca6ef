"""Images, PDF documents and audio clips a user message carries next to its text.

Each part holds either the file's bytes (``from_path``, ``from_bytes``) or a URL
the provider fetches (``from_url``, images and documents only), and always its
media type, told from the bytes' signature (and checked against the file's
suffix or the type you give). A part is refused, with an
``LLMConfigurationError`` saying why, when its type is unknown or does not match
its bytes, when its file cannot be read, or when it is larger than
``MAX_PART_BYTES``.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from llmplex.errors import LLMConfigurationError
from llmplex.types.media import MEDIA_TYPES, PartKind, kind_of, normalize, sniff, type_of_suffix

__all__ = ["MAX_PART_BYTES", "Audio", "ContentPart", "Document", "Image", "MediaPart", "part_from_path"]

MAX_PART_BYTES = 20 * 1024 * 1024
"""The largest file one part may hold: 20 MiB (the inline limit OpenAI and Gemini document for a file).

Providers cap whole requests too (Anthropic: 32 MB); larger files go by URL."""

_ARTICLE = {"image": "an image", "document": "a PDF document", "audio": "an audio clip"}
_CLASS = {"image": "Image", "document": "Document", "audio": "Audio"}


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):.1f} MiB" if count >= 1024 * 1024 else f"{count} bytes"


def _check_media(kind: PartKind, media_type: str, data: bytes | None, where: str) -> None:
    """Raise unless ``media_type`` is a type of ``kind`` and ``data`` (if any) is of that type."""
    actual_kind = kind_of(media_type)
    if actual_kind is None:
        raise LLMConfigurationError(
            f"{where}: {media_type!r} is not a media type llmplex sends as {_ARTICLE[kind]}; "
            f"use one of {', '.join(MEDIA_TYPES[kind])}"
        )
    if actual_kind != kind:
        raise LLMConfigurationError(
            f"{where}: {media_type} is {_ARTICLE[actual_kind]}, not {_ARTICLE[kind]}; "
            f"use llmplex.{_CLASS[actual_kind]} for it"
        )
    if data is None:
        return
    if not data:
        raise LLMConfigurationError(f"{where}: the file is empty; give {_ARTICLE[kind]} with content")
    if len(data) > MAX_PART_BYTES:
        raise LLMConfigurationError(
            f"{where}: {_size(len(data))} is larger than the {_size(MAX_PART_BYTES)} a part may hold "
            "(llmplex.types.parts.MAX_PART_BYTES); shrink the file or send it by URL"
        )
    found = sniff(data)
    if found != media_type:
        shown = f"are {found}" if found else "match no type llmplex sends (is the file damaged?)"
        raise LLMConfigurationError(f"{where}: the bytes {shown}, not {media_type}; give the right file or media type")


class MediaPart(BaseModel):
    """What images, documents and audio share: bytes or a URL, and a media type.

    ``data`` is sent inline (base64 on the wire); ``url`` is fetched by the
    provider. In JSON (``model_dump(mode="json")``) ``data`` is base64 text, and
    base64 text is read back as bytes. ``cache=True`` (``part.cached()``) asks
    providers with explicit prompt caching to cache the prompt up to this part.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_bytes="base64")

    kind: ClassVar[PartKind]
    data: bytes | None = Field(default=None, repr=False)
    url: str | None = None
    media_type: str
    cache: bool = False

    def __init__(self, /, *args: Any, **fields: Any) -> None:
        if args:
            raise LLMConfigurationError(
                f"{type(self).__name__}() takes keyword arguments only (data=, url=, media_type=...), got "
                f"{len(args)} positional; for a file use {type(self).__name__}.from_path(path)"
            )
        super().__init__(**fields)

    @model_validator(mode="wrap")
    @classmethod
    def _typed_errors(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Every wrong field (a wrong type, an unknown name) is an ``LLMConfigurationError`` naming it."""
        try:
            return handler(value)
        except ValidationError as exc:
            raise _invalid(cls, exc) from None

    @model_validator(mode="before")
    @classmethod
    def _from_data(cls, value: Any) -> Any:
        """As data: ``data`` may be base64 text, and a missing ``media_type`` is told from the bytes or URL."""
        if not isinstance(value, dict):
            return value
        fields = dict(value)
        if isinstance(fields.get("data"), (bytearray, memoryview)):
            fields["data"] = bytes(fields["data"])
        if fields.get("data") is None and fields.get("url") is None:
            raise LLMConfigurationError(f"{_ARTICLE[cls.kind]} needs either data (its bytes) or a url")
        if isinstance(fields.get("data"), str):
            fields["data"] = _decode(fields["data"], cls.kind)
        if fields.get("media_type") is None:
            guessed = _guess(cls.kind, fields.get("data"), fields.get("url"))
            if guessed is not None:
                fields["media_type"] = guessed
        return fields

    @field_validator("media_type", mode="before")
    @classmethod
    def _normalized(cls, value: Any) -> Any:
        return normalize(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if (self.data is None) == (self.url is None):
            raise LLMConfigurationError(f"{_ARTICLE[self.kind]} needs either data (its bytes) or a url, and not both")
        if self.url is not None:
            _check_url(self.url, self.kind)
        _check_media(self.kind, self.media_type, self.data, f"{_ARTICLE[self.kind]} ({self.media_type})")
        return self

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        yield "media_type", self.media_type
        if self.data is not None:
            yield "size", len(self.data)
        else:
            yield "url", _shown(self.url or "")

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str | None = None) -> Self:
        """The part for ``data``; ``media_type`` is told from the bytes when not given, and checked when given."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise LLMConfigurationError(f"{cls.__name__}.from_bytes takes bytes, got {type(data).__name__}")
        raw = bytes(data)
        where = f"{cls.__name__}.from_bytes"
        _check_type_argument(where, media_type)
        if media_type is None:
            found = sniff(raw[:4096])
            if found is None:
                expected = ", ".join(MEDIA_TYPES[cls.kind])
                raise LLMConfigurationError(
                    f"{where}: the bytes are none of {expected}; give media_type, or the right file"
                )
            media_type = found
        _check_media(cls.kind, normalize(media_type), raw, where)
        return cls(data=raw, media_type=media_type)

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> Self:
        """The part holding the file at ``path``; its type is told from its bytes and must match its suffix."""
        file = _path(path, f"{cls.__name__}.from_path")
        return cls._from_file(file, _read(file))

    @classmethod
    def _from_file(cls, file: Path, data: bytes) -> Self:
        media_type = _type_of_file(file, data)
        _check_media(cls.kind, media_type, data, repr(str(file)))
        named = {"name": file.name} if "name" in cls.model_fields else {}
        return cls(data=data, media_type=media_type, **named)

    def cached(self) -> Self:
        """This part marked for the provider's prompt cache (``cache=True``)."""
        return self.model_copy(update={"cache": True})

    def describe(self) -> str:
        """One line for people: the media type and size, or the URL (without credentials or query)."""
        if self.data is None:
            return f"{self.media_type} at {_shown(self.url or '')}"
        return f"{self.media_type}, {_size(len(self.data))}"

    def base64(self) -> str:
        """The bytes in base64 (standard alphabet, padded); only for a part that holds bytes."""
        if self.data is None:
            raise LLMConfigurationError(f"{_ARTICLE[self.kind]} given by URL has no bytes to encode")
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """The bytes as a ``data:`` URL (``data:image/png;base64,...``)."""
        return f"data:{self.media_type};base64,{self.base64()}"

    def uri(self) -> str:
        """The part's URL, or its bytes as a ``data:`` URL."""
        return self.url if self.url is not None else self.data_url()


class _LinkablePart(MediaPart):
    @classmethod
    def from_url(cls, url: str, media_type: str | None = None) -> Self:
        """The part at ``url`` (http or https), which the provider fetches; ``media_type`` is told from the
        URL's suffix when not given."""
        _check_url(url, cls.kind)
        _check_type_argument(f"{cls.__name__}.from_url", media_type)
        found = media_type or _guess(cls.kind, None, url)
        if found is None:
            raise LLMConfigurationError(
                f"{cls.__name__}.from_url cannot tell the media type of {_shown(url)!r} from its name; "
                f"give media_type= (one of {', '.join(MEDIA_TYPES[cls.kind])})"
            )
        return cls(url=url, media_type=found)


class Image(_LinkablePart):
    """An image (PNG, JPEG, GIF or WebP) in a user message: ``Image.from_path("cat.png")``."""

    kind: ClassVar[PartKind] = "image"
    type: Literal["image"] = "image"


class Document(_LinkablePart):
    """A PDF document in a user message; ``name`` is its file name (sent where the provider takes one)."""

    kind: ClassVar[PartKind] = "document"
    type: Literal["document"] = "document"
    name: str | None = None

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str | None = None, *, name: str | None = None) -> Self:
        """The document for ``data`` (PDF bytes), optionally with a file ``name``."""
        if name is not None and not isinstance(name, str):
            raise LLMConfigurationError(
                f"Document.from_bytes: name must be a file name (str), got {type(name).__name__}"
            )
        part = super().from_bytes(data, media_type)
        return part if name is None else part.model_copy(update={"name": name})

    @property
    def filename(self) -> str:
        """The name providers are given: ``name``, or the URL's last path segment, or ``document.pdf``."""
        from_url = urlsplit(self.url).path.rsplit("/", 1)[-1] if self.url else ""
        return self.name or from_url or "document.pdf"


class Audio(MediaPart):
    """An audio clip (WAV or MP3) in a user message: ``Audio.from_path("question.wav")``."""

    kind: ClassVar[PartKind] = "audio"
    type: Literal["audio"] = "audio"

    @property
    def format(self) -> Literal["wav", "mp3"]:
        """The audio format by its short name, as OpenAI's ``input_audio`` wants it."""
        return "wav" if self.media_type == "audio/wav" else "mp3"


ContentPart = str | Annotated[Image | Document | Audio, Field(discriminator="type")]
"""One piece of a user message: text, or an image, document or audio part (as data: by its ``type``)."""


_BY_KIND: dict[PartKind, type[Image] | type[Document] | type[Audio]] = {
    "image": Image,
    "document": Document,
    "audio": Audio,
}


def part_from_path(path: str | os.PathLike[str]) -> Image | Document | Audio:
    """The image, document or audio part for the file at ``path``, whichever its bytes are."""
    file = _path(path, "part_from_path")
    data = _read(file)
    part_class = _BY_KIND[kind_of(_type_of_file(file, data)) or "image"]
    return part_class._from_file(file, data)


def _path(path: Any, where: str) -> Path:
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise LLMConfigurationError(f"{where} takes a path (str or os.PathLike), got {type(path).__name__}")
    try:
        return Path(path)
    except TypeError as exc:
        raise LLMConfigurationError(f"{where} takes a path (str or os.PathLike): {exc}") from None


def _check_type_argument(where: str, media_type: Any) -> None:
    if media_type is not None and not isinstance(media_type, str):
        raise LLMConfigurationError(
            f"{where}: media_type must be a media type string such as 'image/png', got {type(media_type).__name__}"
        )


def _invalid(cls: type[MediaPart], error: ValidationError) -> LLMConfigurationError:
    """The typed error for pydantic's complaints about a part's fields (no value is shown: it may be the file)."""
    problems = []
    for item in error.errors(include_url=False, include_input=True):
        field = ".".join(str(p) for p in item["loc"]) or "(the part)"
        shown = "an unknown field" if item["type"] == "extra_forbidden" else type(item.get("input")).__name__
        problems.append(f"{field}: {item['msg']} (got {shown})")
    fields = ", ".join(name for name in cls.model_fields if name != "type")
    return LLMConfigurationError(f"{cls.__name__}: {'; '.join(problems)}; its fields are {fields}")


def _read(file: Path) -> bytes:
    """The file's bytes, refusing what is not a readable regular file of at most ``MAX_PART_BYTES``.

    What is not a regular file (a FIFO, a device, a socket, a directory) is refused from its ``stat``,
    before it is opened: opening a FIFO without a writer, or reading a device, would never end. The file
    is then opened without blocking and checked again, in case it was swapped meanwhile.
    """
    where = repr(str(file))
    try:
        _check_regular(where, os.stat(file).st_mode)
        descriptor = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(descriptor, "rb") as handle:
            info = os.fstat(handle.fileno())
            _check_regular(where, info.st_mode)
            if info.st_size > MAX_PART_BYTES:
                raise LLMConfigurationError(
                    f"{where} is {_size(info.st_size)}, larger than the {_size(MAX_PART_BYTES)} a part may hold; "
                    "shrink the file or send it by URL"
                )
            data = handle.read(MAX_PART_BYTES + 1)
    except FileNotFoundError:
        raise LLMConfigurationError(f"{where} does not exist; check the path") from None
    except PermissionError:
        raise LLMConfigurationError(f"{where} cannot be read: permission denied") from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise LLMConfigurationError(f"{where} cannot be read: {reason}") from None
    if len(data) > MAX_PART_BYTES:
        raise LLMConfigurationError(f"{where} grew past the {_size(MAX_PART_BYTES)} a part may hold while it was read")
    return data


_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_regular(where: str, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise LLMConfigurationError(f"{where} is a directory; give the path of a file")
    what = next((name for test, name in _NOT_REGULAR if test(mode)), "of an unknown file type")
    raise LLMConfigurationError(
        f"{where} is not a regular file: it is {what}; give the path of an image, PDF or audio file"
    )


def _type_of_file(file: Path, data: bytes) -> str:
    """The media type the bytes show, refused when unknown or when the file's suffix says another."""
    where = repr(str(file))
    found = sniff(data)
    named = type_of_suffix(file.name)
    if found is None:
        known = ", ".join(t for types in MEDIA_TYPES.values() for t in types)
        said = f" although its name says {named}" if named else ""
        raise LLMConfigurationError(f"{where} is no file type llmplex sends{said} (is it damaged?); supported: {known}")
    if named is not None and named != found:
        raise LLMConfigurationError(
            f"{where} holds {found} data but its name says {named}; rename the file to match its content"
        )
    return found


def _decode(text: str, kind: PartKind) -> bytes:
    urlsafe = "-" in text or "_" in text  # pydantic's own base64 JSON is the URL-safe alphabet
    try:
        return base64.b64decode(text.encode("ascii"), altchars=b"-_" if urlsafe else None, validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise LLMConfigurationError(f"the data of {_ARTICLE[kind]} given as text is not base64") from None


def _guess(kind: PartKind, data: Any, url: Any) -> str | None:
    """The media type the bytes show, else the URL's suffix, else the kind's only type."""
    if isinstance(data, bytes):
        return sniff(data)
    named = type_of_suffix(urlsplit(url).path) if isinstance(url, str) else None
    only = MEDIA_TYPES[kind][0] if len(MEDIA_TYPES[kind]) == 1 else None
    return named or only


def _shown(url: str) -> str:
    """``url`` as reprs and messages show it: no user:password, and a query (a signed URL's
    signature, a token) shortened to ``?...``."""
    parts = urlsplit(url)
    host = f"//{parts.netloc.rpartition('@')[2]}" if parts.netloc else ""
    scheme = f"{parts.scheme}:" if parts.scheme else ""
    return f"{scheme}{host}{parts.path}" + ("?..." if parts.query else "")


def _check_url(url: str, kind: PartKind) -> None:
    if not isinstance(url, str):
        raise LLMConfigurationError(f"the URL of {_ARTICLE[kind]} must be a string, got {type(url).__name__}")
    parts = urlsplit(url)
    if (
        parts.scheme not in ("http", "https")
        or not parts.netloc
        or any(c.isspace() or "\ud800" <= c <= "\udfff" for c in url)
    ):
        raise LLMConfigurationError(
            f"{_shown(url)[:80]!r} is not an http(s) URL; give {_ARTICLE[kind]} by URL as https://..., "
            f"or its bytes with llmplex.{_CLASS[kind]}.from_path / from_bytes"
        )
