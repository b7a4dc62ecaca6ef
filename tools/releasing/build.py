"""Build every distribution with ``python -m build`` and check the files with ``twine check --strict``.

``uv build`` (the same PEP 517 hooks of hatchling, with less start-up per
distribution) may stand in for ``python -m build`` where time counts: the tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from uv import find_uv_bin

from tools.releasing.distributions import Distribution

__all__ = ["BuildError", "build_all", "expected_files", "twine_check"]


class BuildError(RuntimeError):
    """A build or a check failed; the message holds the tool's own output."""


def expected_files(dist: Distribution) -> tuple[str, str]:
    """The sdist's and the wheel's file names (pure-Python wheels)."""
    return f"{dist.stem}-{dist.version}.tar.gz", f"{dist.stem}-{dist.version}-py3-none-any.whl"


def _build(dist: Distribution, out_dir: Path, isolation: bool, uv: str | None) -> None:
    # neither --sdist nor --wheel: each builds the sdist, then the wheel from the unpacked sdist, so a file
    # the wheel needs but the sdist lacks fails here
    if uv is not None:
        command = [uv, "build", "--quiet", "--python", sys.executable, "--out-dir", str(out_dir)]
        command += [] if isolation else ["--no-build-isolation"]
    else:
        command = [sys.executable, "-m", "build", "--outdir", str(out_dir)]
        command += [] if isolation else ["--no-isolation"]
    command.append(str(dist.folder))
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BuildError(f"`{' '.join(command)}` failed:\n{done.stdout[-4000:]}{done.stderr[-4000:]}")


def build_all(
    distributions: list[Distribution], out_dir: Path, *, isolation: bool = True, jobs: int = 2, builder: str = "build"
) -> list[Path]:
    """Build each distribution's sdist and wheel into ``out_dir`` (which must be empty) with ``builder``
    (``build``: ``python -m build``; ``uv``: ``uv build``); return the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stale = sorted(p.name for p in out_dir.iterdir())
    if stale:
        raise BuildError(
            f"{out_dir} already holds {', '.join(stale)}: a release uploads every file there, so build into "
            "an empty folder (remove them, or name another --out-dir)"
        )
    uv = find_uv_bin() if builder == "uv" else None  # once: sysconfig's first read is not thread-safe
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(lambda d: _build(d, out_dir, isolation, uv), distributions))
    wanted = {name for d in distributions for name in expected_files(d)}
    made = {p.name for p in out_dir.iterdir() if p.name != ".gitignore"}  # uv build leaves a .gitignore
    if made != wanted:
        raise BuildError(f"the build made {sorted(made - wanted)} and not {sorted(wanted - made)}")
    return sorted(out_dir / name for name in made)


def twine_check(files: list[Path]) -> None:
    """``twine check --strict``: metadata complete and the readme renders on the package index."""
    command = [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)]
    plain = {**os.environ, "NO_COLOR": "1", "COLUMNS": "250"}  # its report unwrapped and uncoloured
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=plain)
    if done.returncode != 0:
        raise BuildError(f"twine check --strict failed:\n{done.stdout[-6000:]}{done.stderr[-2000:]}")
