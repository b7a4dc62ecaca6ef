"""Seeds 002/003 on ``llmplex.compat.weakincentives``, continued: deadlines, rendering, the exception hierarchy,
resources, threads, wrong arguments and the organization header (the adapter protocol, configuration, structured
output and throttling are in ``test_seed_002_003_weakincentives.py``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import llmplex
from llmplex import Deadline
from llmplex.compat import weakincentives as wi
from llmplex.compat.weakincentives import (
    DeadlineExceededError,
    OpenAIClientConfig,
    PromptEvaluationError,
    PromptRendered,
    PromptRenderError,
    Session,
)
from tests.compat.wi_helpers import (
    KEY,
    GreetingParams,
    StructuredAnswer,
    answer_json,
    greeting,
    openai_adapter,
    sent,
    structured,
)
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late

# --- Deadlines --------------------------------------------------------------------------


def test_an_expired_deadline_raises_before_anything_is_sent(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 002 § Error Propagation (DeadlineExceededError immediately) / § Testing / seed 003 § OpenAI."""
    deadline = wi.Deadline(expires_at=datetime.now(UTC) + timedelta(seconds=2))
    later = datetime.now(UTC) + timedelta(seconds=3)
    monkeypatch.setattr("llmplex.compat.weakincentives.budget._utcnow", lambda: later)
    seen: list[object] = []
    session = Session()
    session.dispatcher.subscribe(PromptRendered, seen.append)
    with pytest.raises(DeadlineExceededError) as caught:
        openai_adapter(fault_server).evaluate(greeting(), session=session, deadline=deadline)
    error = caught.value
    assert isinstance(error, PromptEvaluationError) and error.phase == "request"
    assert isinstance(error, llmplex.LLMDeadlineExceededError)
    assert fault_server.request_count == 0 and seen == []


def test_a_deadline_that_passes_for_real_also_stops_before_sending(fault_server: FaultServer) -> None:
    """Seed 002 § Testing (deadline checks abort before provider calls when expired), without a fake clock."""
    deadline = wi.Deadline(expires_at=datetime.now(UTC) + timedelta(seconds=1.05))
    time.sleep(1.1)  # clock: the deadline passes for real (weakincentives refuses one less than a second out)
    with pytest.raises(DeadlineExceededError):
        openai_adapter(fault_server).evaluate(greeting(), session=Session(), deadline=deadline)
    assert fault_server.request_count == 0


def test_the_deadline_bounds_a_hanging_provider(fault_server: FaultServer) -> None:
    """Seed 003 § Deadline-aware execution: the deadline reaches the provider call and ends the wait."""
    adapter = openai_adapter(fault_server)
    # warmed up before the clock starts (the plugin and its SDK imported, a connection open): cold, on a loaded
    # machine, the deadline passed before the request was sent
    adapter.evaluate(greeting(), session=Session())
    fault_server.reset()
    fault_server.enqueue(Fault.hang(10))
    # The call turns the time left before ``expires_at`` into llmplex's deadline, the instant ``late`` measures
    # from (``tests.support.late``: the time a busy machine keeps the caller waiting for a CPU is not counted).
    at = Deadline.after(1.2)
    deadline = wi.Deadline(expires_at=datetime.now(UTC) + timedelta(seconds=at.remaining()))
    late = Late(at)
    with pytest.raises(DeadlineExceededError) as caught:
        adapter.evaluate(greeting(), session=Session(), deadline=deadline)
    seconds = late.seconds()
    assert seconds < 0.5, late.describe(seconds)
    # The deadline may end the call before a loaded server's handler thread has read the request.
    assert fault_server.wait_for_requests(1, timeout=10)
    assert caught.value.phase == "request" and fault_server.request_count == 1


def test_deadlines_are_validated_like_weakincentives() -> None:
    """Seed 002 § Adapter Protocol (deadline: wall-clock): timezone-aware, in the future, at least one second away."""
    now = datetime.now(UTC)
    for bad in (datetime.now(), now - timedelta(seconds=1), now + timedelta(milliseconds=200)):
        with pytest.raises(ValueError, match="Deadline"):
            wi.Deadline(expires_at=bad)
    deadline = wi.Deadline(expires_at=now + timedelta(seconds=60))
    assert deadline.remaining(now=now) == timedelta(seconds=60)


# --- Rendering --------------------------------------------------------------------------


def test_sections_render_with_params_children_and_numbering() -> None:
    """Seed 002 § Lifecycle (Render: prompt.render() produces markdown text, tools, output metadata)."""

    @dataclasses.dataclass
    class Topic:
        name: str = "testing"

    template = wi.PromptTemplate[StructuredAnswer](
        ns="docs",
        key="nested",
        sections=(
            wi.MarkdownSection[Topic](
                title="Intro",
                key="intro",
                template="""
                    About ${name}.
                """,
                children=(wi.MarkdownSection(title="Detail", key="detail", template="More."),),
            ),
            wi.MarkdownSection(title="Hidden", key="hidden", template="x", enabled=lambda: False),
            wi.MarkdownSection(title="Outro", key="outro", template="Bye."),
        ),
    )
    rendered = wi.Prompt(template).render()
    assert rendered.text == (
        "## 1. Intro (intro)\n\nAbout testing.\n\n"
        "### 1.1. Detail (intro.detail)\n\nMore.\n\n"
        "## 3. Outro (outro)\n\nBye."
    )
    assert rendered.output_type is StructuredAnswer and rendered.container == "object"
    assert wi.Prompt(template).bind(Topic("docs")).render().text.startswith("## 1. Intro (intro)\n\nAbout docs.")


def test_render_errors_are_prompt_evaluation_errors(fault_server: FaultServer) -> None:
    """Seed 002 § Exception Hierarchy (PromptRenderError: template/section failures) — nothing is sent."""
    template: wi.PromptTemplate[Any] = wi.PromptTemplate(
        ns="t", key="k", sections=(wi.MarkdownSection[GreetingParams](title="G", key="g", template="Hi ${nobody}"),)
    )
    with pytest.raises(PromptRenderError) as caught:
        openai_adapter(fault_server).evaluate(wi.Prompt(template).bind(GreetingParams("x")), session=Session())
    assert caught.value.placeholder == "nobody" and caught.value.section_path == ("g",)
    assert isinstance(caught.value, PromptEvaluationError) and fault_server.request_count == 0
    with pytest.raises(PromptRenderError, match="Missing parameters"):
        wi.Prompt(template).render()
    with pytest.raises(wi.PromptValidationError):
        wi.PromptTemplate[int](ns="t", key="k")


def test_exception_hierarchy() -> None:
    """Seed 002 § Exception Hierarchy: throttle, render, parse and deadline errors are PromptEvaluationErrors."""
    for kind in (wi.ThrottleError, wi.PromptRenderError, wi.OutputParseError, wi.DeadlineExceededError):
        assert issubclass(kind, PromptEvaluationError)
    assert issubclass(PromptEvaluationError, llmplex.LLMError) and issubclass(PromptEvaluationError, RuntimeError)
    assert {wi.PROMPT_EVALUATION_PHASE_REQUEST, wi.PROMPT_EVALUATION_PHASE_RESPONSE} == {"request", "response"}
    assert {wi.PROMPT_EVALUATION_PHASE_TOOL, wi.PROMPT_EVALUATION_PHASE_BUDGET} == {"tool", "budget"}


def test_resources_are_only_available_inside_the_context_manager() -> None:
    """Seed 002 § Resource Access: prompt.resources.get inside ``with prompt.resources:``, RuntimeError outside."""

    class Filesystem:
        pass

    fs = Filesystem()
    prompt = greeting().bind(resources={Filesystem: fs})
    with pytest.raises(RuntimeError):
        prompt.resources.get(Filesystem)
    with prompt.resources:
        assert prompt.resources.get(Filesystem) is fs


def test_one_adapter_serves_threads_concurrently(fault_server: FaultServer) -> None:
    """Seed 002 § Guiding Principles (fail predictable) under concurrency: each thread gets its own answer."""
    adapter = openai_adapter(fault_server)
    results: list[str | None] = []
    lock = threading.Lock()

    def run() -> None:
        text = adapter.evaluate(greeting(), session=Session()).text
        with lock:
            results.append(text)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == [Fault.ok().text] * 4 and fault_server.request_count == 4


def test_wrong_arguments_are_configuration_errors_that_say_what_to_pass(fault_server: FaultServer) -> None:
    """Seed 002 § Adapter Protocol, bad input: each evaluate argument's type is checked before anything is sent."""
    adapter = openai_adapter(fault_server)
    template = greeting().template
    cases: list[tuple[dict[str, Any], str]] = [
        ({"prompt": template, "session": Session()}, "Prompt"),
        ({"prompt": greeting(), "session": object()}, "Session"),
        ({"prompt": greeting(), "session": Session(), "deadline": llmplex.Deadline.after(5)}, "Deadline"),
        ({"prompt": greeting(), "session": Session(), "budget": {"max_total_tokens": 5}}, "Budget"),
    ]
    for arguments, wanted in cases:
        prompt = arguments.pop("prompt")
        with pytest.raises(llmplex.LLMConfigurationError, match=wanted):
            adapter.evaluate(prompt, **arguments)
    assert fault_server.request_count == 0


def test_organization_header_and_instruction_based_structured_output(fault_server: FaultServer) -> None:
    """Seed 002 § OpenAI Adapter (organization) / seed 003 § OpenAI (use_native_response_format: False falls back
    to output instructions in the prompt)."""
    config = OpenAIClientConfig(api_key=KEY, base_url=fault_server.url, organization="org-compat")
    fault_server.enqueue(Fault.ok(answer_json(answer="from instructions")))
    adapter = openai_adapter(fault_server, client_config=config, use_native_response_format=False)
    assert adapter.evaluate(structured(), session=Session()).output == StructuredAnswer("from instructions")
    assert fault_server.requests[0].headers["openai-organization"] == "org-compat"
    body = sent(fault_server)
    assert "text" not in body
    (system,) = body["input"]
    assert system["content"].startswith("## 1. Task (task)\n\nAnswer the question.")
    assert '"required":["answer"]' in system["content"]
