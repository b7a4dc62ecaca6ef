"""A local Ray instance for a test module: 2 CPUs, 127.0.0.1 only, no dashboard, no usage reports.

    address = start_ray()      # "127.0.0.1:PORT" of its head (GCS), for --ray ADDRESS in other processes
    ...
    ray.shutdown()

With ``RAY_TESTS_JOIN`` set to such an address, ``start_ray()`` joins that instance instead of starting one (a
benchmark's smoke run inside the suite uses the suite's Ray: tests/conftest.py's ``ray_address``).

The variables of ``RAY_ENVIRONMENT`` are set in this process before Ray is
imported (Ray reads some of them at import) and are inherited by every Ray
process and by drivers started from the tests.
"""

from __future__ import annotations

import os

__all__ = ["JOIN_VARIABLE", "RAY_ENVIRONMENT", "start_ray"]

JOIN_VARIABLE = "RAY_TESTS_JOIN"

RAY_ENVIRONMENT = {
    "RAY_USAGE_STATS_ENABLED": "0",  # no usage report, no prompt
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # every Ray process keeps 127.0.0.1 (not the host's address)
    "RAY_DEDUP_LOGS": "0",
}
_OBJECT_STORE_BYTES = 100 * 1024 * 1024
_STARTS = 3
"""Ray's node gives its raylet a fixed 30 s to register, and the raylet gives the dashboard agent a fixed 15 s to
write its port file (Ray 2.60; neither configurable); a machine loaded past that gets another start."""


def start_ray() -> str:
    """Start Ray in this process (the tests' own driver), or join ``$RAY_TESTS_JOIN``'s; return its head's address."""
    os.environ.update(RAY_ENVIRONMENT)
    import ray

    joined = os.environ.get(JOIN_VARIABLE)
    if joined:
        ray.init(address=joined, configure_logging=False)
        return joined

    for attempt in range(_STARTS):
        try:
            ray.init(
                num_cpus=2,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                object_store_memory=_OBJECT_STORE_BYTES,
                configure_logging=False,
            )
            break
        except Exception as error:  # Ray raises a bare Exception when its node misses its fixed 30 s start window
            ray.shutdown()
            if "timed out during startup" not in str(error) or attempt == _STARTS - 1:
                raise
    address = str(ray.get_runtime_context().gcs_address)
    assert address.startswith("127.0.0.1:"), f"Ray listens on {address}, not on 127.0.0.1 only"
    return address
