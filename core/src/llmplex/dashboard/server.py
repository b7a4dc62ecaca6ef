"""``llmplex logs --serve``: the dashboard on uvicorn at 127.0.0.1, announcing its URL once bound."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llmplex.errors import LLMConfigurationError

__all__ = ["HOST", "serve"]

HOST = "127.0.0.1"
"""The only address the dashboard listens on (it shows every logged prompt: never on a public interface)."""


def _server_class() -> type[Any]:
    import uvicorn

    class Announcing(uvicorn.Server):
        """A uvicorn server that announces its URL once bound (the real port when 0 was asked for)."""

        def __init__(self, config: uvicorn.Config, announce: Callable[[str], None]) -> None:
            super().__init__(config)
            self._announce = announce

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started and self.servers:
                port = self.servers[0].sockets[0].getsockname()[1]
                self._announce(f"llmplex call log dashboard on http://{HOST}:{port}/ (Ctrl-C stops it)")

    return Announcing


def serve(url: str, port: int, announce: Callable[[str], None] = print) -> None:
    """Serve the dashboard over the call log at ``url`` on ``127.0.0.1:port`` (0: any free port) until stopped.

    Only requests naming this machine (``Host: 127.0.0.1`` or ``localhost``) are answered, so a web page
    cannot read the log through a DNS name rebound to 127.0.0.1.
    """
    import socket

    import uvicorn
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    from llmplex.dashboard.app import create_dashboard

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise LLMConfigurationError(
            f"the dashboard cannot listen on {HOST}:{port} ({exc.strerror or exc}); choose another port with --port"
        ) from None
    dashboard = create_dashboard(url)
    app = TrustedHostMiddleware(dashboard, allowed_hosts=[HOST, "localhost"])
    config = uvicorn.Config(
        app, host=HOST, port=port, log_level="warning", lifespan="on", server_header=False, access_log=False
    )
    try:
        _server_class()(config, announce).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it stopped on: stopping is what was asked
        pass
    finally:
        sock.close()
