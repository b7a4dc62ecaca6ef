"""Gateways speaking the HTTP protocol ``llmplex serve`` runs (head limits, connection cap), and raw HTTP/1.1
helpers for the tests of issue 31 items 2 and 6."""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import llmplex
from llmplex.gateway.guard.door import Door
from llmplex.gateway.guard.head import GuardedHttpToolsProtocol, HeadLimits
from tests.gateway.harness import Gateway
from tests.gateway.keyed_support import KeyedGateway


@contextmanager
def guarded_gateway(config: Mapping[str, Any], *, keyed: bool = False) -> Iterator[Gateway]:
    """A started gateway (``KeyedGateway`` when ``keyed``: keys, admin API, ``/ui``) over ``config``, with the
    guarded protocol of ``llmplex serve``; stopped afterwards."""
    client = llmplex.Client(dict(config))
    gateway = KeyedGateway(client) if keyed else Gateway(client)
    gateway.server.config.http = GuardedHttpToolsProtocol
    gateway.server.config.head_limits = HeadLimits.of(client.config.gateway)  # type: ignore[attr-defined]
    gateway.start()
    try:
        yield gateway
    finally:
        gateway.stop()


def door_of(gateway: Gateway) -> Door:
    """The running application's ``Door`` (built on its first request)."""
    layer: Any = gateway.app.middleware_stack
    while layer is not None and not isinstance(layer, Door):
        layer = getattr(layer, "app", None)
    assert isinstance(layer, Door), "no Door in the middleware stack (has the gateway served a request yet?)"
    return layer


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A TCP connection to the gateway on ``port`` from address ``source`` (any of 127.0.0.0/8)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    return sock


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 answer read from ``sock``: status, headers (lower-case names), body (Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"the connection closed before an answer's head: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body[:length]


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (a read returns end-of-file or a reset, within the socket's timeout)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def request_bytes(method: str, path: str, headers: Mapping[str, str], body: bytes = b"") -> bytes:
    """A raw HTTP/1.1 request."""
    lines = [f"{method} {path} HTTP/1.1", "host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    if body or method == "POST":
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
