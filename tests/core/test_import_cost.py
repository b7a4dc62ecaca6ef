"""`import llmplex` stays light: no pydantic, no plugin, no provider SDK until used."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pydantic", "openai", "anthropic", "google.genai", "litellm", "llmplex_testplugins", "llmplex.client", "rich")


def test_import_llmplex_loads_nothing_heavy() -> None:
    code = f"import sys, llmplex; print([m for m in {HEAVY!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_using_mock_imports_no_other_plugin_or_sdk() -> None:
    others = ("openai", "anthropic", "google.genai", "litellm", "llmplex_testplugins.good")
    code = (
        f"import sys, llmplex; llmplex.complete('mock:echo', 'x'); print([m for m in {others!r} if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_lazy_names_resolve_and_unknown_names_fail() -> None:
    import llmplex

    assert llmplex.Message.user("x").role == "user"
    assert "Client" in dir(llmplex)
    try:
        llmplex.DoesNotExist  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "DoesNotExist" in str(exc)
    else:
        raise AssertionError("unknown attribute did not raise")


def test_every_lazy_name_is_exported_and_resolves() -> None:
    import llmplex

    for name in llmplex.__all__:
        assert getattr(llmplex, name) is not None, name
