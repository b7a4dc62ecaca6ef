"""The reference plugin is importable and discovered for the tests of this directory only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.reference_plugin.site import source, write_dist_info


@pytest.fixture(scope="session")
def reference_metadata(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the plugin's ``.dist-info``."""
    return write_dist_info(tmp_path_factory.mktemp("reference-site"))


@pytest.fixture(autouse=True)
def reference_plugin(reference_metadata: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``llmplex_reference`` importable and its ``reference`` entry point listed, for one test."""
    monkeypatch.syspath_prepend(str(reference_metadata))
    monkeypatch.syspath_prepend(str(source()))
