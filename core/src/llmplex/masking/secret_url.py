"""``SecretURL``: a URL that may hold a password (a Redis storage URL), shown everywhere with it masked."""

from __future__ import annotations

from pydantic import SecretStr

from llmplex.masking.values import redact, register_url_secrets

__all__ = ["SecretURL", "reveal"]


class SecretURL(SecretStr):
    """A URL whose credentials never show: ``str()``, ``repr()``, a Python or JSON dump and a log record give
    it with its password and secret query values masked (``redis://***@127.0.0.1:6379/0``), so the host stays
    readable; ``get_secret_value()`` is the URL itself. Its credentials are registered as secrets, so they are
    masked in messages that quote the URL too."""

    def __init__(self, secret_value: str) -> None:
        super().__init__(secret_value)
        register_url_secrets(secret_value)

    def _display(self) -> str:
        return redact(self.get_secret_value())


def reveal(url: SecretURL | None) -> str | None:
    """The URL itself (to connect with), or ``None``."""
    return None if url is None else url.get_secret_value()
