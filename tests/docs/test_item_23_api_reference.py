"""Issue 12 item 23: the Python API reference renders every public function and class of ``llmplex``,
the module-level ``complete``/``acomplete``/``stream``/``astream`` (and ``abatch``/``batch``) first."""

from __future__ import annotations

import importlib
import inspect
import re
from types import ModuleType
from typing import Any

import llmplex
from tests.docs.markdown import DOCS

MODULE_FUNCTIONS = ("complete", "acomplete", "stream", "astream", "abatch", "batch", "default_client")


def resolve(target: str) -> Any:
    """What a ``::: dotted.path`` directive renders (mkdocstrings' identifiers are import paths)."""
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError:
        module, _, name = target.rpartition(".")
        return getattr(resolve(module), name)


def rendered(pages: list[str]) -> list[Any]:
    """Every object the ``:::`` directives of ``pages`` render; a module renders its own classes and functions."""
    found: list[Any] = []
    for page in pages:
        for target in re.findall(r"^::: ([\w.]+)\s*$", (DOCS / page).read_text(encoding="utf-8"), re.M):
            obj = resolve(target)
            found.append(obj)
            if isinstance(obj, ModuleType):
                found += [v for v in vars(obj).values() if getattr(v, "__module__", None) == obj.__name__]
    return found


def test_item_23_the_python_api_page_renders_the_module_functions() -> None:
    shown = rendered(["reference/api.md"])
    missing = [name for name in MODULE_FUNCTIONS if not any(obj is getattr(llmplex, name) for obj in shown)]
    assert not missing, f"add ::: llmplex.<name> for {missing} to docs/reference/api.md"


def test_item_23_every_public_function_and_class_is_in_a_reference_page() -> None:
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "examples" not in p.parts)
    shown = rendered(pages)
    public = {name: getattr(llmplex, name) for name in llmplex.__all__}
    missing = [
        name
        for name, obj in public.items()
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not any(o is obj for o in shown)
    ]
    assert not missing, f"render {missing} in the API reference (docs/reference/api.md)"
