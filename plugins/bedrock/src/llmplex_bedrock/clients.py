"""The boto3 ``bedrock-runtime`` client of one provider instance: retries off (core retries), sent through httpx."""

from __future__ import annotations

import weakref
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError

from llmplex.errors import LLMConfigurationError
from llmplex_bedrock.settings import BedrockSettings
from llmplex_bedrock.transport import HttpxSender

__all__ = ["DEFAULT_READ_TIMEOUT", "close_client", "create_client", "sender_of"]

DEFAULT_READ_TIMEOUT = 60.0
"""Seconds one connect or read may wait when neither the call nor the instance sets a timeout (core's deadline
bounds the whole call anyway)."""

_senders: weakref.WeakKeyDictionary[Any, HttpxSender] = weakref.WeakKeyDictionary()


def _secret(value: Any) -> str | None:
    return None if value is None else str(value.get_secret_value())


def create_client(settings: BedrockSettings) -> Any:
    """A ``bedrock-runtime`` client signed by botocore (SigV4) with the credentials the settings or the chain give.

    botocore's own retries are off (``total_max_attempts=1``): retries happen once, in core. Requests go out
    through ``HttpxSender`` (the call's deadline and timeout hold on every read).
    """
    try:
        return _client(settings)
    except BotoCoreError as error:  # no region, an unknown profile: nothing was sent
        raise LLMConfigurationError(
            f"the Bedrock client could not be built: {error}; set region (or AWS_REGION) and check the profile"
        ) from None


def _client(settings: BedrockSettings) -> Any:
    session = boto3.session.Session(
        aws_access_key_id=_secret(settings.aws_access_key_id),
        aws_secret_access_key=_secret(settings.aws_secret_access_key),
        aws_session_token=_secret(settings.aws_session_token),
        region_name=settings.region,
        profile_name=settings.profile,
    )
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, user_agent_extra="llmplex")
    client = session.client("bedrock-runtime", endpoint_url=settings.endpoint_url, config=config)
    sender = HttpxSender(settings.timeout or DEFAULT_READ_TIMEOUT)
    handler: Any = sender  # botocore takes the answer a before-send handler returns, which its stubs leave out
    client.meta.events.register("before-send.bedrock-runtime", handler)
    _senders[client] = sender
    return client


def sender_of(client: Any) -> HttpxSender | None:
    """The ``HttpxSender`` that ``create_client`` registered on ``client`` (``None``: a client built elsewhere)."""
    try:
        return _senders.get(client)
    except TypeError:  # not weakly referenceable: not a boto3 client
        return None


def close_client(client: Any) -> None:
    """Close the boto3 client and the httpx clients under it, the async ones on their loops
    (``ProviderInfo.close_client``)."""
    sender = _senders.pop(client, None)
    if sender is not None:
        sender.close()
    client.close()
