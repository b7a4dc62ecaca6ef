"""Issue 21 item 7: the documented ``--ray ray://HOST:10001`` form works with Ray's client extra, or is a typed
error naming the install line (never a bare ImportError or a hang)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.batching import ray_run
from llmplex.errors import LLMConfigurationError
from tests.scaling.conftest import batch, config_file, write_requests
from tests.support.ray_cluster import RAY_ENVIRONMENT

INSTALL = "llmplex[ray-client]"

# Ray reads these when it is first imported, and these tests may import it first in the session (through
# llmplex's own ``import ray``): the session's Ray tests need them set as tests/support/ray_cluster.py sets them.
os.environ.update(RAY_ENVIRONMENT)


@pytest.fixture
def without_ray_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one with ray but without ray[client] (grpc), whatever is installed."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name == "grpc" else real(name, *args, **kwargs)

    monkeypatch.setattr(ray_run.importlib.util, "find_spec", find_spec)


def test_item_7_cli_ray_client_address_without_the_extra_is_a_typed_error(
    tmp_path: Path, without_ray_client: None
) -> None:
    config = config_file(tmp_path)
    write_requests(tmp_path / "in.jsonl", [{"model": "mock:echo", "prompt": "hi"}])
    status, stderr = batch(config, tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--ray", "ray://127.0.0.1:10001")
    assert status == 3, stderr
    assert "error: LLMConfigurationError:" in stderr and INSTALL in stderr and "pip install 'ray[client]" in stderr
    assert "Traceback" not in stderr and not (tmp_path / "out.jsonl").exists()
    assert not list(tmp_path.glob("*.journal*"))  # refused before anything was journaled


def test_item_7_python_api_ray_client_address_without_the_extra_is_a_typed_error(without_ray_client: None) -> None:
    with pytest.raises(LLMConfigurationError, match=r"ray://127\.0\.0\.1:10001.*Ray Client") as caught:
        llmplex.batch([{"model": "mock:echo", "prompt": "hi"}], ray="ray://127.0.0.1:10001")
    assert INSTALL in str(caught.value)


def test_item_7_a_ray_client_address_without_a_host_is_refused() -> None:
    with pytest.raises(LLMConfigurationError, match="names no host"):
        ray_run._check_client_address("ray://")


def test_item_7_with_the_client_extra_the_address_goes_to_ray_init(monkeypatch: pytest.MonkeyPatch) -> None:
    """grpc present: the ray:// address is handed to ray.init as it is (Ray Client connects there)."""
    import ray

    real = importlib.util.find_spec
    monkeypatch.setattr(
        ray_run.importlib.util, "find_spec", lambda name, *a, **k: object() if name == "grpc" else real(name, *a, **k)
    )
    seen: dict[str, Any] = {}

    def init(**options: Any) -> None:
        seen.update(options)

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    connected, started = ray_run._connect("ray://10.1.2.3:10001")
    assert connected is ray and started and seen["address"] == "ray://10.1.2.3:10001"
