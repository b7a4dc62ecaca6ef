"""Read the README and the docs as mkdocs renders them: snippet includes expanded, fenced blocks found."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SHELL_LANGUAGES = frozenset({"sh", "shell", "bash", "console"})

_INCLUDE = re.compile(r'^--8<-- "([^":]+)(?::([\w-]+))?"$')
_SECTION_MARK = re.compile(r"--8<-- \[(start|end):([\w-]+)\]")
_FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language, the rest of its fence line, its code, and the HTML comments
    on the lines just above it (how a page marks a block for the docs tests)."""

    language: str
    attributes: str
    code: str
    notes: tuple[str, ...]
    line: int


def section(path: Path, name: str) -> str:
    """The lines of ``path`` between ``--8<-- [start:name]`` and ``--8<-- [end:name]`` (pymdownx.snippets)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    marks = {(m.group(1), m.group(2)): i for i, line in enumerate(lines) if (m := _SECTION_MARK.search(line))}
    assert ("start", name) in marks and ("end", name) in marks, f"{path.name} has no section {name!r}"
    kept = lines[marks["start", name] + 1 : marks["end", name]]
    return "".join(line for line in kept if not _SECTION_MARK.search(line))


def expand(text: str) -> str:
    """``text`` with every ``--8<-- "FILE"`` / ``--8<-- "FILE:SECTION"`` line replaced by what it includes."""
    out = []
    for line in text.splitlines(keepends=True):
        match = _INCLUDE.match(line.strip())
        if match is None:
            out.append(line)
            continue
        path = ROOT / match.group(1)
        included = section(path, match.group(2)) if match.group(2) else path.read_text(encoding="utf-8")
        out.append(included if included.endswith("\n") else included + "\n")
    return "".join(out)


def blocks(text: str) -> list[Block]:
    """Every fenced block of ``text`` (after :func:`expand`), in order."""
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n")
        notes = []
        while before.endswith("-->"):
            start = before.rfind("<!--")
            notes.append(before[start + 4 : -3].strip())
            before = before[:start].rstrip("\n")
        found.append(
            Block(
                language=match.group(1),
                attributes=match.group(2).strip(),
                code=match.group(3),
                notes=tuple(reversed(notes)),
                line=text.count("\n", 0, match.start()) + 1,
            )
        )
    return found


def shell_blocks(text: str) -> list[str]:
    """The code of every shell block (``sh``, ``console``, ...)."""
    return [b.code for b in blocks(expand(text)) if b.language in SHELL_LANGUAGES]


def quickstart() -> str:
    """The README's quickstart section, which docs/quickstart.md includes."""
    return section(README, "quickstart")
