"""Docstrings are Markdown: mkdocstrings renders a Sphinx role (``:class:`X```) as raw text, so none may appear.

Every string statement of core, the plugins and the example plugin the docs show is checked: module,
class and function docstrings and the attribute docstrings under assignments, which mkdocstrings renders too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPHINX_ROLE = re.compile(r"(?<![\w:]):(?:py:)?(?:class|func|mod|meth|attr|exc|data|obj|const|ref):`")


def _docstrings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        (node.lineno, node.value.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    ]


def test_no_docstring_of_core_or_a_plugin_uses_a_sphinx_role() -> None:
    sources = [*ROOT.glob("core/src/**/*.py"), *ROOT.glob("plugins/*/src/**/*.py"), *ROOT.glob("docs/examples/**/*.py")]
    assert len(sources) > 100
    found = [
        f"{path.relative_to(ROOT)}:{line}: {SPHINX_ROLE.search(text).group(0)}"  # type: ignore[union-attr]
        for path in sources
        for line, text in _docstrings(path)
        if SPHINX_ROLE.search(text)
    ]
    assert not found, "write `name` or [name][] instead of a Sphinx role:\n" + "\n".join(found)


def test_the_check_finds_a_sphinx_role(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""See :class:`~llmplex.types.Usage`."""\nX = 1\n"""Set by :func:`f`; `g` is fine."""\n')
    assert [SPHINX_ROLE.search(text) is not None for _, text in _docstrings(module)] == [True, True]
    assert SPHINX_ROLE.search("a TOML key such as `path:to` or ``:memory:``") is None
