"""The dashboard's view of the model groups: how the logged calls split over each group's deployments, and
which deployment is cooling down now (the gateway's ``/ui``, whose client knows the groups)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, select

from llmplex.errors import LLMError
from llmplex.store.schema import calls

if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = ["group_view"]


def group_view(client: Client, connection: Connection | None) -> dict[str, Any]:
    """``{"groups": [...]}``: per group its strategy and, per deployment, its weight, the calls the log
    holds that it answered (and their share), and its health now (seconds cooling, calls in flight)."""
    shown = []
    for name in client.config.groups:
        try:
            group = client.router.group(name)
            routed = [group.route(d).spec for d in group.deployments]
        except LLMError:  # a deployment that cannot be routed is reported by its own calls
            continue
        split = _split(connection, name)
        states = group.board.read([d.key for d in group.deployments], 1.0)
        total = sum(split.values())
        rows = [
            {
                "deployment": deployment.spec,
                "weight": deployment.weight,
                "calls": split.get(spec, 0),
                "share": split.get(spec, 0) / total if total else None,
                "cooling_seconds": round(state.cooling, 3),
                "in_flight": state.busy,
            }
            for deployment, spec, state in zip(group.deployments, routed, states, strict=True)
        ]
        shown.append({"group": name, "strategy": group.config.strategy, "calls": total, "deployments": rows})
    return {"groups": shown}


def _split(connection: Connection | None, group: str) -> dict[str, int]:
    """Logged calls asked of ``group``, by the ``prefix:model`` that answered."""
    if connection is None:
        return {}
    statement = (
        select(calls.c.provider, calls.c.model, func.count())
        .where(calls.c.model_asked == group)
        .group_by(calls.c.provider, calls.c.model)
    )
    return {f"{provider}:{model}": int(n) for provider, model, n in connection.execute(statement)}
