"""`import llmplex` stays light: no pydantic, no plugin, no provider SDK until used."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "pydantic",
    "openai",
    "anthropic",
    "google.genai",
    "litellm",
    "llmplex_testplugins",
    "llmplex.client",
    "rich",
    "limits",
    "redis",
    "sqlalchemy",
    "alembic",
)


def test_import_llmplex_loads_nothing_heavy() -> None:
    code = f"import sys, llmplex; print([m for m in {HEAVY!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_using_mock_imports_no_other_plugin_or_sdk() -> None:
    others = ("openai", "anthropic", "google.genai", "litellm", "llmplex_testplugins.good", "limits", "redis")
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


def test_the_three_name_lists_of_the_package_agree() -> None:
    """``__init__`` lists each public name three times (typing imports, lazy map, ``__all__``): keep them equal."""
    import ast
    import inspect

    import llmplex

    tree = ast.parse(inspect.getsource(llmplex))
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    typed = {
        (alias.name, node.module)
        for node in guarded.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("llmplex")
        for alias in node.names
    }
    defined = (ast.FunctionDef, ast.AsyncFunctionDef)
    functions = {n.name for n in tree.body if isinstance(n, defined) and not n.name.startswith("_")}
    assert functions >= {"acomplete", "astream", "complete", "default_client", "stream", "tool_declarations"}
    assert set(llmplex.__all__) == set(llmplex._LAZY) | functions
    assert {(name, module) for name, module in typed if name in llmplex._LAZY} == set(llmplex._LAZY.items())
