"""The floor of a Python gateway on this host: uvicorn (uvloop, httptools) forwarding each request's bytes to the
stub through one aiohttp session, and its answer's bytes back (streams chunk by chunk). No key, no parsing, no
routing, no spend, no metrics: what ``bench/gateway.py``'s ``bare`` row measures, so that the gateway's figures can be
read against what a second hop costs here at all (``llmplex serve`` does all of that on the same stack).

Run by ``bench/gateway_servers.start_bare``: ``BARE_UPSTREAM`` is the stub's root, ``BARE_KEY`` its key.
"""

from __future__ import annotations

import os
from typing import Any

import aiohttp

Scope = dict[str, Any]
Receive = Any
Send = Any

_session: list[aiohttp.ClientSession] = []


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI application: lifespan opens and closes the session; every HTTP request is forwarded as it is."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                _session.append(aiohttp.ClientSession(os.environ["BARE_UPSTREAM"]))
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await _session.pop().close()
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["method"] == "GET":  # the readiness probe
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    headers = {"content-type": "application/json", "authorization": f"Bearer {os.environ['BARE_KEY']}"}
    async with _session[0].post(scope["path"], data=body, headers=headers) as answer:
        kind = answer.headers.get("content-type", "application/json")
        if not kind.startswith("text/event-stream"):  # a whole answer: one write with its length
            whole = await answer.read()
            length = str(len(whole)).encode()
            start = [(b"content-type", kind.encode()), (b"content-length", length)]
            await send({"type": "http.response.start", "status": answer.status, "headers": start})
            await send({"type": "http.response.body", "body": whole})
            return
        await send(
            {"type": "http.response.start", "status": answer.status, "headers": [(b"content-type", kind.encode())]}
        )
        async for chunk in answer.content.iter_any():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})
