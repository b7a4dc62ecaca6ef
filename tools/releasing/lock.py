"""``tools/lock``: write ``requirements/py.lock``, the locked dependency set the py test env runs with.

The py env's requirements are tox.ini's ``[testenv:py] deps`` (the repository's
own distributions, editable, and the test tools); ``uv pip compile`` resolves
them to one exact version of every other distribution, for this interpreter and
platform. tox installs the py env with that file as constraints (``-c``), so the
tests run on the recorded set; pip-audit reads it in the lint env. Versions
already in the lock are kept where they still fit (uv reads the existing file as
its preferences): a new run changes only what the requirements force.
"""

from __future__ import annotations

import argparse
import configparser
import subprocess
import sys
import tempfile
from pathlib import Path

from uv import find_uv_bin

__all__ = ["HEADER", "LOCK", "main", "py_requirements"]

ROOT = Path(__file__).resolve().parents[2]
LOCK = Path("requirements/py.lock")
HEADER = (
    "# The locked dependency set of the py test env: tox.ini [testenv:py] deps resolved by `uv pip compile`\n"
    "# (Python 3.11, Linux x86_64). tox installs the env with this file as constraints; the lint env audits it\n"
    "# (tools/audit). Written by tools/lock: run it after changing those deps or a distribution's requirements.\n"
)


def py_requirements(tox_ini: Path) -> list[str]:
    """The requirement lines of ``[testenv:py] deps``, without comments and without the lock itself."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(tox_ini, encoding="utf-8")
    lines = [line.split(" #")[0].strip() for line in parser["testenv:py"]["deps"].splitlines()]
    return [line for line in lines if line and not line.startswith(("#", "-c"))]


def _local_names(root: Path) -> list[str]:
    import tomllib

    pyprojects = [root / "core/pyproject.toml", *root.glob("plugins/*/pyproject.toml")]
    pyprojects += [*root.glob("docs/examples/*/pyproject.toml"), *root.glob("tests/fixtures/*/pyproject.toml")]
    return [tomllib.loads(p.read_text(encoding="utf-8"))["project"]["name"] for p in pyprojects]


def main(argv: list[str] | None = None) -> int:
    """Write the lock; 0 on success, 1 (with uv's reason on stderr) when the requirements do not resolve."""
    parser = argparse.ArgumentParser(prog="tools/lock", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--python", default=sys.executable, help="the interpreter to resolve for (the py env's)")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root: Path = args.root
    lock = root / LOCK
    lock.parent.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="llmplex-lock-") as folder:
        source = Path(folder) / "py.in"
        source.write_text("\n".join(py_requirements(root / "tox.ini")) + "\n", encoding="utf-8")
        command = [find_uv_bin(), "pip", "compile", "--quiet", "--python", args.python, "--no-header"]
        command += ["--no-annotate", "--output-file", str(lock), str(source)]
        for name in _local_names(root):
            command += ["--no-emit-package", name]
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"tools/lock: uv pip compile failed:\n{done.stderr}", file=sys.stderr)
        return 1
    body = [line for line in lock.read_text(encoding="utf-8").splitlines(keepends=True) if not line.startswith("#")]
    lock.write_text(HEADER + "".join(body), encoding="utf-8")
    print(f"wrote {LOCK}: {sum(1 for line in body if '==' in line)} pinned distributions")
    return 0
