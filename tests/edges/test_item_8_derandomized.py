"""Issue 21 item 8: one answer per run of the suite (derandomized property tests), and the kit's SSE writer
refusing what no event stream can carry with a typed error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmplex.errors import LLMConfigurationError
from llmplex.http import iter_sse
from llmplex.testing import sse

ROOT = Path(__file__).resolve().parents[2]


def test_item_8_the_loaded_hypothesis_profile_is_derandomized_without_a_database() -> None:
    assert os.environ.get("HYPOTHESIS_PROFILE", "derandomized") == "derandomized"
    assert settings().derandomize is True
    assert settings().database is None


_PROBE = """
from hypothesis import given, strategies as st
drawn = []

@given(st.text(min_size=1, max_size=30))
def test_probe(text):
    drawn.append(text)

def test_record():
    import pathlib, os
    pathlib.Path(os.environ["DRAWN"]).write_text(repr(drawn), encoding="utf-8")
"""


def test_item_8_two_runs_of_a_property_test_draw_the_same_examples(tmp_path: Path) -> None:
    """Two fresh pytest processes under the suite's conftest (CI=true and unset) draw identical examples."""
    probe_dir = ROOT / "tests" / "edges"
    probe = probe_dir / f"test_zz_probe_{os.getpid()}.py"
    probe.write_text(_PROBE, encoding="utf-8")
    drawn: list[str] = []
    try:
        for index, ci in enumerate(("true", None)):
            env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
            if ci is not None:
                env["CI"] = ci
            env["DRAWN"] = str(tmp_path / f"drawn{index}")
            ran = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(probe)],
                check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert ran.returncode == 0, ran.stdout + ran.stderr
            drawn.append((tmp_path / f"drawn{index}").read_text(encoding="utf-8"))
    finally:
        probe.unlink()
    assert drawn[0] == drawn[1] and drawn[0].count("'") > 10  # the same examples, and many of them


@pytest.mark.parametrize("event", ["bad\ud800name", "\udfff", "ok\udc80"])
def test_item_8_sse_writer_refuses_an_event_name_with_a_lone_surrogate(event: str) -> None:
    with pytest.raises(LLMConfigurationError, match="event name holds a lone surrogate"):
        sse({"a": 1}, event=event)


def test_item_8_sse_writer_refuses_data_with_a_lone_surrogate_and_names_with_line_breaks() -> None:
    with pytest.raises(LLMConfigurationError, match="the data holds a lone surrogate"):
        sse("text \ud83d alone", event="delta")
    for name in ("a\nb", "a\rb", "\r\n"):
        with pytest.raises(LLMConfigurationError, match="line break"):
            sse("x", event=name)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.one_of(st.none(), st.text(min_size=1)))
def test_item_8_sse_writer_on_any_text_reads_back_or_refuses_with_a_typed_error(data: str, event: str | None) -> None:
    """Any str (surrogates and line breaks included): the writer either round-trips or says why not."""
    text = data.replace("\r\n", "\n").replace("\r", "\n")
    try:
        written = sse(text, event=event)
    except LLMConfigurationError as exc:
        assert "lone surrogate" in str(exc) or "line break" in str(exc)
        return
    (parsed,) = list(iter_sse([written]))
    assert (parsed.data, parsed.event) == (text, event or "message")
