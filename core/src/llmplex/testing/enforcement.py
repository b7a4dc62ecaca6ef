"""Conformance cannot be dropped quietly: a standard test is run, or visibly xfailed with a reason.

Two checks: when a test class subclasses the kit (an override or deletion of a
standard test without ``pytest.mark.xfail(reason=...)``, ``__test__ = False``, a
class-level skip) and, in the pytest plugin, after collection (skip marks from
decorators or the module).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

__all__ = ["ConformanceError", "check_subclass", "has_xfail_reason", "is_skip_mark", "standard_tests"]


class ConformanceError(TypeError):
    """A test class drops or weakens a standard conformance test."""


def standard_tests(base: type) -> list[str]:
    """Names of the standard tests the kit defines (on ``base`` and the check classes it is made of)."""
    names: dict[str, None] = {}
    for cls in reversed(base.__mro__):
        names.update((name, None) for name, value in vars(cls).items() if name.startswith("test_") and callable(value))
    return list(names)


def _as_list(marks: Any) -> list[Any]:
    return list(marks) if isinstance(marks, Iterable) else [marks]


def _marks(obj: Any) -> list[Any]:
    return _as_list(getattr(obj, "pytestmark", []))


def has_xfail_reason(obj: Any) -> bool:
    """Whether ``obj`` carries ``pytest.mark.xfail`` with a non-empty ``reason``."""
    return any(getattr(m, "name", None) == "xfail" and m.kwargs.get("reason") for m in _marks(obj))


def is_skip_mark(mark: Any) -> bool:
    """``skip`` and ``skipif`` marks drop a test without it failing."""
    return getattr(mark, "name", None) in ("skip", "skipif")


def check_subclass(cls: type, base: type) -> None:
    """Raise ``ConformanceError`` when ``cls`` drops or weakens a standard test of ``base``."""
    problems = []
    if vars(cls).get("__test__", True) is False:
        problems.append("sets __test__ = False")
    if any(is_skip_mark(m) for m in _as_list(vars(cls).get("pytestmark", []))):
        problems.append("skips the whole class")
    for name in standard_tests(base):
        own = getattr(cls, name, None)
        standard = getattr(base, name)
        if own is standard:
            continue
        if not inspect.isfunction(own):
            problems.append(f"deletes {name}")
        elif any(is_skip_mark(m) for m in _marks(own)):
            problems.append(f"skips {name}")
        elif not has_xfail_reason(own):
            problems.append(f"overrides {name} without @pytest.mark.xfail(reason=...)")
    if problems:
        raise ConformanceError(
            f"{cls.__module__}.{cls.__qualname__} {'; '.join(problems)}. Standard conformance tests may only "
            "be replaced by a new function marked @pytest.mark.xfail(reason='why the provider cannot pass')."
        )
