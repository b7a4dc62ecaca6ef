"""Issue 34 item 2: ``import llmplex`` stays ≤ 15 ms, so it imports almost nothing.

``typing`` (with ``re``, ``functools``, ``collections``, ``contextlib``) cost more than the rest of ``import
llmplex`` together: 17.7 ms above bare Python on the 2-core host, against under 3 ms without it. The package and the
module it imports at once read ``TYPE_CHECKING`` from a plain ``False`` (type checkers read any such name as true) and
load ``threading`` and ``importlib`` only when used.
"""

from __future__ import annotations

import subprocess
import sys

ALLOWED = {"llmplex", "llmplex.process_client", "__future__", "atexit", "math", "time"}
"""Every module ``import llmplex`` may add to a bare interpreter's: its own two and four small standard ones."""


def _modules_added_by(code: str) -> set[str]:
    probe = f"import sys; before = set(sys.modules); {code}; print(' '.join(sorted(set(sys.modules) - before)))"
    done = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_item_2_import_llmplex_adds_only_its_own_modules_and_four_small_standard_ones() -> None:
    added = _modules_added_by("import llmplex")
    assert added <= ALLOWED, f"import llmplex also loads {sorted(added - ALLOWED)}"
    assert "typing" not in added and "threading" not in added and "re" not in added


def test_item_2_the_lazy_names_and_the_default_client_still_load_on_first_use() -> None:
    added = _modules_added_by("import llmplex; llmplex.Usage; llmplex.default_client()")
    assert {"llmplex.types", "llmplex.client", "typing"} <= added
