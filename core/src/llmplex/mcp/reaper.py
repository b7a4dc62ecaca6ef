"""Ending what a stdio MCP server leaves behind: every process carrying its session's marker.

The SDK starts a server in a process group of its own and ends the group when
the server does not exit within its grace period; a server that exits on its
own when its stdin closes leaves its children running. Each server gets a
marker in its environment, which its children inherit (even those that leave
the group), and after the session ends whatever still carries it is ended:
SIGTERM, then SIGKILL. Processes are found in ``/proc`` (Linux); elsewhere the
SDK's group handling is all there is.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

__all__ = ["MARKER", "marked", "reap"]

MARKER = "LLMPLEX_MCP_SESSION"
"""The environment variable naming a server's session in its process and every child of it."""

_PROC = Path("/proc")


def marked(session: str) -> list[int]:
    """The live (not zombie) processes whose environment has ``MARKER=session``, and their children whose
    environment reads empty: a child in the middle of ``exec`` (its new environment is set a moment after the
    old one is dropped) or one started with an empty environment."""
    if not _PROC.is_dir():
        return []
    needle = f"{MARKER}={session}".encode()
    found: set[int] = set()
    bare: dict[int, int] = {}  # pid -> parent pid, for live processes with an empty environment
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environment = (entry / "environ").read_bytes()
            if environment and needle not in environment.split(b"\0"):
                continue
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except OSError:  # gone, or not ours to read
            continue
        if state == "Z":
            continue
        if environment:
            found.add(int(entry.name))
        else:
            bare[int(entry.name)] = int(parent)
    return sorted(found | _descendants_of(found, bare))


def _descendants_of(roots: set[int], parents: dict[int, int]) -> set[int]:
    """The pids of ``parents`` (pid -> parent pid) descending from ``roots`` through one another."""
    taken: set[int] = set()
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if pid not in taken and (parent in roots or parent in taken):
                taken.add(pid)
                grew = True
    return taken


async def reap(session: str, grace: float = 1.0) -> None:
    """End every process of ``session``: SIGTERM, and SIGKILL to those alive ``grace`` seconds later."""
    pids = marked(session)
    if not pids:
        return
    _signal(pids, signal.SIGTERM)
    end = time.monotonic() + grace
    while (pids := marked(session)) and time.monotonic() < end:  # noqa: ASYNC110 - polling other processes
        await asyncio.sleep(0.02)
    _signal(pids, signal.SIGKILL)


def _signal(pids: list[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            continue
