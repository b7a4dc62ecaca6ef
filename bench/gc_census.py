"""What the garbage collector sees of a call at 64 in flight: collections per call and the young objects alive.

Run: ``python bench/gc_census.py [CASE ...]`` (default: raw httpx and the three llmplex cases; about
a minute). The async cases of ``bench/transport_cases.py`` run against the stub server after the heap
is frozen, as in ``bench/transport.py``; for each case, ``CALLS`` calls at 64 in flight:

* collections: young (generation 0) and older collections during the run, per 1,000 calls;
* census: at every young collection, the objects in generation 0 counted by type; the table gives
  them per call in flight (the count over the calls' own ``llmplex.engine.pipeline.Pipeline``
  objects seen, so it reads "objects each call holds while it waits"), for the kinds a call's own
  Python code makes: closures (``function``, ``cell``), coroutines, and core's classes.

Issue 26: core's per-call containers, before and after (see README, "Issue 26").
"""

from __future__ import annotations

import asyncio
import collections
import gc
import sys
import tempfile
from pathlib import Path
from typing import Any

import transport  # bench/ is on the path when this runs as a script
import transport_cases

CALLS = 2560
DEFAULT_CASES = ("raw httpx", "llmplex chat", "llmplex responses", "llmplex anthropic")
KINDS = ("builtins.function", "builtins.cell", "builtins.coroutine", "builtins.generator", "builtins.dict")


def census(call_factory: Any) -> tuple[list[int], collections.Counter[str]]:
    """Collections per generation and the young objects by type over ``CALLS`` calls."""
    counts = [0, 0, 0]
    types: collections.Counter[str] = collections.Counter()

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase != "start":
            return
        counts[info["generation"]] += 1
        if info["generation"] == 0:
            for item in gc.get_objects(generation=0):
                kind = type(item)
                types[f"{kind.__module__}.{kind.__qualname__}"] += 1

    async def run() -> None:
        call = call_factory()
        await transport._burst(call, 256)
        gc.callbacks.append(watch)
        try:
            await transport._burst(call, CALLS)
        finally:
            gc.callbacks.remove(watch)

    asyncio.run(run())
    return counts, types


def main() -> int:
    names = sys.argv[1:] or list(DEFAULT_CASES)
    server = transport.StubServer(None)
    try:
        with tempfile.TemporaryDirectory() as folder:
            transport_cases.configure_llmplex(server.root, Path(folder))
            cases = transport_cases.build(server.root, litellm=False)
            gc.collect()
            gc.freeze()
            for name in names:
                counts, types = census(cases.asynchronous[name])
                per_k = [f"{count * 1000 / CALLS:.1f}" for count in counts]
                print(f"\n{name}: collections per 1,000 calls (gen 0/1/2): {' / '.join(per_k)}")
                calls = types.get("llmplex.engine.pipeline.Pipeline", 0)
                if not calls:
                    continue
                core = {k: v for k, v in types.items() if k.startswith("llmplex.")}
                print(f"  young objects per call in flight ({calls} calls seen):")
                for kind in (*KINDS, *sorted(core, key=core.__getitem__, reverse=True)):
                    print(f"    {types.get(kind, 0) / calls:6.1f}  {kind}")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
