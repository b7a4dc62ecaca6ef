"""Issue 30 item 4: one version scheme, a changelog grouped by release, `tools/release` as a dry run, and a
workflow that publishes with trusted publishing (OIDC, no stored token) and attaches a CycloneDX SBOM."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from tests.docs.markdown import quickstart, shell_blocks
from tests.shipping.conftest import ROOT, Release
from tools.releasing.distributions import compatible_range, find, scheme_problems

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
RELEASE = [sys.executable, str(ROOT / "tools" / "release")]


def run_release(*args: str) -> subprocess.CompletedProcess[str]:
    """``tools/release ARGS`` in a child process."""
    return subprocess.run([*RELEASE, *args], capture_output=True, text=True, timeout=300, check=False)


def test_item_4_the_twelve_distributions_share_one_version_and_declare_their_core_range() -> None:
    distributions = find(ROOT)
    assert distributions[0].name == "llmplex" and len(distributions) == 12
    assert len({d.version for d in distributions}) == 1, {d.name: d.version for d in distributions}
    assert scheme_problems(distributions) == []
    wanted = compatible_range(distributions[0].version)
    for plugin in distributions[1:]:
        core = [r for r in map(Requirement, plugin.requires) if r.name == "llmplex"]
        assert [r.specifier for r in core] == [wanted], f"{plugin.name}: {core}"


def test_item_4_a_version_apart_or_a_missing_range_breaks_the_scheme() -> None:
    by_name = {d.name: d for d in find(ROOT)}
    core, openai, azure = by_name.pop("llmplex"), by_name.pop("llmplex-openai"), by_name.pop("llmplex-azure")
    rest = list(by_name.values())
    apart = dataclasses.replace(openai, version="0.2.0")
    assert "different versions" in scheme_problems([core, apart, azure, *rest])[0]
    open_ended = dataclasses.replace(azure, requires=("llmplex>=0.1", "llmplex-openai>=0.1,<0.2"))
    loose = dataclasses.replace(openai, requires=("openai>=2.17",))
    problems = "\n".join(scheme_problems([core, loose, open_ended, *rest]))
    assert "llmplex-openai does not require llmplex" in problems
    assert "llmplex-azure requires `llmplex>=0.1`" in problems


def _copy_tree(target: Path) -> Path:
    for pyproject in [ROOT / "core/pyproject.toml", *ROOT.glob("plugins/*/pyproject.toml")]:
        copy = target / pyproject.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(pyproject, copy)
    echo = target / "docs/examples/llmplex-echo"
    echo.mkdir(parents=True)
    shutil.copy(ROOT / "docs/examples/llmplex-echo/pyproject.toml", echo)
    (target / "docs/changelog.md").write_text((ROOT / "docs/changelog.md").read_text(encoding="utf-8"))
    return target


def test_item_4_set_version_moves_every_distribution_and_range_together(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    done = run_release("--root", str(root), "--set-version", "0.2.0")
    assert done.returncode == 0, done.stderr
    moved = find(root)
    assert {d.version for d in moved} == {"0.2.0"} and scheme_problems(moved) == []
    echo = (root / "docs/examples/llmplex-echo/pyproject.toml").read_text()
    assert '"llmplex>=0.2,<0.3"' in echo and 'version = "0.1.0"' in echo, "the example keeps its own version"


def test_item_4_a_tag_that_is_not_the_version_or_lacks_its_changelog_section_stops_the_release(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    version = find(root)[0].version
    out = tmp_path / "dist"
    wrong = run_release("--root", str(root), "--out-dir", str(out), "--tag", "v9.9.9")
    assert (
        wrong.returncode == 1 and f"the tag v9.9.9 does not name the distributions' version v{version}" in wrong.stderr
    )
    unsectioned = run_release("--root", str(root), "--out-dir", str(out), "--tag", f"v{version}")
    assert unsectioned.returncode == 1 and f"docs/changelog.md has no `## {version}` section" in unsectioned.stderr
    assert not out.exists(), "nothing is built when a check before the build fails"


def test_item_4_an_out_dir_holding_old_files_stops_the_release(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    (out / "llmplex-0.0.9-py3-none-any.whl").write_bytes(b"old")
    done = run_release("--out-dir", str(out))
    assert done.returncode == 1 and "already holds llmplex-0.0.9-py3-none-any.whl" in done.stderr, done.stderr


def test_item_4_the_dry_run_prints_every_file_it_would_upload_and_uploads_nothing(release: Release) -> None:
    assert release.returncode == 0, release.stderr
    assert "Dry run: nothing was uploaded." in release.stdout
    files = sorted(p for p in release.dist.iterdir() if not p.name.startswith("."))
    assert len(files) == 24
    for path in files:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"{path.name}  {path.stat().st_size} bytes  sha256:{digest}" in release.stdout
    assert f"attaches the CycloneDX SBOM {release.sbom}" in release.stdout
    source = (ROOT / "tools/releasing/cli.py").read_text() + (ROOT / "tools/releasing/build.py").read_text()
    assert "upload" not in re.sub(r'"[^"]*"|#.*', "", source).replace("uploads", ""), "the tool itself never uploads"


def _workflow() -> dict[str, object]:
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_item_4_the_workflow_publishes_on_a_version_tag_with_trusted_publishing() -> None:
    workflow = _workflow()
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["push"]["tags"] == ["v*"] and "workflow_dispatch" in triggers
    assert workflow["permissions"] == {"contents": "read"}, "read-only unless a job asks for more"
    jobs = workflow["jobs"]
    publish = jobs["publish"]
    assert publish["needs"] == "build" and "github.ref_type == 'tag'" in publish["if"]
    assert publish["permissions"] == {"id-token": "write"}, "the OIDC token, and nothing else"
    assert publish["environment"]["name"] == "pypi"
    (step,) = [s for s in publish["steps"] if str(s.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")]
    assert set(step.get("with", {})) <= {"packages-dir", "attestations", "verbose"}, "no password, no token"
    for name, job in jobs.items():
        if name != "publish":
            assert "id-token" not in job.get("permissions", {}), f"{name} must not get an OIDC token"


def test_item_4_the_workflow_stores_no_secret_and_builds_checks_and_attaches_the_sbom_with_tools_release() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "secrets." not in text and "PYPI_API_TOKEN" not in text and "TWINE_" not in text
    jobs = _workflow()["jobs"]
    runs = "\n".join(str(s.get("run", "")) for s in jobs["build"]["steps"])
    assert "python tools/release --out-dir dist --sbom sbom/llmplex.cdx.json" in runs and '--tag "$TAG"' in runs
    assert "LLMPLEX_AUDIT" in str(jobs["build"]["steps"]) and "tools/audit requirements/py.lock" in runs
    assert "--no-isolation" not in runs, "the release builds each distribution in a fresh environment"
    attach = jobs["sbom"]
    assert attach["permissions"] == {"contents": "write"} and attach["needs"] == ["build", "publish"]
    assert "sbom/llmplex.cdx.json" in str(attach["steps"])


def test_item_4_the_changelog_is_grouped_by_release_under_an_unreleased_top_section() -> None:
    headings = [
        line[3:]
        for line in (ROOT / "docs/changelog.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("## ")
    ]
    assert headings[0] == "Unreleased", "others append to the top section"
    released = headings[1:]
    for heading in released:
        assert re.fullmatch(r"\d+\.\d+\.\d+ — \d{4}-\d{2}-\d{2}", heading), f"`## {heading}`: `## X.Y.Z — YYYY-MM-DD`"
    versions = [Version(h.split()[0]) for h in released]
    assert versions == sorted(versions, reverse=True), "newest release first"


def test_item_4_the_quickstart_installs_from_a_clone_and_from_the_package_index() -> None:
    blocks = shell_blocks(quickstart())
    clone = blocks[0].splitlines()[0]
    index = next(b for b in blocks if b.startswith("python -m pip install llmplex "))
    folders = clone.split("&&")[0].split()[4:]
    names = index.split("&&")[0].split()[4:]
    assert folders == ["./core", "./plugins/openai", "./plugins/llamacpp"]
    by_folder = {f"./{d.folder.relative_to(ROOT)}": d.name for d in find(ROOT)}
    assert [by_folder[f] for f in folders] == names, "both lines install the same distributions"
    assert clone.split("&&")[1].strip() == index.split("&&")[1].strip(), "and run the same command"


def test_item_4_the_workflow_pins_every_third_party_action_to_a_commit() -> None:
    uses = [str(s["uses"]) for job in _workflow()["jobs"].values() for s in job["steps"] if "uses" in s]
    assert uses, "the workflow uses actions"
    for action in uses:
        name, _, ref = action.partition("@")
        if name == "pypa/gh-action-pypi-publish":
            assert ref == "release/v1", "PyPA's maintained release branch, as PyPA documents it"
        else:
            assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{action}: pin to a commit, the tag in a comment"
