"""Issue 25 item 3: conversations — `complete -c/--continue`, `--cid`, and logged history as Messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import llmplex
from llmplex import Image, Message, Response, ToolCall
from llmplex.cli.main import cli
from llmplex.events import CallEnded
from llmplex.store import conversation_messages, open_database
from llmplex.store.database import default_url
from llmplex.types.reasoning import ReasoningPart
from tests.calllog.support import all_rows

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
THINKING = ReasoningPart(format="anthropic", text="add them", data={"type": "thinking", "signature": "c2lnbmVk"})


def _llmplex(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _tool_conversation(url: str) -> str:
    """A logged conversation with a tool call, its result and reasoning; returns its id."""
    client = llmplex.Client(log=url)
    backend = client.provider_client("mock")
    backend.push(tool_calls=[{"id": "call_7", "name": "add", "arguments": '{"a": 2, "b": 3}'}])
    backend.push("2 + 3 = 5")

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    assert client.complete("mock:echo", "add 2 and 3", tools=[add]).text == "2 + 3 = 5"
    assert client.call_log is not None and client.call_log.flush(30)
    return str(all_rows(url)[-1]["conversation_id"])


def test_item_3_the_library_loads_a_conversation_as_messages(tmp_path: Path) -> None:
    url = default_url()
    cid = _tool_conversation(url)
    engine = open_database(url, create=False)
    messages, model = conversation_messages(engine, cid)
    engine.dispose()
    assert model == "mock:echo"
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].tool_calls == (ToolCall(id="call_7", name="add", arguments='{"a": 2, "b": 3}'),)
    assert messages[2] == Message.tool("call_7", "5", name="add")
    assert messages[3] == Message.assistant("2 + 3 = 5")
    reply = llmplex.Client().complete("mock:echo", [*messages, Message.user("and times 4?")])  # to any model
    assert reply.text == "and times 4?"


def test_item_3_reasoning_parts_come_back_byte_for_byte(tmp_path: Path) -> None:
    url = default_url()
    log = llmplex.store.CallLog(url)
    request = llmplex.Client().build_request("mock:echo", "think, then add 2 and 3")[1]
    answer = Response(
        text="",
        tool_calls=(ToolCall(id="t1", name="add", arguments="{}"),),
        reasoning=(THINKING,),
        provider="anthropic",
        model="claude-sonnet-4-5",
    )
    log.llmplex_event(CallEnded("r1", "anthropic", "claude-sonnet-4-5", request=request, response=answer))
    assert log.flush(30)
    [row] = all_rows(url)
    engine = open_database(url, create=False)
    messages, model = conversation_messages(engine, str(row["conversation_id"]))
    engine.dispose()
    assert model == "anthropic:claude-sonnet-4-5"
    assert messages[-1].reasoning == (THINKING,) and messages[-1].tool_calls == answer.tool_calls


def test_item_3_continue_sends_the_logged_history_with_tool_calls_and_results(tmp_path: Path) -> None:
    cid = _tool_conversation(default_url())
    result = _llmplex("complete", "-c", "and times 4?")
    assert result.exit_code == 0, result.output
    last = all_rows(default_url())[-1]
    assert last["conversation_id"] == cid  # the new turn joins the conversation
    sent = last["prompt"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["tool_calls"][0]["id"] == "call_7" and sent[2]["tool_call_id"] == "call_7"
    assert sent[-1]["content"] == "and times 4?" and last["model_asked"] == "mock:echo"
    again = _llmplex("complete", "--continue", "-m", "mock:other", "once more")  # any model
    assert again.exit_code == 0
    newest = all_rows(default_url())[-1]
    assert newest["conversation_id"] == cid and newest["model"] == "other" and len(newest["prompt"]) == 7


def test_item_3_cid_continues_a_given_conversation_not_the_latest(tmp_path: Path) -> None:
    _llmplex("complete", "-m", "mock:echo", "conversation A")
    first = all_rows(default_url())[0]["conversation_id"]
    _llmplex("complete", "-m", "mock:echo", "conversation B")
    assert _llmplex("complete", "--cid", str(first), "back to A").exit_code == 0
    rows = all_rows(default_url())
    assert rows[1]["conversation_id"] != first
    assert rows[2]["conversation_id"] == first
    assert [m["content"] for m in rows[2]["prompt"]] == ["conversation A", "conversation A", "back to A"]
    shown = _llmplex("logs", "--cid", str(first), "--json", "-n", "10")
    assert len(shown.stdout.splitlines()) == 2


def test_item_3_the_library_links_turns_it_resends(tmp_path: Path) -> None:
    url = default_url()
    client = llmplex.Client(log=url)
    first = client.complete("mock:echo", "turn one")
    client.complete("mock:echo", [Message.user("turn one"), first.message(), Message.user("turn two")])
    client.complete("mock:echo", "unrelated")
    assert client.call_log is not None and client.call_log.flush(30)
    one, two, other = all_rows(url)
    assert one["conversation_id"] == two["conversation_id"] != other["conversation_id"]
    with llmplex.store.call_context(conversation_id="chosen-id"):
        client.complete("mock:echo", "named")
    assert client.call_log.flush(30)
    assert all_rows(url)[-1]["conversation_id"] == "chosen-id"


def test_item_3_parts_logged_by_reference_come_back_as_a_description(tmp_path: Path) -> None:
    url = default_url()
    client = llmplex.Client(log=url)
    client.complete(
        "mock:echo", [Message.user(["look", Image.from_bytes(PNG), Image.from_url("https://x.test/a.png")])]
    )
    assert client.call_log is not None and client.call_log.flush(30)
    engine = open_database(url, create=False)
    messages, _ = conversation_messages(engine, str(all_rows(url)[0]["conversation_id"]))
    engine.dispose()
    content = messages[0].content
    assert isinstance(content, tuple) and content[0] == "look"
    assert isinstance(content[1], str) and "image/png" in content[1] and "not kept" in content[1]
    assert isinstance(content[2], Image) and content[2].url == "https://x.test/a.png"


def test_item_3_nothing_to_continue_is_a_clear_error(tmp_path: Path) -> None:
    empty = _llmplex("complete", "-c", "hello?")
    assert empty.exit_code != 0 and "no conversation to continue" in empty.stderr
    _llmplex("complete", "-m", "mock:echo", "hi")
    unknown = _llmplex("complete", "--cid", "no-such-conversation", "hello?")
    assert unknown.exit_code != 0 and "no-such-conversation" in unknown.stderr and "llmplex logs" in unknown.stderr
    assert "Traceback" not in unknown.output


def test_item_3_a_conversation_logged_without_bodies_cannot_be_continued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "llmplex.toml").write_text("[log]\nbodies = false\n")
    _llmplex("complete", "-m", "mock:echo", "secret plans")
    result = _llmplex("complete", "-c", "go on")
    assert result.exit_code != 0 and "bodies = false" in result.stderr


def test_item_3_load_conversation_is_one_call(tmp_path: Path) -> None:
    with pytest.raises(llmplex.LLMConfigurationError, match="no conversation to load"):
        llmplex.store.load_conversation()
    cid = _tool_conversation(default_url())
    _llmplex("complete", "-m", "mock:echo", "a later, other conversation")
    assert [m.role for m in llmplex.store.load_conversation(cid)] == ["user", "assistant", "tool", "assistant"]
    assert llmplex.store.load_conversation()[0] == Message.user("a later, other conversation")
    other = tmp_path / "other.db"
    with pytest.raises(llmplex.LLMConfigurationError, match="no conversation to load"):
        llmplex.store.load_conversation(url=f"sqlite:///{other}")
