"""Issue 16 item 1: ``llmplex complete -a FILE`` attaches images, PDFs and audio (run as a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from llmplex.testing import media


def llmplex_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmplex", *args], capture_output=True, text=True, timeout=60, cwd=cwd, check=False
    )


def test_item_1_attach_sends_each_file_after_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "cat.png").write_bytes(media.PNG)
    (tmp_path / "memo.pdf").write_bytes(media.PDF)
    (tmp_path / "note.wav").write_bytes(media.WAV)
    result = llmplex_cli(
        "complete", "-m", "mock:echo", "-a", "cat.png", "--attach", "memo.pdf", "-a", "note.wav", "what is this?",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"what is this? [image: image/png, {len(media.PNG)} bytes] [document: application/pdf, {len(media.PDF)} bytes] "
        f"[audio: audio/wav, {len(media.WAV)} bytes]\n"
    )
    assert result.stderr == "[answered by mock:echo]\n"


def test_item_1_attach_with_json_output(tmp_path: Path) -> None:
    (tmp_path / "cat.gif").write_bytes(media.GIF)
    result = llmplex_cli("complete", "-m", "mock:echo", "--json", "-a", "cat.gif", "describe", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["text"] == f"describe [image: image/gif, {len(media.GIF)} bytes]"


def test_item_1_attach_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_bytes(b"GIF89a but named png")
    (tmp_path / "cat.png").write_bytes(media.PNG)
    cases = [
        (("-m", "mock:echo", "-a", "missing.png", "hi"), "'missing.png' does not exist; check the path"),
        (("-m", "mock:echo", "-a", "fake.png", "hi"), "holds image/gif data but its name says image/png"),
        (("-m", "mock:echo", "-a", ".", "hi"), "'.' is a directory"),
        (("-m", "claude-code:sonnet", "-a", "cat.png", "hi"), "provider 'claude-code' cannot take image parts"),
    ]
    for args, message in cases:
        result = llmplex_cli("complete", *args, cwd=tmp_path)
        assert result.returncode != 0
        assert result.stdout == ""
        assert result.stderr.startswith("error: LLMConfigurationError: ")
        assert message in result.stderr
        assert "Traceback" not in result.stderr
