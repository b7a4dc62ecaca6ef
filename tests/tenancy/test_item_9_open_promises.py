"""Issue 31 item 9, bullets 1 and 2: a storage URL's password is masked in every dump, repr, JSON and log; every
wrong argument to a message or content-part constructor is an ``LLMConfigurationError`` naming the argument."""

from __future__ import annotations

import json
import logging
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

import llmplex
from llmplex import Message
from llmplex.errors import LLMConfigurationError
from llmplex.masking.secret_url import SecretURL
from llmplex.reliability.storage import store_for
from llmplex.types import Audio, Document, Image, ReasoningPart, ToolCall

PASSWORD = "s3cr3t-Pa55-9471"
ODD_PASSWORD = "p%40ss:w%2Frd-8812"  # percent-encoded '@' and '/' inside the password


def _config(storage: str) -> llmplex.Client:
    return llmplex.Client(
        {
            "limits": {"storage": storage},
            "log": {"database": f"postgresql://logger:{PASSWORD}@db.internal:5432/logs"},
            "gateway": {"database": f"postgresql+psycopg://gw:{PASSWORD}@db.internal/spend"},
        }
    )


@pytest.mark.parametrize(
    "storage",
    [
        f"redis://:{PASSWORD}@127.0.0.1:6379/0",
        f"rediss://user:{PASSWORD}@cache.internal:6380/1",
        f"redis://:{ODD_PASSWORD}@127.0.0.1:6379/0",
        f"redis://127.0.0.1:6379/0?password={PASSWORD}",
    ],
    ids=["password", "user-and-password", "encoded-characters", "in-the-query"],
)
def test_item_9_a_storage_urls_password_shows_in_no_dump_repr_json_or_log(
    storage: str, caplog: pytest.LogCaptureFixture
) -> None:
    secret = ODD_PASSWORD if ODD_PASSWORD in storage else PASSWORD
    config = _config(storage).config
    with caplog.at_level(logging.DEBUG, logger="llmplex"):
        logging.getLogger("llmplex.test").info("config %s limits %r storage %s", config, config.limits, storage)
    shown = [
        str(config.model_dump()),
        repr(config.model_dump()),
        str(config.limits.model_dump()),
        str(config.log.model_dump()),
        str(config.gateway.model_dump()),
        config.model_dump_json(),
        json.dumps(config.model_dump(mode="json")),
        repr(config),
        str(config),
        repr(config.limits),
        str(config.limits.storage),
        f"{config.limits.storage}",
        repr(config.log.database),
        *(record.getMessage() for record in caplog.records),
    ]
    for text in shown:
        assert secret not in text, text
    assert any("***@" in text or "password=***" in text for text in shown)
    assert "127.0.0.1" in str(config.limits.storage) or "cache.internal" in str(config.limits.storage)


def test_item_9_the_masked_url_still_connects_and_a_dump_rebuilds_the_client() -> None:
    storage = f"redis://:{PASSWORD}@127.0.0.1:6379/0"
    config = _config(storage).config
    assert isinstance(config.limits.storage, SecretURL)
    assert store_for(config.limits).url == storage  # the store opens the real URL
    rebuilt = llmplex.Client(config.model_dump()).config
    assert rebuilt.limits.storage.get_secret_value() == storage
    assert rebuilt.log.database is not None and PASSWORD in rebuilt.log.database.get_secret_value()
    assert pickle.loads(pickle.dumps(config)).limits.storage.get_secret_value() == storage


def test_item_9_a_wrong_storage_url_is_still_refused_without_showing_its_password() -> None:
    with pytest.raises(LLMConfigurationError, match="storage") as refused:
        llmplex.Client({"limits": {"storage": f"http://:{PASSWORD}@127.0.0.1/"}})
    assert PASSWORD not in str(refused.value)


# -- bullet 2: wrong arguments are typed errors naming the argument --------------------------------------------------

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")

WRONG: list[tuple[str, Callable[[], Any], str]] = [
    ("user list with an object", lambda: Message.user(["look:", object()]), "content[1]"),
    ("user list with a number", lambda: Message.user(["a", 5]), "content[1]"),
    ("user list with an unknown part dict", lambda: Message.user([{"type": "video", "data": "x"}]), "content[0]"),
    ("user list with a bad image dict", lambda: Message.user(["a", {"type": "image", "data": 5}]), "content[1]"),
    ("user of an object", lambda: Message.user(object()), "content"),  # type: ignore[arg-type]
    ("user of a generator", lambda: Message.user(c for c in "ab"), "content"),  # type: ignore[arg-type]
    ("user cache not a flag", lambda: Message.user("hi", cache="maybe"), "cache"),  # type: ignore[arg-type]
    ("system of a number", lambda: Message.system(3), "content"),  # type: ignore[arg-type]
    ("assistant of a dict", lambda: Message.assistant({"text": "x"}), "content"),  # type: ignore[arg-type]
    ("assistant tool call dict", lambda: Message.assistant("x", tool_calls=({"id": "a"},)), "tool_calls[0].name"),  # type: ignore[arg-type]
    ("assistant reasoning of text", lambda: Message.assistant("x", reasoning=("think",)), "reasoning[0]"),  # type: ignore[arg-type]
    ("tool call id a number", lambda: Message.tool(3, "result"), "tool_call_id"),  # type: ignore[arg-type]
    ("tool name a list", lambda: Message.tool("c1", "result", name=["t"]), "name"),  # type: ignore[arg-type]
    ("unknown role", lambda: Message(role="robot", content="x"), "role"),  # type: ignore[arg-type]
    ("no role", lambda: Message(content="x"), "role"),  # type: ignore[call-arg]
    ("unknown argument", lambda: Message(role="user", content="x", colour="red"), "colour"),  # type: ignore[call-arg]
    ("tool call id a number", lambda: ToolCall(id=1, name="f"), "id"),  # type: ignore[arg-type]
    ("tool call arguments a dict", lambda: ToolCall(id="c", name="f", arguments={"a": 1}), "arguments"),  # type: ignore[arg-type]
    ("tool call unknown argument", lambda: ToolCall(id="c", name="f", args="{}"), "args"),  # type: ignore[call-arg]
    ("reasoning data a list", lambda: ReasoningPart(format="anthropic", data=[1]), "data"),  # type: ignore[arg-type]
    ("reasoning empty format", lambda: ReasoningPart(format="", data={}), "format"),
    ("image data a number", lambda: Image(data=5, media_type="image/png"), "data"),  # type: ignore[arg-type]
    ("image unknown argument", lambda: Image(data=PNG, media_type="image/png", alt="x"), "alt"),  # type: ignore[call-arg]
    ("image positional bytes", lambda: Image(PNG), "keyword"),  # type: ignore[misc]
    ("image from a number", lambda: Image.from_bytes(5), "bytes"),  # type: ignore[arg-type]
    ("document media type a number", lambda: Document(data=b"%PDF-1.4", media_type=7), "media_type"),  # type: ignore[arg-type]
    ("audio from an object path", lambda: Audio.from_path(object()), "path"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("case", "build", "named"), WRONG, ids=[case for case, _, _ in WRONG])
def test_item_9_every_wrong_constructor_argument_is_a_typed_error_naming_it(
    case: str, build: Callable[[], Any], named: str
) -> None:
    with pytest.raises(LLMConfigurationError) as refused:
        build()
    assert not isinstance(refused.value, ValidationError)
    assert named in str(refused.value), str(refused.value)


def test_item_9_a_wrong_value_is_named_by_type_never_shown() -> None:
    secret = "sk-this-is-not-a-key-0123456789abcdef"
    for build in (
        lambda: Message.user({"api_key": secret}),  # type: ignore[arg-type]
        lambda: Message.tool("c1", "r", name={"token": secret}),  # type: ignore[arg-type]
        lambda: ToolCall(id="c1", name="f", arguments={"password": secret}),  # type: ignore[arg-type]
    ):
        with pytest.raises(LLMConfigurationError) as refused:
            build()
        assert secret not in str(refused.value) and "dict" in str(refused.value), str(refused.value)


def test_item_9_right_arguments_still_build_messages() -> None:
    image = Image(data=PNG, media_type="image/png")
    message = Message.user(
        ["look:", image, {"type": "document", "data": b"%PDF-1.4 x", "media_type": "application/pdf"}]
    )
    assert message.parts[0] == image and message.parts[1].media_type == "application/pdf"
    assert Message.user(("a", "b")).text == "a\n\nb"
    call = ToolCall(id="c1", name="f", arguments="{}")
    assert Message.assistant(None, tool_calls=(call,)).tool_calls == (call,)
    assert Message.model_validate(Message.user(["x", image]).model_dump()) == Message.user(["x", image])
