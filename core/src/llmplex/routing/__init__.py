"""Where requests go: ``"provider:model"`` to a provider instance, aliases, and model groups.

``Router`` resolves model strings; ``Route`` is the result; ``Group`` spreads
one name over several deployments (``[groups.NAME]``), keeping their health
in the ``[limits]`` storage.
"""

from llmplex.routing.groups import Deployment, Group, Route
from llmplex.routing.instances import KNOWN_DISTRIBUTIONS, ProviderInstance
from llmplex.routing.router import Router

__all__ = ["KNOWN_DISTRIBUTIONS", "Deployment", "Group", "ProviderInstance", "Route", "Router"]
