"""Three fake OpenAI deployments for bench/routing.py, served by aiohttp in a process of their own.

Run: ``python bench/routing_fakes.py --slow-seconds 5 --rpm 300``; it prints one JSON line with the three
ports, then serves until killed. Each answers ``POST /v1/chat/completions`` (JSON, or SSE when asked):

* ``flaky``: 30 % of requests get a 500;
* ``slow``: 20 % of requests wait ``--slow-seconds`` before the first byte;
* ``limited``: past ``--rpm`` requests in the last minute, a 429 with ``retry-after``.

``POST /reset`` forgets the counts and reseeds the draws (each run starts alike); ``GET /stats`` gives
``{"received": n, "failed": n, "slowed": n, "limited": n, "cancelled": n}``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import sys
import time
from typing import Any

from aiohttp import web

USAGE = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}


class Fake:
    """One deployment's behaviour and counts."""

    def __init__(self, name: str, slow_seconds: float, rpm: int) -> None:
        self.name = name
        self.slow_seconds = slow_seconds
        self.rpm = rpm
        self.reset()

    def reset(self) -> None:
        self.rng = random.Random(f"routing-bench-{self.name}")
        self.stats = collections.Counter[str]()
        self.window: collections.deque[float] = collections.deque()

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        self.stats["received"] += 1
        draw = self.rng.random()
        if self.name == "flaky" and draw < 0.3:
            self.stats["failed"] += 1
            return web.json_response({"error": {"message": "server error", "type": "server_error"}}, status=500)
        if self.name == "limited":
            now = time.monotonic()
            while self.window and self.window[0] <= now - 60:
                self.window.popleft()
            if len(self.window) >= self.rpm:
                self.stats["limited"] += 1
                error = {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}
                wait = max(1, int(self.window[0] + 60 - now))
                return web.json_response({"error": error}, status=429, headers={"retry-after": str(wait)})
            self.window.append(now)
        if self.name == "slow" and draw < 0.2:
            self.stats["slowed"] += 1
            try:
                await asyncio.sleep(self.slow_seconds)
            except asyncio.CancelledError:  # the client hung up (a hedge won elsewhere)
                self.stats["cancelled"] += 1
                raise
        answer = {
            "id": f"chatcmpl-{self.name}-{self.stats['received']}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "gpt-4o-mini"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": USAGE,
        }
        return web.json_response(answer)

    async def reset_route(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({"ok": True})

    async def stats_route(self, request: web.Request) -> web.Response:
        return web.json_response(dict(self.stats))


async def serve(slow_seconds: float, rpm: int) -> None:
    ports = {}
    for name in ("flaky", "slow", "limited"):
        fake = Fake(name, slow_seconds, rpm)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", fake.chat)
        app.router.add_post("/reset", fake.reset_route)
        app.router.add_get("/stats", fake.stats_route)
        runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        ports[name] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(json.dumps(ports), flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow-seconds", type=float, default=5.0)
    parser.add_argument("--rpm", type=int, default=300)
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(serve(args.slow_seconds, args.rpm))


if __name__ == "__main__":
    sys.exit(main())
