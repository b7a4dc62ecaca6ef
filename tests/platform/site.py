"""Test plugins of this directory discovered as installed ones: a ``.dist-info`` naming their entry points."""

from __future__ import annotations

from pathlib import Path

import pytest


def install_providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, providers: dict[str, str]) -> None:
    """Make each ``prefix: module`` of ``providers`` an entry point of group ``llmplex.providers``, for one test."""
    info = tmp_path / "llmplex_platform_tests-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llmplex-platform-tests\nVersion: 0\n")
    lines = "".join(f"{prefix} = {module}\n" for prefix, module in providers.items())
    (info / "entry_points.txt").write_text(f"[llmplex.providers]\n{lines}")
    monkeypatch.syspath_prepend(str(tmp_path))
