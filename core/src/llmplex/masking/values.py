"""Scrub secrets from anything that may be shown: error messages, bodies, URLs, events, logs.

Three nets: every secret value core has seen (provider settings, credentials
inside a ``base_url``) is registered with ``register_secret``; well-known
key shapes (``sk-...``, bearer tokens, Google ``AIza...`` keys) are masked even
when core never saw them; and in any URL the credentials (``user:pass@``) and
the values of query parameters with a secret name (``is_secret_name``) are
masked.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any, TypeVar
from urllib.parse import unquote_plus, urlsplit

__all__ = [
    "REDACTED",
    "SECRET_WORDS",
    "is_secret_name",
    "looks_like_key",
    "mask_setting",
    "redact",
    "redact_headers",
    "register_secret",
    "register_url_secrets",
    "url_credentials",
]

REDACTED = "***"

MAX_DEPTH = 64
"""How deep ``redact`` walks nested data."""

TOO_DEEP = "<nested too deeply>"
"""What ``redact`` leaves of data nested deeper than ``MAX_DEPTH``."""

SECRET_WORDS = frozenset(
    {
        "apikey",
        "auth",
        "authorization",
        "cookie",
        "credential",
        "credentials",
        "key",
        "keys",
        "passphrase",
        "passwd",
        "password",
        "passwords",
        "pwd",
        "secret",
        "secrets",
        "sig",
        "signature",
    }
)
"""A config key, URL query parameter or HTTP header is secret when one of its words is one of these."""

_COUNTING_BEFORE = frozenset({"max", "min", "num", "total", "input", "output", "prompt", "completion", "reasoning"})
_COUNTING_AFTER = frozenset({"rate", "limit", "limits", "count", "counts", "budget", "usage", "per", "type"})
"""Words that, next to ``token``, make it model tokens counted (``max_output_token``, ``token_rate_limit``)."""
_KEY_SHAPES = re.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,})"
    r"|(AIza[0-9A-Za-z_\-]{20,})"
    r"|((?i:bearer)\s+[A-Za-z0-9._\-]{8,})"
)
_SECRET_KEYS = re.compile(r"(?i)(api[_-]?key|authorization|secret|password|token)$")
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#'\"<>]+@")
_QUERY_PARAM = re.compile(r"([?&;])([A-Za-z0-9_.\-]+)=([^&#;\s'\"<>]*)")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_KEY_RUN = re.compile(r"[A-Za-z0-9]{16,}")
_MIN_SECRET_LENGTH = 8
"""Shorter values are placeholders ("test", "none"), not keys: masking them would garble every message."""

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()
"""Longest first: a secret that contains another is masked whole, not left with the other's remainder showing."""

T = TypeVar("T")


def register_secret(value: str | None) -> None:
    """Remember a secret so that ``redact`` masks it wherever it appears."""
    global _secrets
    if value and len(value) >= _MIN_SECRET_LENGTH and value not in _secrets:
        with _lock:
            _secrets = tuple(sorted({*_secrets, value}, key=len, reverse=True))


def is_secret_name(name: str) -> bool:
    """Whether a config key, query parameter or header named ``name`` holds a secret.

    The name is split into words at ``_``, ``-``, ``.`` and camelCase humps
    (``x-goog-api-key``, ``accessToken``, ``aws_secret_access_key``); it is secret
    when a word is in `SECRET_WORDS`, or is ``token`` naming a credential (``token``,
    ``api_token``, ``access_token``, ``refreshToken``, ``x-auth-token``, ``HF_TOKEN``,
    ``token_value``). Model tokens counted are not secret: ``max_tokens``, ``max_output_token``,
    ``token_rate_limit``, ``token_count``, ``tokens_per_minute``.
    """
    words = ["", *_NOT_ALNUM.split(_CAMEL.sub("_", name).lower()), ""]
    if any(word in SECRET_WORDS for word in words) or "".join(words).endswith("apikey"):
        return True
    return any(
        word == "token" and words[i - 1] not in _COUNTING_BEFORE and words[i + 1] not in _COUNTING_AFTER
        for i, word in enumerate(words[1:-1], start=1)
    )


def looks_like_key(text: str) -> bool:
    """Whether ``text`` contains something shaped like a key: a known prefix, or 16+ letters and digits mixed."""
    if _KEY_SHAPES.search(text):
        return True
    return any(not run.isalpha() and not run.isdigit() for run in _KEY_RUN.findall(text))


def _mask_query(match: re.Match[str]) -> str:
    separator, name, value = match.groups()
    return f"{separator}{name}={REDACTED}" if value and is_secret_name(name) else match.group(0)


def _redact_text(text: str) -> str:
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    lowered = text.lower()  # cheap substring tests spare the regular expressions most texts
    if "sk-" in lowered or "aiza" in lowered or "bearer" in lowered:
        text = _KEY_SHAPES.sub(REDACTED, text)
    if "@" in text and "://" in text:
        text = _URL_USERINFO.sub(rf"\1{REDACTED}@", text)
    if "=" in text and ("?" in text or "&" in text or ";" in text):
        text = _QUERY_PARAM.sub(_mask_query, text)
    return text


def redact(value: T) -> T:
    """Return ``value`` with secrets masked; walks strings, mappings, lists and tuples.

    Data nested deeper than ``MAX_DEPTH`` (a hostile error body) is replaced by
    ``TOO_DEEP`` below that depth, rather than exhausting the interpreter's stack.
    """
    return _redact(value, 0)


def _redact(value: T, depth: int) -> T:
    if isinstance(value, str):
        return _redact_text(value)  # type: ignore[return-value]
    if isinstance(value, (Mapping, list, tuple)) and depth >= MAX_DEPTH:
        return TOO_DEEP  # type: ignore[return-value]
    if isinstance(value, dict):
        return {  # type: ignore[return-value]
            k: (REDACTED if isinstance(k, str) and _SECRET_KEYS.search(k) and v else _redact(v, depth + 1))
            for k, v in value.items()
        }
    if isinstance(value, Mapping) and not isinstance(value, MutableMapping):
        # read-only (aiohttp's CIMultiDictProxy headers in its errors): a masked dict when anything changes
        plain = dict(value.items())
        masked = _redact(plain, depth)
        return value if masked == plain else masked  # type: ignore[return-value]
    if isinstance(value, (list, tuple)):
        return _rebuild(value, [_redact(v, depth + 1) for v in value])  # type: ignore[no-any-return]
    return value


def _rebuild(value: list[Any] | tuple[Any, ...], items: list[Any]) -> Any:
    """``items`` in a sequence of ``value``'s type: a NamedTuple takes them as arguments, not one iterable."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*items)
    return type(value)(items)


def redact_headers(headers: Any) -> dict[str, str]:
    """Headers as a plain dict without the secret-named ones (``Authorization``, ``x-api-key``), others redacted."""
    return {str(name): redact(str(value)) for name, value in headers.items() if not is_secret_name(str(name))}


def mask_setting(name: str, value: Any) -> Any:
    """A config value as it may be shown in a message: masked under a secret name or when shaped like a key."""
    if isinstance(value, dict):
        return {k: mask_setting(str(k), v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return _rebuild(value, [mask_setting(name, v) for v in value])
    if isinstance(value, str):
        return REDACTED if is_secret_name(name) or looks_like_key(value) else redact(value)
    return value


def url_credentials(url: str) -> list[str]:
    """The credentials in ``url``: its password (or its user name when alone) and the values of secret-named
    query parameters, as written and decoded; empty for a URL without any (or text that is not a URL)."""
    if "@" not in url and "=" not in url:
        return []
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return []
    found = [password] if password else [username] if username else []
    for pair in re.split("[&;]", parts.query):
        name, _, value = pair.partition("=")
        if is_secret_name(unquote_plus(name)):
            found.append(value)
    return sorted({form for value in found if value for form in (value, unquote_plus(value))})


def register_url_secrets(url: str) -> None:
    """Register the credentials in ``url`` (``url_credentials``) for masking."""
    for value in url_credentials(url):
        register_secret(value)
