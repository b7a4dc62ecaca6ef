"""Issue 30 item 3: every distribution is a wheel and an sdist ready for the package index.

The session's release (conftest.py) builds all twelve into one wheelhouse and runs
``twine check --strict``; these tests read what it built, then install the
quickstart's three distributions from that wheelhouse into a fresh venv (the
other dependencies from uv's cache, pinned to the lock: no network), get an
answer through the openai plugin from a local fake OpenAI server, and install a
third party's plugin (docs/examples/llmplex-echo) next to them the same way.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from uv import find_uv_bin

from tests.docs.markdown import quickstart, shell_blocks
from tests.shipping.conftest import LOCK, ROOT, Release
from tests.support.fault_server import Fault, FaultServer
from tools.releasing.contents import sdist_problems, wheel_problems
from tools.releasing.distributions import Distribution, find

DISTRIBUTIONS = find(ROOT)
QUICKSTART = ["llmplex", "llmplex-openai", "llmplex-llamacpp"]


def wheel_of(release: Release, name: str) -> Path:
    stem = name.replace("-", "_")
    return release.dist / f"{stem}-{DISTRIBUTIONS[0].version}-py3-none-any.whl"


def metadata(wheel: Path) -> tuple[dict[str, list[str]], str]:
    """The wheel's METADATA fields (each a list of values) and its long description."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(archive.read(name).decode())
    fields: dict[str, list[str]] = {}
    for key, value in message.items():
        fields.setdefault(key, []).append(value)
    return fields, str(message.get_payload())


def test_item_3_every_distribution_builds_and_passes_twine_check_strict(release: Release) -> None:
    assert release.returncode == 0, release.stderr
    assert "twine check --strict passed" in release.stdout
    assert len(DISTRIBUTIONS) == 12
    built = sorted(p.name for p in release.dist.iterdir() if not p.name.startswith("."))
    assert len(built) == 24 and {n.split("-")[0] for n in built} == {d.stem for d in DISTRIBUTIONS}, built


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_item_3_each_distribution_carries_complete_metadata(release: Release, dist: Distribution) -> None:
    assert release.returncode == 0, release.stderr
    fields, description = metadata(wheel_of(release, dist.name))
    assert fields["License-Expression"] == ["MIT"] and fields["License-File"] == ["LICENSE"]
    assert fields["Requires-Python"] == [">=3.11"]
    urls = dict(u.split(", ", 1) for u in fields["Project-URL"])
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues", "Changelog"}, urls
    assert all(u.startswith("https://") for u in urls.values())
    classifiers = set(fields["Classifier"])
    assert {
        "Programming Language :: Python :: 3.11",
        "Typing :: Typed",
        "Intended Audience :: Developers",
    } <= classifiers
    assert not any(c.startswith("License ::") for c in classifiers), "the licence is the License-Expression alone"
    assert fields["Description-Content-Type"] == ["text/markdown"]
    assert description.startswith(f"# {dist.name}\n"), "the readme is the distribution's own"
    assert "](../" not in description and "](./" not in description, "relative links break on the package index"


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_item_3_each_wheel_ships_every_file_it_needs_and_no_test_or_build_file(
    release: Release, dist: Distribution
) -> None:
    assert release.returncode == 0, release.stderr
    package = dist.folder / "src" / dist.stem
    built_at = release.sbom.stat().st_mtime - release.seconds  # files created after the build are not asked for
    assert wheel_problems(wheel_of(release, dist.name), package, built_at) == []
    sdist = release.dist / f"{dist.stem}-{dist.version}.tar.gz"
    assert sdist_problems(sdist) == []


def test_item_3_the_core_wheel_holds_its_migrations_templates_and_dashboard(release: Release) -> None:
    assert release.returncode == 0, release.stderr
    with zipfile.ZipFile(wheel_of(release, "llmplex")) as archive:
        names = set(archive.namelist())
    wanted = {
        "llmplex/py.typed",
        "llmplex/store/migrations/env.py",
        "llmplex/store/migrations/script.py.mako",
        "llmplex/store/migrations/versions/r0001_calls_and_virtual_keys.py",
        "llmplex/dashboard/static/index.html",
        "llmplex/dashboard/static/app.js",
        "llmplex/dashboard/static/app.css",
        "llmplex-0.1.0.dist-info/licenses/LICENSE",
    }
    assert wanted <= names, sorted(wanted - names)
    with zipfile.ZipFile(wheel_of(release, "llmplex-llamacpp")) as archive:
        assert "llmplex_llamacpp/data/all-minilm-l6-v2-vocab.txt" in archive.namelist()


def _zip(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_item_3_a_wheel_missing_a_file_or_carrying_tests_and_leftovers_is_refused(tmp_path: Path) -> None:
    package = tmp_path / "src" / "demo"
    (package / "static").mkdir(parents=True)
    for name in ("__init__.py", "py.typed", "static/app.js"):
        (package / name).write_text("x")
    good = {
        "demo/__init__.py": "",
        "demo/py.typed": "",
        "demo/static/app.js": "",
        "demo-1.dist-info/licenses/LICENSE": "",
    }
    assert wheel_problems(_zip(tmp_path / "good.whl", good), package) == []
    bad = {
        "demo/__init__.py": "",
        "demo/tests/test_demo.py": "",
        "demo/__pycache__/x.cpython-311.pyc": "",
        "demo/.owners.py.tmp": "",
        "conftest.py": "",
    }
    problems = "\n".join(wheel_problems(_zip(tmp_path / "bad.whl", bad), package))
    for expected in (
        "demo/tests/test_demo.py (a test file)",
        "x.cpython-311.pyc (not for a wheel)",
        "demo/.owners.py.tmp (not for a wheel)",
        "conftest.py, outside demo/",
        "lacks demo/static/app.js",
        "lacks demo/py.typed",
        "lacks its licence file",
    ):
        assert expected in problems, problems


def test_item_3_an_sdist_with_caches_or_without_its_licence_is_refused(tmp_path: Path) -> None:
    sdist = tmp_path / "demo-1.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for name in (
            "demo-1/PKG-INFO",
            "demo-1/pyproject.toml",
            "demo-1/README.md",
            "demo-1/src/demo/__pycache__/a.pyc",
        ):
            info = tarfile.TarInfo(name)
            archive.addfile(info, io.BytesIO(b""))
    problems = "\n".join(sdist_problems(sdist))
    assert "src/demo/__pycache__/a.pyc (not for an sdist)" in problems and "lacks LICENSE" in problems


def test_item_3_python_m_build_makes_the_same_wheel(release: Release, tmp_path: Path) -> None:
    """The release builds with `python -m build`, the tests' wheelhouse with `uv build`: the same wheel files."""
    folder = ROOT / "plugins" / "claude_code"
    command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), str(folder)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == ["llmplex_claude_code-0.1.0-py3-none-any.whl", "llmplex_claude_code-0.1.0.tar.gz"]
    with (
        zipfile.ZipFile(tmp_path / made[0]) as ours,
        zipfile.ZipFile(wheel_of(release, "llmplex-claude-code")) as theirs,
    ):
        assert sorted(ours.namelist()) == sorted(theirs.namelist())


class EchoAPI(BaseHTTPRequestHandler):
    """The echo plugin's API (its module docstring): POST /v1/echo answers the last message's text."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][-1]["content"]
        text = text if isinstance(text, str) else " ".join(part.get("text", "") for part in text)
        answer = {"id": "e1", "model": body["model"], "text": f"echo: {text}", "finish_reason": "stop"}
        data = json.dumps({**answer, "usage": {"input_tokens": 2, "output_tokens": 3}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def echo_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoAPI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _install(venv: Path, wheelhouses: list[Path], names: list[str]) -> float:
    """``uv pip install --find-links WHEELHOUSE NAMES`` into ``venv``, offline, pinned to the lock; seconds taken."""
    uv = find_uv_bin()
    command = [uv, "pip", "install", "--quiet", "--offline", "--python", str(venv / "bin" / "python")]
    command += [arg for house in wheelhouses for arg in ("--find-links", str(house))]
    started = time.monotonic()
    command += ["--constraint", str(LOCK), *names]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    how = "offline, from uv's cache: `tox -e py` fills it"
    assert done.returncode == 0, f"installing {names} from the wheelhouse failed ({how}):\n{done.stderr}"
    return time.monotonic() - started


def _disk(venv: Path) -> tuple[int, int]:
    """Bytes of the venv's files, and of those not shared (hard-linked) with uv's cache."""
    total = own = 0
    for path in venv.rglob("*"):
        if path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            total += size
            own += size if path.stat().st_nlink == 1 else 0
    return total, own


def _env(work: Path) -> dict[str, str]:
    """A user's environment: no LLMPLEX_* variable, XDG folders of the test's own, byte code written where
    Python writes it by default (once compiled, the venv's modules load fast in the next command)."""
    skipped = ("LLMPLEX_", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[name] = str(work / name.lower())
    env["OPENAI_API_KEY"] = "sk-test-wheelhouse"
    return env


def _llmplex(venv: Path, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(venv / "bin" / "llmplex"), *args]
    return subprocess.run(command, cwd=work, env=_env(work), capture_output=True, text=True, timeout=120, check=False)


def test_item_3_the_quickstart_installs_from_the_wheelhouse_answers_and_takes_a_third_party_plugin(
    release: Release, tmp_path: Path, echo_api: str
) -> None:
    assert release.returncode == 0, release.stderr
    index_line = next(line for line in shell_blocks(quickstart()) if re.search(r"pip install llmplex ", line))
    assert shlex.split(index_line.split("&&")[0])[4:] == QUICKSTART, "the README's index line installs the quickstart"
    venv, work = tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    subprocess.run([find_uv_bin(), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, timeout=120)
    seconds = _install(venv, [release.dist], QUICKSTART)
    total, own = _disk(venv)
    print(
        f"\nwheelhouse install of {' '.join(QUICKSTART)}: {seconds:.1f} s, venv {total / 1e6:.0f} MB "
        f"({own / 1e6:.1f} MB not shared with uv's cache); release build {release.seconds:.1f} s"
    )
    probe = (
        "import importlib.metadata as m, llmplex, llmplex_openai, llmplex_llamacpp; "
        "print(llmplex_llamacpp.__file__); print(sorted(e.name for e in m.entry_points(group='llmplex.providers')))"
    )
    where, prefixes = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe], env=_env(work), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert where.startswith(str(venv)), f"imported from outside the venv: {where}"
    assert prefixes == "['llamacpp', 'mock', 'openai']", prefixes
    with FaultServer(Fault.ok(text="Hello from the wheelhouse")) as server:
        (work / "llmplex.toml").write_text(
            f'[providers.local]\nplugin = "openai"\nbase_url = "{server.url}"\napi = "chat"\n', encoding="utf-8"
        )
        answered = _llmplex(venv, work, "complete", "-m", "local:gpt-test", "Say hello")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.strip() == "Hello from the wheelhouse"
    assert "[answered by local:gpt-test" in answered.stderr, answered.stderr

    _install(venv, [release.third_party, release.dist], ["llmplex-echo"])
    (work / "llmplex.toml").write_text(f'[providers.echo]\nbase_url = "{echo_api}"\n', encoding="utf-8")
    # through the Python API this time (the CLI's start-up costs seconds on a loaded machine)
    ask = "import llmplex; print(llmplex.complete('echo:echo-1', 'ping').text)"
    echoed = subprocess.run(
        [str(venv / "bin" / "python"), "-c", ask], cwd=work, env=_env(work), capture_output=True, text=True, check=False
    )
    assert echoed.returncode == 0, echoed.stderr
    assert echoed.stdout.strip() == "echo: ping"
    check = subprocess.run(
        [find_uv_bin(), "pip", "check", "--python", str(venv / "bin" / "python")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def _tiny_distribution(folder: Path, name: str, requires: list[str], readme: bool) -> None:
    package = folder / "src" / name.replace("-", "_")
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A tiny distribution."""\n')
    (package / "py.typed").write_text("")
    (folder / "LICENSE").write_text("MIT License\n")
    if readme:
        (folder / "README.md").write_text(f"# {name}\n\nA tiny distribution.\n")
    lines = [
        '[build-system]\nrequires = ["hatchling>=1.27"]\nbuild-backend = "hatchling.build"\n',
        f'[project]\nname = "{name}"\nversion = "0.1.0"\ndescription = "A tiny distribution."',
        'requires-python = ">=3.11"\nlicense = "MIT"\nlicense-files = ["LICENSE"]',
        f"dependencies = {json.dumps(requires)}",
        *(['readme = "README.md"'] if readme else []),
        f'\n[tool.hatch.build.targets.wheel]\npackages = ["src/{name.replace("-", "_")}"]\n',
    ]
    (folder / "pyproject.toml").write_text("\n".join(lines))


def test_item_3_a_distribution_without_a_readme_fails_the_release_at_twine_check(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _tiny_distribution(root / "core", "llmplex", [], readme=True)
    _tiny_distribution(root / "plugins" / "bare", "llmplex-bare", ["llmplex>=0.1,<0.2"], readme=False)
    command = [sys.executable, str(ROOT / "tools/release"), "--root", str(root), "--no-isolation", "--builder", "uv"]
    done = subprocess.run([*command, "--out-dir", str(tmp_path / "dist")], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout
    assert "twine check --strict failed" in done.stderr and "llmplex_bare-0.1.0" in done.stderr, done.stderr
    assert "`long_description` missing" in done.stderr, done.stderr
    assert "would upload" not in done.stdout and "uploads these" not in done.stdout
