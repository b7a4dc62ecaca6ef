"""Issue 23 item 2: the real ``weakincentives`` package's Prompt, Session and tools, evaluated by llmplex's adapters.

A weakincentives user keeps every import but the adapter's::

    # from weakincentives.adapters.openai import OpenAIAdapter
    from llmplex.compat.weakincentives import OpenAIAdapter

Runs in ``tox -e compat-weakincentives`` (weakincentives 0.18.x from PyPI needs
Python >= 3.12; the py env's 3.11 cannot install it). The provider is faked the
way weakincentives' own tests fake it: an injected client, or the HTTP server of
tests.support.fault_server behind ``OpenAIClientConfig(base_url=...)``.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from typing import Any

import pytest

try:
    from weakincentives.adapters import PromptResponse
    from weakincentives.budget import Budget, BudgetTracker
    from weakincentives.deadlines import Deadline
    from weakincentives.prompt import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
    from weakincentives.runtime import InProcessDispatcher, Session
    from weakincentives.runtime.events import PromptExecuted, PromptRendered, ToolInvoked
    from weakincentives.runtime.session.protocols import SessionProtocol
except ModuleNotFoundError as missing:  # pragma: no cover - the env is wrong
    raise ModuleNotFoundError(
        "these tests need the weakincentives package (Python >= 3.12): run `tox -e compat-weakincentives`, "
        "or `pip install 'weakincentives>=0.18,<0.19'` into a Python 3.13 environment"
    ) from missing

from llmplex.compat.weakincentives import LiteLLMAdapter, OpenAIAdapter, OpenAIClientConfig, PromptEvaluationError
from llmplex.compat.weakincentives import Session as CompatSession
from tests.support.fault_server import Fault, FaultServer

KEY = "sk-compat-wi-0123456789abcdef"


@dataclass(frozen=True)
class Query:
    query: str


@dataclass(frozen=True)
class Answer:
    answer: str


class Obj:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class DummyResponsesAPI:
    def __init__(self, responses: list[object]) -> None:
        self._responses = responses
        self.requests: list[dict[str, Any]] = []

    def create(self, **kwargs: Any) -> object:
        self.requests.append(kwargs)
        return self._responses.pop(0)


class DummyOpenAIClient:
    def __init__(self, responses: list[object]) -> None:
        self.responses = DummyResponsesAPI(responses)


class RecordingCompletion:
    def __init__(self, responses: list[object]) -> None:
        self._responses = responses
        self.requests: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> object:
        self.requests.append(kwargs)
        return self._responses.pop(0)


@dataclass(frozen=True)
class Notes:
    """A resource bound to the prompt, read by the tool through its context."""

    text: str


def search(params: Query, *, context: ToolContext) -> ToolResult[Answer]:
    notes = context.resources.get(Notes)
    return ToolResult(message="found", value=Answer(answer=f"{notes.text}:{params.query}"))


def failing(params: Query, *, context: ToolContext) -> ToolResult[Answer]:
    raise RuntimeError("tool bug")


def their_prompt(handler: Any = search, output: Any = Answer) -> Prompt[Any]:
    tool = Tool[Query, Answer](name="search_notes", description="Search stored notes.", handler=handler)
    template = PromptTemplate[output](
        ns="tests/compat/wi",
        key="search",
        name="search",
        sections=[MarkdownSection[Query](title="Task", key="task", template="Look up ${query}", tools=[tool])],
    )
    return Prompt(template).bind(Query(query="policies"), resources={Notes: Notes("n")})


def call(name: str, arguments: dict[str, Any]) -> Obj:
    return Obj(output=[Obj(type="function_call", call_id="call_1", name=name, arguments=json.dumps(arguments))])


def text(value: str, **usage: int) -> Obj:
    return Obj(output=[Obj(type="message", content=[Obj(type="output_text", text=value)])], usage=usage or None)


def test_item_2_the_package_under_test_is_weakincentives_0_18() -> None:
    assert version("weakincentives").startswith("0.18.")


def test_item_2_their_prompt_session_and_tools_through_the_injected_openai_client() -> None:
    client = DummyOpenAIClient([call("search_notes", {"query": "policies"}), text(json.dumps({"answer": "done"}))])
    session = Session()
    prompt = their_prompt()
    with prompt.resources:
        result = OpenAIAdapter(model="gpt-test", client=client).evaluate(prompt, session=session)
    assert isinstance(result, PromptResponse) and result.output == Answer(answer="done")
    executed = session[PromptExecuted].latest()
    assert isinstance(executed, PromptExecuted) and executed.result is result and executed.adapter == "openai"
    assert isinstance(session[PromptRendered].latest(), PromptRendered)
    (invoked,) = session[ToolInvoked].all()
    assert invoked.name == "search_notes" and invoked.result.value == Answer(answer="n:policies")
    assert session[Answer].all() == (Answer(answer="n:policies"), Answer(answer="done"))
    assert client.responses.requests[0]["input"][0]["content"].endswith("Look up policies")


def test_item_2_their_objects_through_the_http_layer(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.ok(json.dumps({"answer": "over http"})))
    session = Session()
    adapter = OpenAIAdapter(model="gpt-test", client_config=OpenAIClientConfig(api_key=KEY, base_url=fault_server.url))
    prompt = Prompt(
        PromptTemplate[Answer](
            ns="tests/compat/wi",
            key="plain",
            sections=[MarkdownSection[Query](title="Task", key="task", template="Answer ${query}")],
        )
    ).bind(Query(query="q"))
    result = adapter.evaluate(prompt, session=session)
    assert result.output == Answer(answer="over http")
    assert session[PromptExecuted].latest().result is result  # type: ignore[union-attr]


def test_item_2_their_prompt_and_session_through_an_injected_litellm_completion() -> None:
    tool_call = Obj(id="call_1", function=Obj(name="search_notes", arguments=json.dumps({"query": "policies"})))
    completion = RecordingCompletion(
        [
            Obj(choices=[Obj(message=Obj(content=None, tool_calls=[tool_call]))]),
            Obj(choices=[Obj(message=Obj(content=json.dumps({"items": [{"answer": "a"}, {"answer": "b"}]})))]),
        ]
    )
    session = Session()
    prompt = their_prompt(output=list[Answer])
    result = LiteLLMAdapter(model="openai/gpt-test", completion=completion).evaluate(prompt, session=session)
    assert result.output == [Answer(answer="a"), Answer(answer="b")]
    assert completion.requests[1]["messages"][-1]["role"] == "tool"
    assert session[Answer].all() == (Answer(answer="n:policies"), Answer(answer="a"), Answer(answer="b"))


def test_item_2_their_budget_tracker_learns_the_usage_and_their_deadline_is_honoured() -> None:
    client = DummyOpenAIClient([text("hi", input_tokens=30, output_tokens=5)])
    tracker = BudgetTracker(Budget(max_total_tokens=1000))
    deadline = Deadline(expires_at=datetime.now(UTC) + timedelta(minutes=5))
    prompt = Prompt(
        PromptTemplate(ns="tests/compat/wi", key="hi", sections=[MarkdownSection(title="Hi", key="hi", template="Hi")])
    )
    result = OpenAIAdapter(model="gpt-test", client=client).evaluate(
        prompt, session=Session(), deadline=deadline, budget_tracker=tracker
    )
    assert result.text == "hi"
    assert tracker.consumed.input_tokens == 30 and tracker.consumed.output_tokens == 5

    spent = DummyOpenAIClient([text("over", input_tokens=30, output_tokens=5)])
    with pytest.raises(PromptEvaluationError) as raised:
        OpenAIAdapter(model="gpt-test", client=spent).evaluate(
            prompt, session=Session(), budget=Budget(max_total_tokens=10)
        )
    assert raised.value.phase == "budget"


def test_item_2_a_failing_tool_of_theirs_is_reported_to_the_model_and_the_evaluation_goes_on() -> None:
    client = DummyOpenAIClient([call("search_notes", {"query": "policies"}), text(json.dumps({"answer": "anyway"}))])
    session = Session()
    result = OpenAIAdapter(model="gpt-test", client=client).evaluate(their_prompt(failing), session=session)
    assert result.output == Answer(answer="anyway")
    (invoked,) = session[ToolInvoked].all()
    assert invoked.result.success is False and "tool bug" in invoked.result.message
    assert "tool bug" in client.responses.requests[1]["input"][-1]["output"]


def test_item_2_compat_session_has_every_member_of_their_session_protocol() -> None:
    members = [name for name in dir(SessionProtocol) if not name.startswith("_") or name == "__getitem__"]
    ours = CompatSession()
    assert {"dispatcher", "dispatch", "install", "reset", "restore", "snapshot", "__getitem__"} <= set(members)
    assert [name for name in members if not hasattr(ours, name)] == []


@dataclass(frozen=True)
class Note:
    text: str


def test_item_2_a_failed_tool_of_theirs_leaves_their_session_state_as_it_was() -> None:
    def writes_then_fails(params: Query, *, context: ToolContext) -> ToolResult[Answer]:
        context.session.dispatch(Note("written by the failing tool"))
        raise RuntimeError("tool bug")

    client = DummyOpenAIClient([call("search_notes", {"query": "policies"}), text(json.dumps({"answer": "ok"}))])
    session = Session()
    session[Note].seed(Note("before"))
    OpenAIAdapter(model="gpt-test", client=client).evaluate(their_prompt(writes_then_fails), session=session)
    assert session[Note].all() == (Note("before"),)
    assert len(session[ToolInvoked].all()) == 1


def test_item_2_their_prompt_with_the_compat_session() -> None:
    from llmplex.compat.weakincentives import PromptExecuted as CompatPromptExecuted

    client = DummyOpenAIClient([call("search_notes", {"query": "policies"}), text(json.dumps({"answer": "done"}))])
    session = CompatSession()
    result = OpenAIAdapter(model="gpt-test", client=client).evaluate(their_prompt(), session=session)
    assert result.output == Answer(answer="done")
    assert session[CompatPromptExecuted].latest().result is result  # type: ignore[union-attr]
    assert session[Answer].all() == (Answer(answer="n:policies"), Answer(answer="done"))


def _fields(cls: type) -> list[tuple[str, object]]:
    missing = dataclasses.MISSING
    return [
        (
            f.name,
            f.default if f.default is not missing else "factory" if f.default_factory is not missing else "required",
        )
        for f in dataclasses.fields(cls)
    ]


@pytest.mark.parametrize(
    "name",
    [
        "LLMConfig",
        "OpenAIClientConfig",
        "OpenAIModelConfig",
        "LiteLLMClientConfig",
        "LiteLLMModelConfig",
        "ThrottlePolicy",
        "ThrottleDetails",
        "Budget",
        "TokenUsage",
        "PromptExecuted",
        "PromptRendered",
        "ToolInvoked",
        "ToolResult",
        "PromptResponse",
    ],
)
def test_item_2_compat_dataclasses_have_the_packages_fields_and_defaults(name: str) -> None:
    import weakincentives.adapters.config as config
    import weakincentives.adapters.core as core
    import weakincentives.adapters.throttle as throttle
    import weakincentives.budget as budget
    import weakincentives.prompt as prompt
    import weakincentives.runtime.events as events

    import llmplex.compat.weakincentives as compat

    theirs = getattr(next(m for m in (config, throttle, budget, events, prompt, core) if hasattr(m, name)), name)
    assert _fields(getattr(compat, name)) == _fields(theirs)


def _accepts_every_call_of(ours: Any, theirs: Any) -> list[str]:
    """What a call written for ``theirs`` could pass that ``ours`` would refuse or read differently."""
    mine = {p.name: p for p in inspect.signature(ours).parameters.values()}
    order = [p.name for p in inspect.signature(ours).parameters.values()]
    problems = []
    for index, p in enumerate(inspect.signature(theirs).parameters.values()):
        if p.name.startswith("_"):
            continue
        match = mine.get(p.name)
        if match is None:
            problems.append(f"no {p.name}")
        elif p.kind is p.POSITIONAL_OR_KEYWORD and (
            match.kind is not p.POSITIONAL_OR_KEYWORD or order[index] != p.name
        ):
            problems.append(f"{p.name} is not positional at {index}")
        elif p.default is not p.empty and repr(p.default) != "<factory>" and repr(match.default) != repr(p.default):
            problems.append(f"{p.name} defaults to {match.default!r}, not {p.default!r}")
        elif p.default is not p.empty and match.default is p.empty:
            problems.append(f"{p.name} has no default")
    extra = [p.name for p in mine.values() if p.default is p.empty and p.kind is not p.VAR_KEYWORD]
    names = {p.name for p in inspect.signature(theirs).parameters.values()}
    return problems + [f"{n} is required" for n in extra if n not in names]


def test_item_2_compat_constructors_accept_every_call_written_for_the_package() -> None:
    import weakincentives.adapters.litellm as their_litellm
    import weakincentives.adapters.openai as their_openai
    from weakincentives.adapters.core import PromptEvaluationError as TheirError
    from weakincentives.adapters.core import ProviderAdapter as TheirAdapter
    from weakincentives.adapters.throttle import ThrottleError as TheirThrottleError
    from weakincentives.adapters.throttle import new_throttle_policy as their_policy

    import llmplex.compat.weakincentives as compat

    pairs = [
        (compat.OpenAIAdapter.__init__, their_openai.OpenAIAdapter.__init__),
        (compat.LiteLLMAdapter.__init__, their_litellm.LiteLLMAdapter.__init__),
        (compat.ProviderAdapter.evaluate, TheirAdapter.evaluate),
        (compat.new_throttle_policy, their_policy),
        (compat.Session.__init__, Session.__init__),
        (compat.PromptEvaluationError.__init__, TheirError.__init__),
        (compat.ThrottleError.__init__, TheirThrottleError.__init__),
        (compat.Tool.__init__, Tool.__init__),
        (compat.BudgetTracker.__init__, BudgetTracker.__init__),
    ]
    assert {ours.__qualname__: _accepts_every_call_of(ours, theirs) for ours, theirs in pairs} == {
        ours.__qualname__: [] for ours, _ in pairs
    }


def test_item_2_compat_prompts_accept_every_call_written_for_the_packages_prompts() -> None:
    import weakincentives.prompt as theirs

    import llmplex.compat.weakincentives as compat

    template_fields = [f.name for f in dataclasses.fields(theirs.PromptTemplate) if f.init]
    assert list(inspect.signature(compat.PromptTemplate.__init__).parameters)[1 : len(template_fields) + 1] == (
        template_fields
    )
    pairs = [
        (compat.MarkdownSection.__init__, theirs.MarkdownSection.__init__),
        (compat.Prompt.__init__, theirs.Prompt.__init__),
        (compat.Prompt.bind, theirs.Prompt.bind),
        (compat.Prompt.render, theirs.Prompt.render),
        (compat.ToolResult.ok, theirs.ToolResult.ok),
        (compat.ToolResult.error, theirs.ToolResult.error),
        (compat.InProcessDispatcher.subscribe, InProcessDispatcher.subscribe),
        (compat.Deadline.__init__, Deadline.__init__),
    ]
    found = {ours.__qualname__: _accepts_every_call_of(ours, their) for ours, their in pairs}
    # MarkdownSection passes the section options on as **options: each of theirs must be a Section option
    section = set(inspect.signature(compat.Section.__init__).parameters)
    found["MarkdownSection.__init__"] = [p for p in found["MarkdownSection.__init__"] if p[3:] not in section]
    assert found == {ours.__qualname__: [] for ours, _ in pairs}
    with pytest.raises(ValueError, match="progressive disclosure"):
        compat.MarkdownSection(title="T", key="t", template="x", visibility="summary")


def test_item_2_template_resources_reach_the_tools() -> None:
    import llmplex.compat.weakincentives as compat

    def read(params: Query, *, context: compat.ToolContext) -> compat.ToolResult[Answer]:
        return compat.ToolResult(message="ok", value=Answer(answer=context.resources.get(Notes).text))

    tool = compat.Tool[Query, Answer]("search_notes", "Search stored notes.", read)
    template = compat.PromptTemplate[Answer](
        "tests/compat/wi",
        "res",
        sections=[compat.MarkdownSection[Query](title="T", key="t", template="${query}", tools=[tool])],
        resources={Notes: Notes("from the template")},
    )
    client = DummyOpenAIClient([call("search_notes", {"query": "q"}), text(json.dumps({"answer": "done"}))])
    session = compat.Session()
    compat.OpenAIAdapter(model="gpt-test", client=client).evaluate(
        compat.Prompt(template).bind(Query(query="q")), session=session
    )
    assert session[Answer].all()[0] == Answer(answer="from the template")


def test_item_2_their_reducers_run_on_the_compat_session() -> None:
    from weakincentives.runtime.session import replace_latest as their_replace_latest

    session = CompatSession()
    session[Answer].register(Answer, their_replace_latest)
    session.dispatch(Answer(answer="one"))
    session.dispatch(Answer(answer="two"))
    assert session[Answer].all() == (Answer(answer="two"),)
