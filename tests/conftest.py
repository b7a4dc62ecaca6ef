"""Shared test setup: every test runs with an isolated config (no user/project files, no LLMPLEX_* vars)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import llmplex

if importlib.util.find_spec("hypothesis") is not None:
    from hypothesis import settings as hypothesis_settings

    # One answer per run (issue 21 item 8): property tests draw the same examples on every machine and run,
    # and keep no example database between runs. HYPOTHESIS_PROFILE=random explores new examples locally.
    hypothesis_settings.register_profile("derandomized", derandomize=True, database=None, print_blob=True)
    hypothesis_settings.register_profile("random", derandomize=False)
    hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))


RAY_TESTS = (
    "tests/scaling/test_item_3_ray_batch.py::",
    "tests/providers_next/test_item_7_ray_api.py::",
    "tests/shipping/test_item_1_bench_smoke.py::test_item_1_the_ray_batch_benchmark_",
)
"""The tests on the suite's one local Ray (``ray_address``), by node id prefix: pytest-xdist gives them to one worker
together, so Ray starts once a run (each start costs 15-25 s of the 2-core machine, and under load may need a second
try)."""


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent where xdist is not installed
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: a worker per core and one more, unless ``PYTEST_XDIST_AUTO_NUM_WORKERS`` says otherwise.

    The suite's tests wait on sockets, deadlines and child processes: with a worker per core, both cores of the
    2-core machine were busy 84 % of the py env's run; the extra worker runs tests in that idle time."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, with the Ray tests as one scope."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class RayModulesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "ray" if nodeid.startswith(RAY_TESTS) else super()._split_scope(nodeid)

    return RayModulesTogether(config, log)


@pytest.fixture(scope="session")
def ray_address() -> Iterator[str]:
    """The suite's local Ray (``tests/support/ray_cluster.py``), started on first use; its head's address."""
    from tests.support.ray_cluster import start_ray

    address = start_ray()
    yield address
    import ray

    ray.shutdown()


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run in an empty directory with an empty XDG config home and no LLMPLEX_* variables."""
    for name in list(os.environ):
        if name.startswith("LLMPLEX_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))  # the CLI's call log (llmplex.store)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    llmplex.process_client._default = None


@pytest.fixture
def client() -> llmplex.Client:
    """A fresh Client on the isolated config."""
    return llmplex.Client()


@pytest.fixture
def mock_backend(client: llmplex.Client) -> object:
    """The mock provider's backend of ``client``: push answers and errors, read ``calls``."""
    return client.provider_client("mock")
