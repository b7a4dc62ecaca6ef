"""Issue 21 item 7: ``from_path`` and ``-a`` refuse what is not a regular file without opening it, and every
wrong argument to the content-part constructors is a typed error."""

from __future__ import annotations

import os
import socket
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llmplex.errors import LLMConfigurationError
from llmplex.testing import media
from llmplex.types import parts
from llmplex.types.parts import Audio, Document, Image, part_from_path
from tests.support.cli import run_llmplex

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and device files are POSIX")


def _finishes(fn: Callable[[], Any], seconds: float = 10.0) -> BaseException | None:
    """Run ``fn`` on a thread; fail the test if it is still running after ``seconds`` (it blocked)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()
            outcome.append(None)
        except BaseException as exc:  # handed back to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"{fn} blocked for {seconds}s (it opened a FIFO or device it should have refused)"
    return outcome[0]


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path parts.py opens (os.open and Path.open)."""
    seen: list[str] = []
    real_open = os.open

    def spy(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        seen.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(parts.os, "open", spy)
    return seen


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize("constructor", [Image.from_path, Document.from_path, Audio.from_path, part_from_path])
def test_item_7_a_fifo_is_refused_at_once_and_never_opened(
    tmp_path: Path, opened: list[str], constructor: Callable[[Path], Any]
) -> None:
    fifo = _fifo(tmp_path)
    error = _finishes(lambda: constructor(fifo))
    assert isinstance(error, LLMConfigurationError)
    assert "is not a regular file: it is a named pipe (FIFO)" in str(error)
    assert str(fifo) not in opened


@pytest.mark.parametrize(
    ("path", "what"),
    [("/dev/zero", "a character device"), ("/dev/null", "a character device"), ("/dev/urandom", "a character device")],
)
def test_item_7_devices_are_refused_without_reading(path: str, what: str, opened: list[str]) -> None:
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing on this machine; the test needs a POSIX /dev")
    error = _finishes(lambda: Image.from_path(path))
    assert isinstance(error, LLMConfigurationError) and f"is not a regular file: it is {what}" in str(error)
    assert path not in opened


def test_item_7_directories_and_sockets_are_refused_without_opening(tmp_path: Path, opened: list[str]) -> None:
    folder = tmp_path / "folder.png"
    folder.mkdir()
    with pytest.raises(LLMConfigurationError, match="is a directory; give the path of a file"):
        Image.from_path(folder)
    sock_path = tmp_path / "s.png"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(LLMConfigurationError, match="is not a regular file: it is a socket"):
            part_from_path(sock_path)
    assert opened == []


def test_item_7_a_file_swapped_for_a_fifo_after_the_check_is_refused_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: stat saw a regular file, then a FIFO took its place; the non-blocking open and fstat catch it."""
    fifo = _fifo(tmp_path)
    regular = tmp_path / "real.png"
    regular.write_bytes(media.PNG)
    real_stat = os.stat
    monkeypatch.setattr(parts.os, "stat", lambda path, *a, **k: real_stat(regular) if path == fifo else real_stat(path))
    error = _finishes(lambda: Image.from_path(fifo))
    assert isinstance(error, LLMConfigurationError) and "named pipe" in str(error)


def test_item_7_a_regular_file_still_reads(tmp_path: Path) -> None:
    (tmp_path / "cat.png").write_bytes(media.PNG)
    assert Image.from_path(tmp_path / "cat.png").data == media.PNG
    link = tmp_path / "link.png"
    link.symlink_to(tmp_path / "cat.png")
    assert part_from_path(link).data == media.PNG  # a symlink to a regular file is that file


def test_item_7_cli_attach_refuses_a_fifo_and_a_device_in_a_second(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path)
    for target, what in ((str(fifo), "named pipe (FIFO)"), ("/dev/zero", "character device")):
        result = run_llmplex("complete", "-m", "mock:echo", "-a", target, "hi", cwd=tmp_path)
        assert result.returncode == 3, (result.returncode, result.stderr)
        assert result.stderr.startswith("error: LLMConfigurationError: ")
        assert f"is not a regular file: it is a {what}" in result.stderr and "Traceback" not in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


PNG, PDF = media.PNG, media.PDF
WRONG_ARGUMENTS: list[tuple[str, Callable[[], Any], str]] = [
    ("data not bytes", lambda: Image(data=123), "data: Input should be a valid bytes"),
    ("media_type not str", lambda: Image(data=PNG, media_type=5), "media_type: Input should be a valid string"),
    ("url not str", lambda: Image(url=5, media_type="image/png"), "url"),
    ("cache not bool", lambda: Image(data=PNG, cache="sometimes"), "cache"),
    ("unknown field", lambda: Image(data=PNG, colour="red"), "colour: Extra inputs are not permitted"),
    ("positional", lambda: Image(PNG), "keyword arguments only"),
    ("nothing", Image, "needs either data"),
    ("both", lambda: Image(data=PNG, url="https://x.test/a.png"), "not both"),
    ("model_validate non-dict", lambda: Image.model_validate(5), "Input should be a valid dictionary"),
    ("bad base64", lambda: Image.model_validate({"data": "not base64!!"}), "not base64"),
    ("name not str", lambda: Document(data=PDF, name=5), "name: Input should be a valid string"),
    ("from_path int", lambda: Image.from_path(123), "takes a path"),
    ("from_path None", lambda: Document.from_path(None), "takes a path"),
    ("from_path bytes", lambda: Audio.from_path(b"/tmp/x.wav"), "takes a path"),
    ("from_path NUL", lambda: Image.from_path("a\0b.png"), "cannot be read"),
    ("part_from_path int", lambda: part_from_path(7), "takes a path"),
    ("from_bytes str", lambda: Image.from_bytes("png"), "takes bytes"),
    ("from_bytes media_type int", lambda: Image.from_bytes(PNG, media_type=5), "media_type must be"),
    ("from_bytes wrong type", lambda: Image.from_bytes(PNG, media_type="application/pdf"), "not an image"),
    ("from_bytes empty", lambda: Image.from_bytes(b"", media_type="image/png"), "empty"),
    ("Document name int", lambda: Document.from_bytes(PDF, name=5), "name must be a file name"),
    ("from_url int", lambda: Image.from_url(123), "must be a string"),
    ("from_url media_type int", lambda: Image.from_url("https://x.test/a.png", media_type=5), "media_type must"),
    ("from_url ftp", lambda: Document.from_url("ftp://x.test/a.pdf"), "not an http(s) URL"),
    ("from_url surrogate", lambda: Image.from_url("https://x.test/\ud800.png"), "not an http(s) URL"),
    ("from_url no type", lambda: Image.from_url("https://x.test/picture"), "cannot tell the media type"),
]


@pytest.mark.parametrize(("case", "build", "message"), WRONG_ARGUMENTS, ids=[c[0] for c in WRONG_ARGUMENTS])
def test_item_7_every_wrong_constructor_argument_is_a_typed_error(
    case: str, build: Callable[[], Any], message: str
) -> None:
    with pytest.raises(LLMConfigurationError) as info:
        build()
    assert message in str(info.value), str(info.value)
    assert "\x89PNG" not in str(info.value)  # the bytes themselves are never shown


def test_item_7_bytearray_and_memoryview_data_are_bytes() -> None:
    assert Image(data=bytearray(PNG)).media_type == "image/png"
    assert Image(data=memoryview(PNG)).data == PNG
