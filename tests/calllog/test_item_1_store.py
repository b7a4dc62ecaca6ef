"""Issue 25 item 1: one call log — what a call records, where, and that logging never fails a call."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

import llmplex
from llmplex import Image, Message
from llmplex.errors import LLMServerError
from llmplex.store import CallLog, CallLogWarning, CallWriter, async_engine, call_context, open_database
from llmplex.store.database import HEAD, default_url
from tests.calllog.support import all_rows, sqlite_url

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def _client(url: str, **config: object) -> llmplex.Client:
    return llmplex.Client(log=url, **config)  # type: ignore[arg-type]


def test_item_1_a_call_records_every_field(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    client = _client(url, aliases={"fast": "mock:echo"})
    backend = client.provider_client("mock")
    backend.push(
        "it is sunny",
        usage={"input_tokens": 12, "output_tokens": 7, "cached_tokens": 4, "reasoning_tokens": 2},
        model="echo-2",
    )
    response = client.complete("fast", "weather in Paris?", system="be brief", temperature=0.3, max_tokens=50)
    assert response.text == "it is sunny"
    assert client.call_log is not None and client.call_log.flush(30)
    [row] = all_rows(url)
    assert row["model_asked"] == "fast"
    assert (row["provider"], row["model"]) == ("mock", "echo-2")
    assert row["status"] == "ok" and row["error_type"] is None and row["finish_reason"] == "stop"
    system, user = {"role": "system", "content": "be brief"}, {"role": "user", "content": "weather in Paris?"}
    assert row["prompt"] == [system, user]
    assert row["answer"]["content"] == "it is sunny" and row["answer_text"] == "it is sunny"
    assert row["options"] == {"temperature": 0.3, "max_tokens": 50}
    assert (row["input_tokens"], row["output_tokens"], row["total_tokens"]) == (12, 7, 19)
    assert (row["cached_tokens"], row["cache_write_tokens"], row["reasoning_tokens"]) == (4, 0, 2)
    assert row["cost_usd"] is None and row["cost_note"]  # the mock has no price: unknown with a reason, never 0
    assert row["attempts"] == 1 and row["latency"] == pytest.approx(response.latency)
    assert row["conversation_id"] and row["created_at"] is not None and row["key_name"] is None


def test_item_1_priced_answers_keep_their_cost(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    client = _client(url)
    usage = llmplex.Usage(input_tokens=1000, output_tokens=500).priced("openai", "gpt-4o-mini")
    response = llmplex.Response(text="x", usage=usage, provider="openai", model="gpt-4o-mini")
    log = client.call_log
    assert log is not None
    from llmplex.events import CallEnded

    request = client.build_request("mock:echo", "hi")[1]
    log.llmplex_event(CallEnded("r1", "openai", "gpt-4o-mini", request=request, response=response))
    assert log.flush(30)
    [row] = all_rows(url)
    assert usage.cost_usd is not None and Decimal(row["cost_usd"]) == usage.cost_usd


def test_item_1_failures_retries_streams_and_async_calls_are_logged(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    client = _client(url)
    backend = client.provider_client("mock")
    backend.push_error(LLMServerError("overloaded", status_code=503))
    backend.push("after a retry")
    assert client.complete("mock:echo", "one", throttle={"base_delay": 0, "max_delay": 0}).text == "after a retry"
    backend.push_error(LLMServerError("down", status_code=500))
    with pytest.raises(LLMServerError):
        client.complete("mock:echo", "two", throttle={"max_attempts": 1})
    assert "".join(e.text for e in client.stream("mock:echo", "three") if e.type == "text") == "three"
    assert asyncio.run(client.acomplete("mock:echo", "four")).text == "four"
    assert client.call_log is not None and client.call_log.flush(30)
    rows = all_rows(url)
    assert [r["prompt_text"] for r in rows] == ["one", "two", "three", "four"]
    assert rows[0]["attempts"] == 2 and rows[0]["status"] == "ok"
    assert rows[1]["status"] == "error" and rows[1]["error_type"] == "LLMServerError" and rows[1]["answer"] is None
    assert rows[1]["input_tokens"] is None and rows[1]["cost_usd"] is None
    assert rows[2]["answer_text"] == "three" and rows[3]["answer_text"] == "four"


def test_item_1_tool_calls_results_and_rounds_share_a_conversation(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    client = _client(url)
    backend = client.provider_client("mock")
    backend.push(tool_calls=[{"id": "call_1", "name": "add", "arguments": '{"a": 2, "b": 3}'}])
    backend.push("the sum is 5")

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    assert client.complete("mock:echo", "what is 2+3?", tools=[add]).text == "the sum is 5"
    assert client.call_log is not None and client.call_log.flush(30)
    first, second = all_rows(url)
    assert first["answer"]["tool_calls"] == [{"id": "call_1", "name": "add", "arguments": '{"a": 2, "b": 3}'}]
    assert first["options"]["tools"] == ["add"]
    assert second["prompt"][-1] == {"role": "tool", "content": "5", "tool_call_id": "call_1", "name": "add"}
    assert first["conversation_id"] == second["conversation_id"]


def test_item_1_parts_are_references_not_bytes(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    client = _client(url)
    image = Image.from_bytes(PNG)
    client.complete("mock:echo", [Message.user(["what is this?", image])])
    assert client.call_log is not None and client.call_log.flush(30)
    [row] = all_rows(url)
    part = row["prompt"][0]["content"][1]
    assert part["type"] == "image" and part["media_type"] == "image/png" and part["size"] == len(PNG)
    assert len(part["sha256"]) == 64 and "data" not in part
    import base64

    stored = b"".join(p.read_bytes() for p in tmp_path.glob("logs.db*"))
    assert base64.b64encode(PNG)[:40] not in stored and PNG not in stored


def test_item_1_no_secret_key_or_header_value_is_written(tmp_path: Path) -> None:
    key = "mockkey-abcdefghijklmnopqrstuvwxyz0123"
    url = sqlite_url(tmp_path)
    client = _client(url, providers={"mock": {"api_key": key}})  # core registers the provider's key
    header_value = "plain-header-value-7731"
    client.complete(
        "mock:echo",
        f"my key is {key}",
        provider_options={
            "extra_headers": {"Authorization": "Bearer sk-proj-zyxwvutsrqp9876543210", "X-Trace": header_value},
            "api_key": "sk-inline-0123456789abcdefghij",
            "user_token": "tok-8876-secret-value",
            "nested": {"password": "hunter2hunter2"},
        },
    )
    assert client.call_log is not None and client.call_log.flush(30)
    client.call_log.writer.close()
    [row] = all_rows(url)
    assert row["options"]["provider_options"]["extra_headers"] == {"Authorization": "***", "X-Trace": "***"}
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("logs.db*"))
    for secret in (key, "sk-proj-zyxwvutsrqp9876543210", header_value, "sk-inline-0123456789abcdefghij"):
        assert secret.encode() not in stored, secret
    assert b"tok-8876-secret-value" not in stored and b"hunter2hunter2" not in stored


def test_item_1_bodies_false_keeps_only_the_figures(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    client = llmplex.Client({"log": {"bodies": False}}, log=url)
    client.complete("mock:echo", "a private prompt")
    assert client.call_log is not None and client.call_log.flush(30)
    [row] = all_rows(url)
    assert row["prompt"] is None and row["answer"] is None and row["options"] is None
    assert row["prompt_text"] is None and row["answer_text"] is None
    assert row["input_tokens"] == 3 and row["status"] == "ok"
    assert b"private prompt" not in b"".join(p.read_bytes() for p in tmp_path.glob("logs.db*"))


def test_item_1_the_config_and_environment_turn_the_library_log_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert llmplex.Client().call_log is None  # the library logs only when asked
    url = sqlite_url(tmp_path, "env.db")
    monkeypatch.setenv("LLMPLEX_LOG__ENABLED", "true")
    monkeypatch.setenv("LLMPLEX_LOG__DATABASE", url)
    client = llmplex.Client()
    assert client.call_log is not None and client.call_log.url == url
    client.complete("mock:echo", "from the environment")
    assert client.call_log.flush(30)
    assert [r["prompt_text"] for r in all_rows(url)] == ["from the environment"]
    assert llmplex.Client(log=False).call_log is None
    monkeypatch.setenv("LLMPLEX_LOG__DATABASE", "mysql://nope")
    with pytest.raises(llmplex.LLMConfigurationError, match="database"):
        llmplex.Client()


def test_item_1_the_default_database_is_in_the_user_data_directory(tmp_path: Path) -> None:
    assert default_url() == f"sqlite:///{tmp_path / 'xdg-data' / 'llmplex' / 'logs.db'}"


def test_item_1_sqlalchemy_loads_only_when_a_call_is_logged() -> None:
    code = (
        "import sys, llmplex\n"
        "print('sqlalchemy' in sys.modules)\n"
        "c = llmplex.Client(log='sqlite:///' + sys.argv[1])\n"
        "print('sqlalchemy' in sys.modules)\n"
        "c.complete('mock:echo', 'x'); c.call_log.flush(30)\n"
        "print('sqlalchemy' in sys.modules)\n"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        result = subprocess.run(
            [sys.executable, "-c", code, f"{folder}/l.db"], capture_output=True, text=True, check=True, timeout=120
        )
    assert result.stdout.split() == ["False", "False", "True"], result.stderr


def test_item_1_migrations_make_the_tables_once_with_wal(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    engine = open_database(url)
    open_database(url).dispose()  # idempotent
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 10_000
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
        tables = set(inspect(connection).get_table_names())
        assert {"calls", "virtual_keys", "calls_fts"} <= tables
        keys = {c["name"]: c for c in inspect(connection).get_columns("virtual_keys")}
        assert set(keys) == {
            "id", "name", "key_hash", "created_at", "expires_at", "revoked_at", "budget_usd",
            "budget_period_seconds", "rpm", "tpm", "max_parallel", "models", "metadata", "team",
        }  # fmt: skip
        assert keys["expires_at"]["nullable"] and not keys["name"]["nullable"]
        assert "key_name" in {c["name"] for c in inspect(connection).get_columns("calls")}
    engine.dispose()
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from llmplex.store import database

    config = Config()
    config.set_main_option("script_location", str(Path(database.__file__).with_name("migrations")))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD  # the shortcut names the real head


def test_item_1_the_async_engine_reads_the_same_database(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    client = _client(url)
    with call_context(key_name="team-a"):
        client.complete("mock:echo", "tagged")
    assert client.call_log is not None and client.call_log.flush(30)

    async def read() -> list[tuple[str, str]]:
        engine = async_engine(url)
        async with engine.connect() as connection:
            rows = (await connection.execute(text("SELECT prompt_text, key_name FROM calls"))).all()
        await engine.dispose()
        return [tuple(r) for r in rows]

    assert asyncio.run(read()) == [("tagged", "team-a")]


_WORKERS = """
import os, sys, time, traceback
from pathlib import Path
import llmplex  # imported once: each process forked below has it, and opens its own client and database
url, processes, count, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
warm_r, warm_w = os.pipe()
children = []
for index in range(processes):
    pid = os.fork()
    if pid == 0:
        os.close(warm_r)
        code, warm = 1, False
        try:
            client = llmplex.Client(log=url)
            client.complete("mock:echo", "warm-up %d" % index)
            os.write(warm_w, b"."); warm = True
            while not start.exists():
                time.sleep(0.01)
            for i in range(count):
                client.complete("mock:echo", "process %d call %d" % (index, i))
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            if not warm:
                os.write(warm_w, b".")
        sys.exit(code)  # a normal exit: the call log writes what is pending, as in any process
    children.append(pid)
os.close(warm_w)
warmed = 0
while warmed < processes:
    got = os.read(warm_r, processes)
    if not got:  # every process ended (one killed before its warm-up said so): the exit codes tell
        break
    warmed += len(got)
start.touch()  # every process is warm: they all log at the same time from here
failed = [pid for pid in children if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0]
sys.exit("processes failed: %s" % failed if failed else 0)
"""


def test_item_1_sixteen_processes_log_at_once_and_lose_nothing(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    script = tmp_path / "workers.py"
    script.write_text(_WORKERS)
    count = 40
    command = [sys.executable, str(script), url, "16", str(count), str(tmp_path / "start")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "locked" not in done.stderr and "warning" not in done.stderr.lower(), done.stderr
    prompts = [r["prompt_text"] for r in all_rows(url)]
    expected = {f"process {p} call {i}" for p in range(16) for i in range(count)}
    assert len(prompts) == 16 * (count + 1)
    assert expected <= set(prompts) and len(set(prompts)) == len(prompts)


def _answers_and_warns(url: str) -> list[str]:
    """Make a call logged to ``url``: it must answer; returns the call log's warnings."""
    import warnings

    writer = CallWriter(url)
    client = llmplex.Client(log=CallLog(url, writer=writer))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert client.complete("mock:echo", "still answered").text == "still answered"
        assert writer.flush(60)
    assert writer.written == 0 and writer.dropped == 1
    return [str(w.message) for w in caught if w.category.__name__ == "CallLogWarning"]


def test_item_1_a_directory_or_fifo_where_the_database_should_be_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    [warning] = _answers_and_warns(sqlite_url(tmp_path, "dir.db"))
    assert "not a regular file" in warning and "succeeded" in warning
    import os

    os.mkfifo(tmp_path / "fifo.db")
    [warning] = _answers_and_warns(sqlite_url(tmp_path, "fifo.db"))
    assert "not a regular file" in warning


def test_item_1_an_unwritable_or_corrupt_target_is_a_warning(tmp_path: Path) -> None:
    [warning] = _answers_and_warns("sqlite:////proc/llmplex-calllog/logs.db")  # read-only, even for root
    assert "could not write 1 call" in warning
    (tmp_path / "corrupt.db").write_bytes(b"this is not a database file" * 100)
    [warning] = _answers_and_warns(sqlite_url(tmp_path, "corrupt.db"))
    assert "not a database" in warning


_FULL_DISK = """
import resource, signal, sys, warnings
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
import llmplex
from llmplex.store import open_database
open_database(sys.argv[1]).dispose()  # the schema fits
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))  # the disk is full from here
client = llmplex.Client(log=sys.argv[1])
for i in range(20):
    assert client.complete("mock:echo", ("long prompt %d " % i) * 2000).text.startswith("long prompt")
client.call_log.flush(60)
print("answered", client.call_log.writer.written, client.call_log.writer.dropped)
"""


def test_item_1_a_full_disk_is_a_warning_and_every_answer_returns(tmp_path: Path) -> None:
    command = [sys.executable, "-c", _FULL_DISK, sqlite_url(tmp_path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    answered, written, dropped = result.stdout.split()
    assert answered == "answered" and int(dropped) > 0 and int(written) + int(dropped) == 20
    assert "CallLogWarning" in result.stderr and "could not write" in result.stderr


def test_item_1_a_locked_database_never_slows_or_fails_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    url = sqlite_url(tmp_path)
    open_database(url).dispose()
    monkeypatch.setattr("llmplex.store.database.BUSY_TIMEOUT", 3.0)
    holder = sqlite3.connect(tmp_path / "logs.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    writer = CallWriter(url)
    client = llmplex.Client(log=CallLog(url, writer=writer))
    started = time.monotonic()
    assert client.complete("mock:echo", "while locked").text == "while locked"
    assert time.monotonic() - started < 2.0  # the call did not wait for the lock
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert writer.flush(60)
    assert any("locked" in str(w.message) for w in caught) and writer.dropped == 1
    holder.execute("ROLLBACK")
    holder.close()
    client.complete("mock:echo", "after the lock")
    assert writer.flush(60)
    assert [r["prompt_text"] for r in all_rows(url)] == ["after the lock"]


def test_item_1_rows_are_built_off_the_calling_thread_and_a_bad_one_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import warnings

    from llmplex.store import recorder

    threads: list[str] = []
    real = recorder.call_row

    def spying(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread().name)
        if len(threads) == 2:
            raise ValueError("a value the log cannot hold")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(recorder, "call_row", spying)
    url = sqlite_url(tmp_path)
    writer = CallWriter(url)
    client = llmplex.Client(log=CallLog(url, writer=writer))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert client.complete("mock:echo", "first").text == "first"
        assert client.complete("mock:echo", "second").text == "second"  # its row fails: the answer does not
        assert writer.flush(30)
    assert threads == ["llmplex-call-log", "llmplex-call-log"]
    assert any("could not record a call: ValueError" in str(w.message) for w in caught)
    assert [r["prompt_text"] for r in all_rows(url)] == ["first"] and writer.dropped == 1


def test_item_1_a_hostile_answer_neither_fails_the_call_nor_takes_its_batch_along(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    writer = CallWriter(url)
    client = llmplex.Client(log=CallLog(url, writer=writer))
    backend = client.provider_client("mock")
    backend.push("lone \ud800 surrogate")  # what a hostile server's "\\ud800" decodes to
    backend.push("x" * 2_000_000)  # a 2 MB answer
    assert client.complete("mock:echo", "one").text == "lone \ud800 surrogate"  # returned as the provider sent it
    assert len(client.complete("mock:echo", "two").text) == 2_000_000
    client.complete("mock:echo", "three")
    assert writer.flush(60)
    rows = all_rows(url)
    assert [r["prompt_text"] for r in rows] == ["one", "two", "three"]
    assert rows[0]["answer_text"] == "lone \ufffd\ufffd\ufffd surrogate" and len(rows[1]["answer_text"]) == 2_000_000


def test_item_1_one_row_the_database_refuses_is_dropped_alone(tmp_path: Path) -> None:
    from datetime import datetime

    url = sqlite_url(tmp_path)
    writer = CallWriter(url)
    good = {"created_at": datetime(2026, 1, 1), "model_asked": "m", "provider": "p", "model": "m", "status": "ok"}
    writer.submit({**good, "prompt_text": "first", "cached": False})
    writer.submit({**good, "prompt_text": "refused", "cached": False, "options": {"not": object()}})  # not JSON
    writer.submit({**good, "prompt_text": "third", "cached": False})
    with pytest.warns(CallLogWarning, match="not JSON serializable"):
        assert writer.flush(60)
    assert [r["prompt_text"] for r in all_rows(url)] == ["first", "third"]
    assert (writer.written, writer.dropped) == (2, 1)


def test_item_1_the_cli_answers_with_one_warning_line_when_the_log_cannot_be_written(tmp_path: Path) -> None:
    from tests.support.cli import run_llmplex

    (tmp_path / "taken.db").mkdir()
    env = {"LLMPLEX_LOG__DATABASE": sqlite_url(tmp_path, "taken.db")}
    done = run_llmplex("complete", "-m", "mock:echo", "answer me anyway", cwd=tmp_path, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "answer me anyway"
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "not a regular file" in warnings[0], done.stderr
    assert "Traceback" not in done.stderr


def test_item_1_a_forked_child_logs_its_own_calls_once(tmp_path: Path) -> None:
    import os

    url = sqlite_url(tmp_path)
    writer = CallWriter(url)
    client = llmplex.Client(log=CallLog(url, writer=writer))
    client.complete("mock:echo", "parent before")
    pid = os.fork()
    if pid == 0:  # the child: its own writer thread, none of the parent's pending rows
        code = 1
        try:
            client.complete("mock:echo", "child")
            code = 0 if writer.flush(60) and writer.written == 1 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    client.complete("mock:echo", "parent after")
    assert writer.flush(60)
    assert sorted(r["prompt_text"] for r in all_rows(url)) == ["child", "parent after", "parent before"]
