"""botocore's ``SigV4Auth`` for the lean request, with what does not change between calls computed once.

The signature is botocore's, step for step; three of its steps repeat work from
one call to the next, and ``LeanSigV4Auth`` (one per call) takes their results
from a ``SigningCache`` shared by the calls of one client:

- the signing key (four HMACs of the secret, the day, the region and the
  service) is kept for the one secret and day it was derived for: another day
  or other credentials derive a new one;
- the canonical path of each URL path (normalized and quoted), the
  canonical request's method, path and query lines of each method and URL
  (a request without ``params``), and the ``host`` botocore signs for each
  URL are kept, up to ``SigningCache.PATHS`` of each (the host is botocore's:
  derived by it from the URL the first time, then handed to its selection as
  a ``host`` header, which it takes as is);
- the headers to sign are selected once per request, not twice (``add_auth``
  selects them for the canonical request and again for ``SignedHeaders=``,
  with no header changed in between), into a plain ``dict`` once botocore has
  derived the URL's host (botocore's selection is an ``email`` message, whose
  values ``canonical_headers`` looks up name by name), and their canonical
  lines and ``SignedHeaders=`` list are worked out once, as botocore's
  ``canonical_headers`` and ``signed_headers`` write them; which names are
  signed, in which order, and their ``SignedHeaders=`` list are worked out
  once per tuple of header names (``SigningCache.plans``).
"""

from __future__ import annotations

import hashlib
import hmac
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from botocore.auth import SIGNED_HEADERS_BLACKLIST, SigV4Auth

__all__ = ["LeanSigV4Auth", "SigningCache"]


class SigningCache:
    """What the signers of one client share (a signing key, canonical paths, hosts); safe to share between
    threads."""

    PATHS = 256
    """Canonical paths and hosts kept (one per model id sent): beyond, the cache starts again."""

    def __init__(self) -> None:
        self.key: tuple[tuple[bytes, str, str, str], bytes] | None = None
        """The last signing key derived and what from (the secret's SHA-256, never the secret itself; the day, the
        region, the service): replaced whole, so a reader sees one consistent pair."""
        self.paths: dict[str, str] = {}
        """Canonical paths by URL path."""
        self.hosts: dict[str, str] = {}
        """The ``host`` botocore signs, by URL (derived by it from the URL: the request sends no ``Host``)."""
        self.heads: dict[str, str] = {}
        """The canonical request's first lines (method, canonical path, canonical query), by method and URL."""
        self.plans: dict[tuple[str, ...], tuple[tuple[tuple[str, str], ...], str] | None] = {}
        """By the request's header names in order: the names to sign (each with its lowercase, sorted by it) and
        the ``SignedHeaders=`` list, or ``None`` where botocore's selection is needed (two names alike but for
        case)."""


class LeanSigV4Auth(SigV4Auth):
    """``SigV4Auth`` for one request, reading and filling ``cache`` (see the module's docstring); the request
    carries no ``Host`` header (the lean request never does), so botocore signs the one it derives from the URL."""

    def __init__(self, credentials: Any, service_name: str, region_name: str, cache: SigningCache) -> None:
        super().__init__(credentials, service_name, region_name)
        self._scope = (region_name, service_name)
        self._cache = cache
        self._selected: tuple[Any, Any] | None = None
        self._lines: tuple[Any, str, str] | None = None
        self._planned: tuple[dict[str, str], str] | None = None
        """The last selection made by plan (its names in sorted order) and its ``SignedHeaders=`` list."""

    def headers_to_sign(self, request: Any) -> Any:
        """botocore's selection, made once for ``request``, with the ``host`` botocore derived for its URL before."""
        selected = self._selected
        if selected is None or selected[0] is not request:
            selected = self._selected = (request, self._select(request))
        return selected[1]

    def _select(self, request: Any) -> Any:
        hosts, url = self._cache.hosts, request.url
        host = hosts.get(url)
        if host is None:
            selected = super().headers_to_sign(request)
            _keep(hosts, url, selected["host"])
            return selected
        headers = {**request.headers, "host": host}  # botocore adds the host after the request's headers
        plan = self._plan(tuple(headers))
        if plan is not None:
            plain = {lower: headers[name] for name, lower in plan[0]}
            if all(type(value) is str and value.isascii() for value in plain.values()):
                self._planned = (plain, plan[1])
                return plain  # as botocore's: no name given twice, no value its email message would hand back changed
        hosted: Any = SimpleNamespace(headers=headers, url=url)
        return super().headers_to_sign(hosted)

    def _plan(self, names: tuple[str, ...]) -> tuple[tuple[tuple[str, str], ...], str] | None:
        """The names of ``names`` to sign, each with its lowercase, sorted by it, and the ``SignedHeaders=`` list
        botocore writes for them; ``None`` if two of them are alike but for case (worked out once per tuple)."""
        plans = self._cache.plans
        if names in plans:
            return plans[names]
        signed = [(name, name.lower()) for name in names if name.lower() not in SIGNED_HEADERS_BLACKLIST]
        plan = None
        if len({lower for _, lower in signed}) == len(signed):
            ordered = tuple(sorted(signed, key=lambda pair: pair[1]))
            plan = (ordered, ";".join(sorted(lower.strip() for _, lower in ordered)))
        if len(plans) >= SigningCache.PATHS:
            plans.clear()
        plans[names] = plan
        return plan

    def canonical_request(self, request: Any) -> str:
        """botocore's canonical request, its method, path and query lines worked out once per method and URL."""
        if request.params:
            return str(super().canonical_request(request))
        key = f"{request.method} {request.url}"
        head = self._cache.heads.get(key)
        if head is None:
            parts = urlsplit(request.url)
            lines = (request.method.upper(), self._normalize_url_path(parts.path), self.canonical_query_string(request))
            head = _keep(self._cache.heads, key, "\n".join(lines))
        selection = self.headers_to_sign(request)
        if "X-Amz-Content-SHA256" in request.headers:
            checksum = request.headers["X-Amz-Content-SHA256"]
        else:
            checksum = self.payload(request)
        return "\n".join((head, self.canonical_headers(selection) + "\n", self.signed_headers(selection), checksum))

    def canonical_headers(self, headers_to_sign: Any) -> str:
        """botocore's canonical header lines (of a plain selection: worked out once, with ``signed_headers``)."""
        if type(headers_to_sign) is not dict:
            return str(super().canonical_headers(headers_to_sign))
        return self._canonical(headers_to_sign)[1]

    def signed_headers(self, headers_to_sign: Any) -> str:
        """botocore's ``SignedHeaders=`` list (of a plain selection: worked out once, with the canonical lines)."""
        if type(headers_to_sign) is not dict:
            return str(super().signed_headers(headers_to_sign))
        return self._canonical(headers_to_sign)[2]

    def _canonical(self, selection: dict[str, str]) -> tuple[Any, str, str]:
        """The lines and list botocore writes for ``selection``: each name's value with its whitespace runs made one
        space, names sorted (the lines' as selected, lowercased; the list's lowercased and stripped; a selection
        made by plan is in that order already, its list worked out with the plan)."""
        lines = self._lines
        if lines is None or lines[0] is not selection:
            planned = self._planned
            if planned is not None and planned[0] is selection:
                canonical = "\n".join(f"{name}:{' '.join(value.split())}" for name, value in selection.items())
                signed = planned[1]
            else:
                canonical = "\n".join(f"{name}:{' '.join(selection[name].split())}" for name in sorted(selection))
                signed = ";".join(sorted(name.lower().strip() for name in selection))
            lines = self._lines = (selection, canonical, signed)
        return lines

    def _normalize_url_path(self, path: str) -> str:
        canonical = self._cache.paths.get(path)
        if canonical is None:
            canonical = _keep(self._cache.paths, path, super()._normalize_url_path(path))  # type: ignore[misc]
        return canonical

    def signature(self, string_to_sign: str, request: Any) -> str:
        """The signature with the signing key of this secret and day (derived once per secret and day)."""
        secret, day = str(self.credentials.secret_key), request.context["timestamp"][0:8]
        scope = (hashlib.sha256(secret.encode()).digest(), day, *self._scope)
        cached = self._cache.key
        if cached is not None and cached[0] == scope:
            key = cached[1]
        else:
            key = self._signing_key(secret, day)
            self._cache.key = (scope, key)
        return hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()

    def _signing_key(self, secret: str, day: str) -> bytes:
        """SigV4's signing key: the secret's HMAC chain over the day, the region, the service and ``aws4_request``."""
        key = f"AWS4{secret}".encode()
        for part in (day, *self._scope, "aws4_request"):
            key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
        return key


def _keep(cache: dict[str, str], key: str, value: str) -> str:
    """``value`` kept in ``cache`` under ``key``; a full cache starts again (``SigningCache.PATHS``)."""
    if len(cache) >= SigningCache.PATHS:
        cache.clear()
    cache[key] = value
    return value
