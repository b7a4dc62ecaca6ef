"""Load a large YAML spec fast: YAML C parser once, then a sha256-keyed JSON copy."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import yaml

CACHE_DIR = Path(__file__).parent / ".cache"


class _JsonCompatibleLoader(yaml.CSafeLoader):
    """C-accelerated safe loader that keeps timestamps as strings, as JSON would."""


_JsonCompatibleLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml_cached(path: Path, cache_dir: Path = CACHE_DIR) -> object:
    """Parse ``path``, reusing ``cache_dir/<stem>.<sha256>.json`` when present."""
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    cached = cache_dir / f"{path.stem}.{digest}.json"
    try:
        data: object = json.loads(cached.read_bytes())
        return data
    except (FileNotFoundError, ValueError):
        pass
    data = yaml.load(raw, Loader=_JsonCompatibleLoader)
    for stale in cache_dir.glob(f"{path.stem}.*.json"):
        stale.unlink(missing_ok=True)
    _write_atomically(cached, json.dumps(data, separators=(",", ":")).encode())
    return data


def _write_atomically(target: Path, content: bytes) -> None:
    """Write via a temporary file and rename, so concurrent workers never see half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
