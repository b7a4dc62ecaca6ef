"""The twelve distributions of a release and their one version scheme.

Every distribution (``core/`` and each ``plugins/*/``) carries the same version
``X.Y.Z``. Each plugin declares the core versions it works with, and every
sibling it builds on, as ``>=X.Y,<X.(Y+1)``: a release line ``X.Y`` is one set
that works together, and a new ``Y`` may break plugins (0.x versions).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

__all__ = ["Distribution", "compatible_range", "find", "scheme_problems", "set_version"]

CORE = "llmplex"


@dataclass(frozen=True)
class Distribution:
    """One distribution of the repository: its folder and what its pyproject.toml declares."""

    name: str
    version: str
    folder: Path
    requires: tuple[str, ...]

    @property
    def stem(self) -> str:
        """The name as it starts a wheel's or an sdist's file name (``llmplex_openai``)."""
        return canonicalize_name(self.name).replace("-", "_")


def _read(folder: Path) -> Distribution:
    project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return Distribution(project["name"], project["version"], folder, tuple(project.get("dependencies", ())))


def find(root: Path) -> list[Distribution]:
    """The core, then every plugin in ``plugins/`` sorted by folder: the distributions a release ships."""
    return [_read(root / "core"), *(_read(p.parent) for p in sorted(root.glob("plugins/*/pyproject.toml")))]


def compatible_range(version: str) -> SpecifierSet:
    """``>=X.Y,<X.(Y+1)``: the core (and sibling) versions a plugin of ``version`` declares."""
    release = Version(version).release
    major, minor = release[0], release[1] if len(release) > 1 else 0
    return SpecifierSet(f">={major}.{minor},<{major}.{minor + 1}")


def scheme_problems(distributions: list[Distribution]) -> list[str]:
    """What breaks the version scheme: versions that differ, or a plugin without its range on a sibling."""
    versions = {d.version for d in distributions}
    if len(versions) != 1:
        listed = ", ".join(f"{d.name} {d.version}" for d in distributions)
        return [
            f"the distributions carry different versions ({listed}): give all one version (tools/release --set-version)"
        ]
    (version,) = versions
    expected = compatible_range(version)
    ours = {canonicalize_name(d.name) for d in distributions}
    problems = []
    for dist in distributions[1:]:
        declared = {canonicalize_name(r.name): r for r in map(Requirement, dist.requires)}
        if CORE not in declared:
            problems.append(f"{dist.name} does not require {CORE}: declare `{CORE}{expected}` in its dependencies")
        for name, requirement in sorted(declared.items()):
            if name in ours and requirement.specifier != expected:
                problems.append(
                    f"{dist.name} requires `{requirement}`: a plugin of {version} declares `{name}{expected}`"
                )
    return problems


_VERSION_LINE = re.compile(r'^version = "[^"]*"$', re.M)
_SIBLING = re.compile(r'"(llmplex(?:-[a-z0-9-]+)?(?:\[[^\]]*\])?)>=[0-9.]+,<[0-9.]+"')


def set_version(folders: list[Path], version: str) -> None:
    """Write ``version`` into each folder's pyproject.toml and the matching range into its llmplex requirements.

    The example plugins of ``docs/examples`` may be passed too: their ranges follow, their own version stays.
    """
    Version(version)  # refuses what is not a version
    wanted = compatible_range(version)
    low = next(s.version for s in wanted if s.operator == ">=")
    high = next(s.version for s in wanted if s.operator == "<")
    for folder in folders:
        path = folder / "pyproject.toml"
        text = path.read_text(encoding="utf-8")
        if folder.parent.name != "examples":
            text = _VERSION_LINE.sub(f'version = "{version}"', text, count=1)
        text = _SIBLING.sub(lambda m: f'"{m.group(1)}>={low},<{high}"', text)
        path.write_text(text, encoding="utf-8")
