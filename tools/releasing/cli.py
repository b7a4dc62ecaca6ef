"""``tools/release``: build the twelve distributions, check them, write the SBOM, and print what would be uploaded.

It uploads nothing and signs nothing: publishing is .github/workflows/release.yml's
job, with PyPI's trusted publishing (a short-lived OIDC token, no stored secret).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

from tools.releasing.build import BuildError, build_all, twine_check
from tools.releasing.contents import sdist_problems, wheel_problems
from tools.releasing.distributions import find, scheme_problems, set_version
from tools.releasing.sbom import SBOMError, make_sbom

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ".github/workflows/release.yml"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tools/release",
        description="Build every distribution (python -m build), check it (twine check --strict, its files, the "
        "version scheme), write the SBOM, and print what would be uploaded. Nothing is uploaded.",
    )
    parser.add_argument("--out-dir", type=Path, default=ROOT / "dist", help="an empty folder for the files (dist/)")
    parser.add_argument("--sbom", type=Path, help="write the CycloneDX SBOM (JSON) of the installed release here")
    parser.add_argument("--tag", help="the git tag being released (vX.Y.Z): it must name the distributions' version")
    parser.add_argument("--no-isolation", action="store_true", help="build in this environment (needs hatchling)")
    parser.add_argument(
        "--builder", choices=("build", "uv"), default="build", help="python -m build (default) or uv build"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="builds at once")
    parser.add_argument("--offline", action="store_true", help="install the SBOM's venv from uv's cache alone")
    parser.add_argument("--constraint", type=Path, help="pin the SBOM's venv to this lock (requirements/py.lock)")
    parser.add_argument("--no-validate", action="store_true", help="skip the SBOM's schema validation (slow)")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument(
        "--set-version", metavar="X.Y.Z", help="only write X.Y.Z into every distribution and its ranges, then stop"
    )
    return parser


def _changelog_problems(root: Path, version: str, tag: str | None) -> list[str]:
    if tag is None:
        return []
    problems = [] if tag == f"v{version}" else [f"the tag {tag} does not name the distributions' version v{version}"]
    headings = [
        line[3:].split(" ")[0]
        for line in (root / "docs/changelog.md").read_text("utf-8").splitlines()
        if line.startswith("## ")
    ]
    if version not in headings:
        problems.append(f"docs/changelog.md has no `## {version}` section: move the Unreleased entries under it")
    return problems


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    """Run the release steps; 0 when every check passed, 1 (with the reason on stderr) otherwise."""
    args = _parser().parse_args(argv)
    root: Path = args.root
    distributions = find(root)
    if args.set_version:
        set_version(
            [d.folder for d in distributions] + sorted(p.parent for p in root.glob("docs/examples/*/pyproject.toml")),
            args.set_version,
        )
        print(f"set {args.set_version} in {len(distributions)} distributions and their llmplex ranges")
        return 0
    version = distributions[0].version
    problems = scheme_problems(distributions) + _changelog_problems(root, version, args.tag)
    try:
        if not problems:
            started = time.time()
            files = build_all(
                distributions, args.out_dir, isolation=not args.no_isolation, jobs=args.jobs, builder=args.builder
            )
            twine_check(files)
            for dist in distributions:
                wheel = args.out_dir / f"{dist.stem}-{dist.version}-py3-none-any.whl"
                problems += wheel_problems(wheel, dist.folder / "src" / dist.stem, started)
                problems += sdist_problems(args.out_dir / f"{dist.stem}-{dist.version}.tar.gz")
        if not problems and args.sbom:
            make_sbom(
                args.out_dir,
                [d.name for d in distributions],
                args.sbom,
                root_pyproject=root / "core/pyproject.toml",
                offline=args.offline,
                constraints=args.constraint,
                validate=not args.no_validate,
            )
    except (BuildError, SBOMError) as exc:
        problems.append(str(exc))
    if problems:
        print("tools/release: the release is not ready:", *(f"- {p}" for p in problems), sep="\n", file=sys.stderr)
        return 1
    print(f"llmplex {version}: {len(distributions)} distributions built and checked (twine check --strict passed).")
    print(f"Dry run: nothing was uploaded. On the tag v{version}, {WORKFLOW} uploads these {len(files)} files to PyPI")
    print("with trusted publishing (OIDC, no stored token):")
    for path in files:
        print(f"  {path.name}  {path.stat().st_size} bytes  sha256:{_digest(path)}")
    if args.sbom:
        print(f"and attaches the CycloneDX SBOM {args.sbom} to the GitHub release.")
    return 0
