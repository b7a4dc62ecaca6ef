"""``base_url`` helpers for plugins: a query string in a base URL becomes the SDK's default query.

Some gateways want the key as a query parameter (``https://gw.example/v1?key=...``).
SDKs append paths to ``base_url`` as text, so a query in it ends up in the middle
of the path (``/v1?key=.../chat/completions``); ``split_query`` takes it out,
for the SDK's own default query parameters (``default_query=``, ``params=``).
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit

__all__ = ["split_query"]


def split_query(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its query string and fragment, and the query's parameters (the last of a repeated name)."""
    parts = urlsplit(url)
    if not parts.query and not parts.fragment:
        return url, {}
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return base, dict(parse_qsl(parts.query, keep_blank_values=True))
