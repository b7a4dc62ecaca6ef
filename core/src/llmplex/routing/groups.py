"""A model group: one name over several deployments, and the choice of the next one a call tries.

The engine asks ``Group.pick`` for a deployment before each attempt (and each
hedge), tells ``started`` and ``ended`` how it went, and runs the attempt
itself: retries, deadlines and budgets stay in the engine. ``pick`` skips a
deployment that is cooling down, and one whose rpm or tpm window has no room,
and prefers those this call has not tried yet (a call's first attempt also
skips one whose window is down to the group's ``hedge_reserve``, kept for
hedges and retries, while another has room); when none is left it raises
``LLMGroupUnavailableError`` at once, saying when the first comes back.

A deployment naming another group stands for that group's deployments, its
weight shared among them by theirs (each keeps its own limits and health).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from llmplex.config.groups import GroupConfig
from llmplex.errors import LLMGroupUnavailableError
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.estimate import estimate_request
from llmplex.routing.health import Board, CoolRule, Outcome
from llmplex.routing.instances import ProviderInstance
from llmplex.routing.strategies import ordered
from llmplex.routing.windows import Windows
from llmplex.types import Request

__all__ = ["Deployment", "Group", "Route"]


@dataclass(frozen=True)
class Route:
    """Where one request goes: a provider instance and its model name, or a model group.

    A group's route names the group (``spec`` is its name) and carries its first deployment's provider and
    model, which stand for the group where one instance must answer for all (capabilities, a tool loop's
    first round); each attempt goes to the deployment the group picks.
    """

    provider: ProviderInstance
    model: str
    group: Group | None = field(default=None, compare=False)

    @property
    def spec(self) -> str:
        """``prefix:model`` as routed, or the group's name."""
        return self.group.name if self.group is not None else f"{self.provider.name}:{self.model}"


@dataclass(eq=False)
class Deployment:
    """One deployment of a group: its model string (``spec``), weight, rpm/tpm windows and health key."""

    spec: str
    weight: float
    windows: Windows
    key: str
    rule: CoolRule
    _route: Route | None = field(default=None, repr=False)

    def headroom(self) -> float:
        """The share of its rpm/tpm windows left (1.0 without limits)."""
        return self.windows.headroom()


class Group:
    """A ``[groups.NAME]`` table, live: its deployments, their health, and the pick of the next one."""

    def __init__(
        self,
        name: str,
        config: GroupConfig,
        deployments: list[Deployment],
        board: Board,
        resolve: Callable[[str], Route],
    ) -> None:
        self.name = name
        self.config = config
        self.deployments = deployments
        self.board = board
        self._resolve = resolve
        self.does_io = getattr(board, "does_io", False)

    def __repr__(self) -> str:
        return f"Group({self.name!r}, {[d.spec for d in self.deployments]}, strategy={self.config.strategy!r})"

    def route(self, deployment: Deployment) -> Route:
        """Where ``deployment``'s requests go (resolved on first use)."""
        if deployment._route is None:
            deployment._route = self._resolve(deployment.spec)
        return deployment._route

    def pick(
        self,
        request: Request,
        tried: Collection[Deployment],
        deadline: Deadline | None,
        draw: Callable[[], float],
        fresh_only: bool = False,
        first: bool = False,
    ) -> Deployment:
        """The deployment the next attempt goes to, its rpm/tpm counted; ``tried`` are this call's earlier ones,
        tried again only when no other is usable (never with ``fresh_only``, as for a hedge). A ``first``
        attempt leaves each window's ``hedge_reserve`` for hedges and retries, unless no deployment has room
        outside its reserve.

        Raises ``LLMGroupUnavailableError`` when each one is cooling down or at its limit (with ``fresh_only``,
        each one not tried; its ``retry_after`` is then 0 when none is left to come back)."""
        wait = None if deadline is None else deadline.remaining()
        states = self.board.read([d.key for d in self.deployments], wait)
        usable = [(d, s) for d, s in zip(self.deployments, states, strict=True) if s.cooling <= 0]
        fresh = [(d, s) for d, s in usable if d not in tried]
        candidates = ordered(self.config.strategy, fresh if fresh or fresh_only else usable, draw)
        back: list[tuple[float, Deployment]] = [
            (s.cooling, d) for d, s in zip(self.deployments, states, strict=True) if not fresh_only or d not in tried
        ]
        tokens = 0
        reserve = self.config.reserve if first else 0.0
        for keep in (reserve, 0.0) if reserve > 0 else (0.0,):
            for deployment in candidates:
                if deployment.windows.limited and not tokens:
                    estimate = estimate_request(request)
                    tokens = estimate.input_tokens + (estimate.output_tokens or 0)
                wait_for = deployment.windows.take(tokens, keep)
                if wait_for is None:
                    return deployment
                if not keep:
                    back.append((wait_for, deployment))
        raise self._unavailable(back)

    def _unavailable(self, back: list[tuple[float, Deployment]]) -> LLMGroupUnavailableError:
        soonest = min((seconds for seconds, _ in back if seconds > 0), default=0.0)
        first = next((d.spec for seconds, d in back if seconds == soonest), "")
        return LLMGroupUnavailableError(
            f"model group {self.name!r}: every deployment is cooling down or at its rpm/tpm limit; the first "
            f"({first}) comes back in {soonest:.3g}s",
            group=self.name,
            retry_after=soonest,
            provider=None,
            model=self.name,
            attempts=0,
            context={"group": self.name, "deployment": first},
        )

    def started(self, deployment: Deployment) -> None:
        """An attempt to ``deployment`` is in flight."""
        self.board.started(deployment.key)

    def ended(self, deployment: Deployment, outcome: Outcome, latency: float | None, asked: float | None) -> float:
        """An attempt to ``deployment`` ended; returns how long it now cools down (0: it does not)."""
        return self.board.ended(deployment.key, outcome, latency, deployment.rule, asked)


def flattened(
    name: str, groups: Mapping[str, GroupConfig], unalias: Callable[[str], str], weight: float = 1.0
) -> list[tuple[str, str, float, GroupConfig, int | None, int | None]]:
    """Group ``name``'s deployments as ``(owning group, spec, weight, owner's config, rpm, tpm)``, nested groups
    expanded into theirs (``weight`` shared by their own weights)."""
    config = groups[name]
    total = sum(d.weight for d in config.deployments) or 1.0
    found: list[tuple[str, str, float, GroupConfig, int | None, int | None]] = []
    for deployment in config.deployments:
        spec = unalias(deployment.model.strip())
        share = weight * deployment.weight / total
        if spec in groups:
            found.extend(flattened(spec, groups, unalias, share))
        else:
            found.append((name, spec, share, config, deployment.rpm, deployment.tpm))
    return found
