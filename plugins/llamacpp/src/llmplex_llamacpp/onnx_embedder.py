"""The keyless local embedding model, run in this process on onnxruntime.

`OnnxEmbedder.for_model(model)` loads a model of `embedding_models` once per
process (thread-safe): its ONNX file is found through package metadata (never
imported) and checked against the pinned sha256 and size, and its vocabulary
comes from this package's ``data/``. `embed` tokenizes (lower-cased WordPiece,
cut at the model's ``max_tokens``), runs the model, mean-pools the token
vectors over the attention mask and normalises each to unit length, as
sentence-transformers does for these models.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.resources
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from .embedding_models import EmbeddingModel
from .errors import LocalModelError, LocalModelIntegrityError
from .model_files import install_hint, part_path
from .serve import DEFAULT_THREADS

__all__ = ["OnnxEmbedder", "file_sha256"]

_RUNTIME_HINT = "pip install onnxruntime tokenizers numpy (installing llmplex-llamacpp brings them)"
_EXIT_WAIT = 30.0
"""Seconds the interpreter's exit waits for runs still in native code (one batch takes well under that)."""


class _NativeRuns:
    """Embedding runs in native code (tokenizers, onnxruntime), which the interpreter's exit waits for.

    A run abandoned at a deadline goes on in its worker thread. Torn down
    under it, onnxruntime aborts the process, and a thread coming back from
    the tokenizer after the exit began aborts it too ("exception not
    rethrown"). So a run counts from its tokenizing to its last vector, the
    exit waits for the count to reach 0, and once it waits no new run starts.
    """

    def __init__(self) -> None:
        self._count = 0
        self._exiting = False
        self._idle = threading.Condition()

    @contextmanager
    def run(self) -> Iterator[None]:
        """Count one run; raise `LocalModelError` when the interpreter is already exiting."""
        with self._idle:
            if self._exiting:
                raise LocalModelError("the interpreter is exiting: no new local embedding run starts")
            self._count += 1
        try:
            yield
        finally:
            with self._idle:
                self._count -= 1
                self._idle.notify_all()

    def wait_at_exit(self, timeout: float) -> None:
        """Refuse new runs, then wait up to `timeout` seconds for the running ones to end."""
        with self._idle:
            self._exiting = True
            self._idle.wait_for(lambda: self._count == 0, timeout=timeout)


_runs = _NativeRuns()
atexit.register(lambda: _runs.wait_at_exit(_EXIT_WAIT))


def file_sha256(path: Path) -> str:
    """The sha256 of `path`'s bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class OnnxEmbedder:
    """One loaded embedding model: an onnxruntime session and its tokenizer."""

    _loaded: ClassVar[dict[str, OnnxEmbedder]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, model: EmbeddingModel, session: Any, tokenizer: Any) -> None:
        self.model = model
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = {item.name for item in session.get_inputs()}

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.model.name!r}, dimensions={self.model.dimensions})"

    @classmethod
    def for_model(cls, model: EmbeddingModel, *, threads: int = DEFAULT_THREADS) -> OnnxEmbedder:
        """The loaded `model`, loading and verifying it on first use in this process.

        Raises `LocalModelError` when its package or runtime is missing, and
        `LocalModelIntegrityError` when the file is not the pinned release.
        """
        with cls._lock:
            loaded = cls._loaded.get(model.name)
            if loaded is None:
                path = part_path(model, model.parts[0])
                _verify(model, path)
                loaded = cls._loaded[model.name] = cls.from_file(path, model, threads=threads)
            return loaded

    @classmethod
    def from_file(cls, path: Path, model: EmbeddingModel, *, threads: int = DEFAULT_THREADS) -> OnnxEmbedder:
        """Load the ONNX file `path` as `model` is run (its vocabulary, its token limit), without the hash check.

        For files of your own (``bench/local_embedding_quality.py`` compares
        them); `for_model` is the checked, cached way to the known models.
        """
        return _load(model, path, threads)

    def embed(self, texts: Sequence[str]) -> tuple[list[list[float]], int]:
        """One unit-length vector per text, in order, and the number of tokens read (special tokens included)."""
        with _runs.run():
            return self._embed(list(texts))

    def _embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        outputs = self._session.run(None, feed)
        hidden = next(out for out in outputs if out.ndim == 3)  # token vectors (batch, tokens, dimensions)
        weights = mask[..., None].astype(hidden.dtype)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors = pooled / np.maximum(norms, 1e-12)
        return vectors.astype(float).tolist(), int(mask.sum())


def _load(model: EmbeddingModel, path: Path, threads: int) -> OnnxEmbedder:
    vocabulary = _vocabulary(model)
    try:
        import onnxruntime
        from tokenizers import BertWordPieceTokenizer
    except ImportError as exc:
        raise LocalModelError(
            f"the local embedding model {model.name!r} needs onnxruntime and tokenizers ({exc}): `{_RUNTIME_HINT}`"
        ) from None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no warnings on stderr
    try:
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
        raise LocalModelError(
            f"onnxruntime could not load the local embedding model {model.name!r} from {str(path)!r}: {exc}; "
            f"reinstall it with `{install_hint(model, reinstall=True)}`"
        ) from None
    tokenizer = BertWordPieceTokenizer(str(vocabulary), lowercase=True)
    tokenizer.enable_truncation(model.max_tokens)
    tokenizer.enable_padding()
    return OnnxEmbedder(model, session, tokenizer)


def _verify(model: EmbeddingModel, path: Path) -> None:
    """Raise `LocalModelIntegrityError` unless `path` is the pinned file (size first: it is free)."""
    size = path.stat().st_size
    digest = file_sha256(path) if size == model.size else None
    if digest != model.sha256:
        found = f"sha256 {digest}" if digest else f"{size} bytes, not {model.size}"
        raise LocalModelIntegrityError(
            f"the local embedding model {model.name!r} at {str(path)!r} is not the pinned release "
            f"(sha256 {model.sha256}): it has {found}. The package is damaged or was replaced; reinstall it with "
            f"`{install_hint(model, reinstall=True)}`; if the hash still differs, do not use this model"
        )


def _vocabulary(model: EmbeddingModel) -> Path:
    resource = importlib.resources.files("llmplex_llamacpp") / "data" / model.vocabulary
    path = Path(str(resource))
    if not path.is_file() or file_sha256(path) != model.vocabulary_sha256:
        raise LocalModelIntegrityError(
            f"the vocabulary {str(path)!r} of the local embedding model {model.name!r} is missing or changed; "
            "reinstall llmplex-llamacpp (`pip install --force-reinstall llmplex-llamacpp`)"
        )
    return path
