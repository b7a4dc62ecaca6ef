"""Which version of each plugin's dependencies is installed, against the range the plugin declares.

``python -m tests.support.sdk_floors llmplex-openai`` prints, for each requirement of the
distribution (other than llmplex's own), its declared range and the installed version.
With ``--lowest`` it exits 1 when an installed version is not the declared floor: tox's
``sdk-lowest-*`` envs resolve with ``lowest-direct``, so a floor that cannot be installed
(another dependency needs more) or that was never tested shows up here.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.version import Version


@dataclass(frozen=True)
class Pin:
    """One requirement of a distribution and the version installed for it."""

    distribution: str
    requirement: Requirement
    installed: Version | None

    @property
    def floor(self) -> Version | None:
        """The lowest version the requirement allows (its ``>=`` or ``==`` bound), if it has one."""
        bounds = [Version(s.version) for s in self.requirement.specifier if s.operator in (">=", "==")]
        return max(bounds) if bounds else None

    @property
    def at_floor(self) -> bool:
        """True when the installed version is exactly the declared floor."""
        return self.floor is None or self.installed == self.floor

    def describe(self) -> str:
        """``llmplex-openai: openai >=2.0,<4 -> 2.0.0 (the floor)``."""
        spec = str(self.requirement.specifier) or "any"
        got = "not installed" if self.installed is None else str(self.installed)
        where = " (the floor)" if self.installed is not None and self.installed == self.floor else ""
        return f"{self.distribution}: {self.requirement.name} {spec} -> {got}{where}"


def pins(distribution: str) -> list[Pin]:
    """The requirements of ``distribution`` (without extras-only and llmplex ones) and their installed versions."""
    found = []
    for line in importlib.metadata.requires(distribution) or []:
        requirement = Requirement(line)
        if requirement.name.startswith("llmplex") or (requirement.marker and "extra" in str(requirement.marker)):
            continue
        try:
            installed: Version | None = Version(importlib.metadata.version(requirement.name))
        except importlib.metadata.PackageNotFoundError:
            installed = None
        found.append(Pin(distribution, requirement, installed))
    return found


def main(argv: list[str] | None = None) -> int:
    """Print every pin; with ``--lowest``, return 1 when one is not at its declared floor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("distributions", nargs="+")
    parser.add_argument("--lowest", action="store_true", help="fail unless every floor is what is installed")
    args = parser.parse_args(argv)
    off = []
    for distribution in args.distributions:
        for pin in pins(distribution):
            if str(pin.requirement.specifier).startswith("=="):
                continue  # pinned: nothing to range over (the local models' part packages)
            print(pin.describe())
            if args.lowest and not pin.at_floor:
                off.append(pin)
    for pin in off:
        print(
            f"error: {pin.distribution} declares {pin.requirement.name}>={pin.floor} but the lowest resolution "
            f"installed {pin.installed}: raise the floor in its pyproject.toml to the lowest version that installs "
            "and passes its tests",
            file=sys.stderr,
        )
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
