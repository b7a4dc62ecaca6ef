"""What a wheel and an sdist of the repository must hold, and what they must not.

A wheel holds its package folder whole (Python files, ``py.typed``, the
dashboard's static files, the store's migrations and their template, data
files) and its licence, and nothing of the tests, the build or a working tree.
"""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path, PurePosixPath

__all__ = ["sdist_problems", "source_files", "wheel_problems"]

# never shipped: test code, caches and byte code, a working tree's dot-files, build output
_TEST_PARTS = {"tests", "test", "conftest.py"}
_JUNK_PARTS = {"__pycache__", "build", "dist", ".tox", ".git"}
_JUNK_SUFFIXES = {".pyc", ".pyo", ".orig", ".rej", ".swp", ".tmp"}


def source_files(package: Path, before: float | None = None) -> set[str]:
    """Every file of a package folder a wheel must ship, as ``package/relative/path`` (no caches, no dot-files);
    with ``before``, only the files last changed before that time (the build's start)."""
    found = set()
    for path in package.rglob("*"):
        relative = path.relative_to(package.parent)
        wanted = path.is_file() and not _junk(PurePosixPath(relative.as_posix()))
        if wanted and (before is None or path.stat().st_mtime < before):
            found.add(relative.as_posix())
    return found


def _junk(path: PurePosixPath) -> bool:
    return (
        any(part.startswith(".") or part in _JUNK_PARTS for part in path.parts)
        or path.suffix in _JUNK_SUFFIXES
        or path.name.endswith("~")
    )


def _test_file(path: PurePosixPath) -> bool:
    return any(part in _TEST_PARTS for part in path.parts) or path.name.startswith("test_")


def wheel_problems(wheel: Path, package: Path, built_at: float | None = None) -> list[str]:
    """Why ``wheel`` is not a complete, clean build of the package folder ``package`` (empty when it is);
    ``built_at``: when the build started (files created later are not asked for)."""
    with zipfile.ZipFile(wheel) as archive:
        names = {PurePosixPath(n) for n in archive.namelist() if not n.endswith("/")}
    metadata = {n for n in names if n.parts[0].endswith(".dist-info")}
    shipped = {n.as_posix() for n in names - metadata}
    problems = [
        f"{wheel.name}: ships {n} (a test file)" for n in sorted(map(str, names)) if _test_file(PurePosixPath(n))
    ]
    problems += [
        f"{wheel.name}: ships {n} (not for a wheel)" for n in sorted(map(str, names)) if _junk(PurePosixPath(n))
    ]
    problems += [
        f"{wheel.name}: ships {n}, outside {package.name}/"
        for n in sorted(shipped)
        if not n.startswith(f"{package.name}/")
    ]
    problems += [f"{wheel.name}: lacks {n}" for n in sorted(source_files(package, built_at) - shipped)]
    if f"{package.name}/py.typed" not in shipped:
        problems.append(f"{wheel.name}: lacks {package.name}/py.typed (the package is typed: add the empty file)")
    if not any(n.parts[1:2] == ("licenses",) for n in metadata):
        problems.append(f"{wheel.name}: lacks its licence file (license-files in pyproject.toml)")
    return problems


def sdist_problems(sdist: Path) -> list[str]:
    """Why ``sdist`` is not clean: caches, byte code, build output or a working tree's leftovers in it."""
    with tarfile.open(sdist) as archive:
        names = [PurePosixPath(m.name) for m in archive.getmembers() if m.isfile()]
    # the first part is the sdist's own folder; hatchling keeps the .gitignore it selected files with
    inside = [PurePosixPath(*n.parts[1:]) for n in names if len(n.parts) > 1]
    problems = [
        f"{sdist.name}: ships {n} (not for an sdist)" for n in inside if _junk(n) and n.as_posix() != ".gitignore"
    ]
    for needed in ("PKG-INFO", "pyproject.toml", "README.md", "LICENSE"):
        if PurePosixPath(needed) not in inside:
            problems.append(f"{sdist.name}: lacks {needed}")
    return problems
