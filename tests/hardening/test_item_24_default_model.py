"""Issue 12 item 24: the default local model is an instruction-tuned model from PyPI, checked against a pinned sha256.

These tests need no server: the default's identity, the pins, and the joining of a model's part packages
(fake distributions built here, found through package metadata like the real ones) with its progress
report and its sha256 check. tests/live/test_item_24_default_model_live.py asks the real model questions.
"""

from __future__ import annotations

import hashlib
import io
import tomllib
from pathlib import Path

import pytest
from llmplex_llamacpp import catalogue, embedding_models
from llmplex_llamacpp.assembly import Progress
from llmplex_llamacpp.catalogue import LocalModel, Part
from llmplex_llamacpp.errors import LocalModelError, LocalModelIntegrityError
from llmplex_llamacpp.model_files import CACHE_DIR_ENV, prepared, resolve_model

import llmplex
from llmplex.config.schema import DEFAULT_MODEL as CORE_DEFAULT

ROOT = Path(__file__).resolve().parents[2]
QWEN_OFFICIAL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
"""sha256 of qwen2.5-coder-1.5b-instruct-q4_k_m.gguf as Qwen publishes it (1,117,320,768 bytes)."""
PIECES = (b"GGUF" + b"a" * 70_000, b"b" * 70_000, b"c" * 50_000)


def test_item_24_default_model_is_the_instruction_tuned_qwen(client: llmplex.Client) -> None:
    assert CORE_DEFAULT == "llamacpp:qwen2.5-coder-1.5b"
    assert client.config.default_model == CORE_DEFAULT
    assert client.router.resolve(client.config.default_model).model == "qwen2.5-coder-1.5b"
    assert client.router.resolve("llamacpp:qwen2.5-coder").model == "qwen2.5-coder-1.5b"  # the alias
    default = catalogue.find(catalogue.DEFAULT_MODEL)
    assert default is not None
    assert default.instruct
    assert (default.sha256, default.size, default.licence) == (QWEN_OFFICIAL_SHA256, 1_117_320_768, "Apache-2.0")
    small = catalogue.find("gemma3")  # the small model stays selectable by name for quick tests
    assert small is not None and small.name == catalogue.SMALL_MODEL == "gemma3-270m"


def test_item_24_the_plugin_depends_on_exactly_the_pinned_parts() -> None:
    project = tomllib.loads((ROOT / "plugins/llamacpp/pyproject.toml").read_text(encoding="utf-8"))["project"]
    pinned = {dep for dep in project["dependencies"] if "==" in dep}
    models = (*catalogue.MODELS, *embedding_models.EMBEDDING_MODELS)
    assert pinned == {req for model in models for req in model.requirements}


@pytest.fixture
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalModel:
    """A three-part model whose parts are installed distributions on sys.path, served as ``llamacpp:fake-model``."""
    site = tmp_path / "site"
    parts = []
    for index, piece in enumerate(PIECES, start=1):
        info = site / f"fake_model_part{index}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fake-model-part{index}\nVersion: 1.0\n")
        data = site / f"fake_model_part{index}" / "data" / f"part{index:02d}.bin"
        data.parent.mkdir(parents=True)
        data.write_bytes(piece)
        parts.append(Part(f"fake-model-part{index}", "1.0", f"fake_model_part{index}/data/part{index:02d}.bin"))
    monkeypatch.syspath_prepend(str(site))
    model = LocalModel(
        name="fake-model",
        aliases=(),
        file_stem="fake-model",
        sha256=hashlib.sha256(b"".join(PIECES)).hexdigest(),
        size=sum(map(len, PIECES)),
        parts=tuple(parts),
        template="qwen",
        instruct=True,
        licence="MIT",
        publisher="these tests",
    )
    monkeypatch.setattr(catalogue, "MODELS", (model,))
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return model


def part_file(tmp_path: Path, index: int) -> Path:
    return tmp_path / "site" / f"fake_model_part{index}" / "data" / f"part{index:02d}.bin"


def test_item_24_a_corrupted_part_is_rejected_with_a_typed_error_and_nothing_cached(
    fake_model: LocalModel, tmp_path: Path
) -> None:
    corrupted = part_file(tmp_path, 2)
    corrupted.write_bytes(b"B" + PIECES[1][1:])  # same size, one byte changed
    with pytest.raises(LocalModelIntegrityError) as info:
        resolve_model("fake-model")
    message = str(info.value)
    assert fake_model.sha256 in message and "not the pinned release" in message
    assert "pip install --force-reinstall fake-model-part{1..3}==1.0" in message
    assert not list((tmp_path / "cache" / "models").glob("fake-model*"))  # neither the file nor a partial

    with pytest.raises(llmplex.LLMConfigurationError) as public:  # through the public API: typed, with the cause
        llmplex.Client().complete("llamacpp:fake-model", "Hi")
    assert isinstance(public.value.cause, LocalModelIntegrityError)
    assert fake_model.sha256 in str(public.value)


def test_item_24_joining_shows_progress_on_stderr_once(
    fake_model: LocalModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = resolve_model("fake-model")
    assert path.read_bytes() == b"".join(PIECES)
    err = capsys.readouterr().err
    assert "preparing the local model fake-model" in err
    assert "36%" in err and "100%" in err  # a line per step the copy passes (here: one per part)
    assert "ready, sha256 verified" in err
    assert resolve_model("fake-model") == path
    assert capsys.readouterr().err == ""  # verified once; later uses are silent


def test_item_24_a_cached_file_changed_after_verification_is_joined_again(fake_model: LocalModel) -> None:
    path = prepared(fake_model)
    path.write_bytes(b"X" * fake_model.size)  # same size, other bytes (and a new mtime)
    assert prepared(fake_model).read_bytes() == b"".join(PIECES)


def test_item_24_a_partial_file_left_by_a_killed_process_is_removed(fake_model: LocalModel, tmp_path: Path) -> None:
    models = tmp_path / "cache" / "models"
    models.mkdir(parents=True)
    leftover = models / f"{fake_model.cache_file_name}.4242.partial"
    leftover.write_bytes(b"half a model")
    prepared(fake_model)
    assert not leftover.exists()
    assert sorted(p.name for p in models.iterdir() if not p.name.startswith(".")) == [
        fake_model.cache_file_name,
        fake_model.cache_file_name + ".verified",
    ]


def test_item_24_a_missing_part_package_says_what_to_install(fake_model: LocalModel, tmp_path: Path) -> None:
    (tmp_path / "site" / "fake_model_part3-1.0.dist-info" / "METADATA").unlink()  # uninstalled
    (tmp_path / "site" / "fake_model_part3-1.0.dist-info").rmdir()
    missing = r"'fake-model-part3' is not installed.*pip install fake-model-part\{1\.\.3\}==1\.0"
    with pytest.raises(LocalModelError, match=missing):
        resolve_model("fake-model")


def test_item_24_progress_updates_one_line_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress("m", 10_000_000, stream)
    progress.start(Path("/cache/models"))
    for _ in range(10):
        progress.advance(1_000_000)
    progress.finish("ready")
    text = stream.getvalue()
    assert text.count("\rllmplex: m ") == 10
    assert "100% (10/10 MB)" in text
    assert text.endswith("s)\n")
