"""Put the reference plugin (or a mutant of it) on ``sys.path`` with its entry point, as an editable install does.

The plugin is not installed in the test environment: its package directory and a
``.dist-info`` holding the entry points of its ``pyproject.toml`` go on
``sys.path``, so that llmplex discovers ``reference:`` like any installed plugin.
``KIT_REFERENCE_SOURCE`` names another source directory (a mutant's).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

__all__ = ["HERE", "SOURCE_VARIABLE", "source", "write_dist_info"]

HERE = Path(__file__).parent
SOURCE_VARIABLE = "KIT_REFERENCE_SOURCE"


def source() -> Path:
    """The directory holding the ``llmplex_reference`` package to test."""
    return Path(os.environ.get(SOURCE_VARIABLE) or HERE / "src")


def write_dist_info(directory: Path) -> Path:
    """A ``.dist-info`` in ``directory`` naming the distribution and the entry points of ``pyproject.toml``."""
    project = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]
    info = directory / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items()) + "\n"
            for group, entries in groups.items()
        )
    )
    return directory
