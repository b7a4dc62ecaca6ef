"""Whether an installed plugin says it works with the installed core: its ``llmplex`` requirement.

Each plugin distribution declares the core versions it works with (``llmplex>=0.1,<0.2``
in its metadata). ``llmplex providers --check`` reports a plugin whose declared
range leaves out the core that is installed, instead of importing it: pip warns
of such a conflict once, at install time, and a later ``pip install -U llmplex``
can leave an old plugin behind.
"""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, distribution, version

__all__ = ["core_range_problem"]

CORE = "llmplex"


@functools.cache
def core_range_problem(dist_name: str) -> str | None:
    """Why ``dist_name``'s declared ``llmplex`` range excludes the installed core, or None when it includes it.

    A requirement that only an extra brings does not count; a distribution that is not installed, or
    that declares no ``llmplex`` requirement, has no range to break.
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        requires = distribution(dist_name).requires or []
        core = version(CORE)
    except PackageNotFoundError:
        return None
    for line in requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) != CORE:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        if not requirement.specifier.contains(core, prereleases=True):
            return (
                f"{dist_name} declares {CORE}{requirement.specifier}, but {CORE} {core} is installed: install the "
                f"release of {dist_name} made for {CORE} {core} (pip install --upgrade {dist_name}), or a {CORE} "
                "in its range"
            )
    return None
