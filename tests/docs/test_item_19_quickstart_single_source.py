"""Issue 12 item 19: the install line works from a clone, and README.md and docs/quickstart.md show one quickstart.

The quickstart lives in the README between ``--8<-- [start:quickstart]`` and
``--8<-- [end:quickstart]``; docs/quickstart.md includes it (pymdownx.snippets).
The first command is run as a new user would: its install part into a fresh
venv (uv, offline from uv's cache: no network), its ``llmplex complete`` part
against the embedded local model. Its precondition: uv's cache holds the
packages the quickstart installs (tox's envs fill it); when it does not, the test
fails saying which package is missing and the one command that fills the cache.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from uv import find_uv_bin

from tests.docs.markdown import DOCS, README, ROOT, quickstart, shell_blocks

PAGES = [README, *sorted(p for p in DOCS.rglob("*.md") if "examples" not in p.relative_to(DOCS).parts)]
IN_REPO = {
    tomllib.loads(p.read_text(encoding="utf-8"))["project"]["name"]
    for p in [
        ROOT / "core" / "pyproject.toml",
        *ROOT.glob("plugins/*/pyproject.toml"),
        *ROOT.glob("docs/examples/*/pyproject.toml"),
    ]
}


def test_item_19_docs_quickstart_shows_the_readme_commands() -> None:
    readme_commands = shell_blocks(quickstart())
    assert readme_commands and "pip install ./core" in readme_commands[0]
    raw = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    assert '--8<-- "README.md:quickstart"' in raw, "docs/quickstart.md includes the README's section, not a copy"
    assert shell_blocks(raw)[: len(readme_commands)] == readme_commands


def install_arguments(text: str) -> list[str]:
    """The arguments of every ``pip install`` in ``text`` (code blocks and inline code)."""
    found = []
    for match in re.finditer(r"pip install ([^`\n]*)", text):
        command = re.split(r"&&|;|\s#", match.group(1))[0]
        found += [word for word in shlex.split(command) if not word.startswith("-")]
    return found


def index_install_line() -> str:
    """The quickstart's one install line from the package index (issue 30 item 4): names, not folders."""
    lines = [line for line in shell_blocks(quickstart()) if re.match(r"python -m pip install llmplex ", line)]
    assert len(lines) == 1, "the quickstart gives one install line from the package index"
    return lines[0]


def test_item_19_every_install_line_names_what_a_clone_has() -> None:
    index_line = index_install_line()
    names = shlex.split(index_line.split("&&")[0])[4:]
    assert set(names) <= IN_REPO, f"the index line installs {names}: each a distribution of the repository"
    for page in PAGES:
        # the quickstart's index line names distributions once published; every other line names folders
        text = page.read_text(encoding="utf-8").replace(index_line, "")
        for argument in install_arguments(text):
            name = re.split(r"[\[<>=!~ ]", argument, maxsplit=1)[0]
            where = f"{page.relative_to(ROOT)}: pip install {argument}"
            if "/" in name or name.startswith("."):
                assert (ROOT / name).exists(), f"{where}: {name} is not in the repository"
            else:
                assert name not in IN_REPO, f"{where}: {name} is not on the package index; name its folder in the clone"


def _install_offline(venv: Path, packages: list[str], env: dict[str, str] | None = None) -> None:
    """Install ``packages`` into a fresh venv at ``venv`` from uv's cache alone; fail saying how to fill the cache."""
    uv = find_uv_bin()
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, timeout=120, env=env)
    installed = subprocess.run(
        [uv, "pip", "install", "--offline", "--python", str(venv / "bin" / "python"), *packages],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    if installed.returncode == 0:
        return
    missing = re.search(r"Because (\S+) was not found in the cache", installed.stderr)
    if missing or "network was disabled" in installed.stderr:
        cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, check=False, env=env).stdout
        pytest.fail(
            f"this test installs {' '.join(packages)} offline, from uv's cache (tests never reach the network), "
            f"and uv's cache ({cache.strip()}) lacks {missing.group(1) if missing else 'some of them'}. Fill it once, "
            "with the network, from the repository root, into a throwaway venv: `uv venv /tmp/llmplex-uv-fill && "
            f"uv pip install --python /tmp/llmplex-uv-fill/bin/python {' '.join(packages)}` (tox's envs fill it too: "
            "`tox -e py`), then run the test again",
            pytrace=False,
        )
    pytest.fail(f"installing {packages} from uv's cache failed:\n{installed.stderr}", pytrace=False)


def test_item_19_an_empty_uv_cache_fails_saying_how_to_fill_it(tmp_path: Path) -> None:
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "empty-uv-cache")}
    with pytest.raises(pytest.fail.Exception) as caught:
        _install_offline(tmp_path / "venv", ["./core"], env)
    message = str(caught.value)
    assert "lacks " in message and "was not found" not in message
    assert "empty-uv-cache" in message and "uv pip install --python /tmp/llmplex-uv-fill/bin/python ./core`" in message


def test_item_19_the_quickstart_installs_and_answers_in_a_fresh_venv(tmp_path: Path) -> None:
    first = shell_blocks(quickstart())[0].splitlines()[0]
    install, _, run = first.partition(" && ")
    words = shlex.split(install)
    assert words[:4] == ["python", "-m", "pip", "install"], first
    venv, work = tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    _install_offline(venv, words[4:])
    command = shlex.split(run)
    assert command[0] == "llmplex", first
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPLEX_") and k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env["LLMPLEX_PROVIDERS__LLAMACPP__DEFAULT_MAX_TOKENS"] = "16"  # the answer's length is not the point; CI time is
    if "LLMPLEX_CACHE_DIR" in os.environ:  # the local model, once assembled, is reused from the cache
        env["LLMPLEX_CACHE_DIR"] = os.environ["LLMPLEX_CACHE_DIR"]
    result = subprocess.run(
        [str(venv / "bin" / "llmplex"), *command[1:]],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the local model answered nothing"
    assert "[answered by llamacpp:" in result.stderr, result.stderr
