"""Fixtures of the model-group suite: fault-injecting OpenAI-wire servers and a real redis-server."""

from tests.support.fixtures import fault_server, redis_server, redis_session

__all__ = ["fault_server", "redis_server", "redis_session"]
