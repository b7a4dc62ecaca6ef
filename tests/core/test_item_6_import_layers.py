"""Issue 14 item 6: core is laid out in layers without import cycles, and no module is over 500 lines.

The layers are import-linter contracts in the repository's pyproject.toml (``[tool.importlinter]``);
imports inside functions and under ``TYPE_CHECKING`` count as edges like any other.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "core" / "src", *sorted((ROOT / "plugins").glob("*/src"))]
PACKAGES = sorted(p.name for src in SOURCES for p in src.iterdir() if (p / "__init__.py").is_file())
MAX_LINES = 500
INSTALL = "the layer checks need import-linter (and grimp): uv pip install 'import-linter>=2.1'"


def _grimp() -> Any:
    try:
        import grimp
    except ModuleNotFoundError:  # pragma: no cover - says how to fix the environment
        raise AssertionError(INSTALL) from None
    return grimp


def test_item_6_the_layer_contracts_hold() -> None:
    """``lint-imports`` keeps every contract; a broken one is reported with the import chain that breaks it."""
    _grimp()
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, f"an import breaks the layers of core:\n{report}"
    assert "0 broken" in report, report


def _cycles(edges: dict[str, set[str]]) -> Iterator[list[str]]:
    """Every strongly connected component with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    yield sorted(component)


def test_item_6_no_import_cycle_among_core_and_plugin_modules() -> None:
    """No module reaches itself through imports, counting imports inside functions and under TYPE_CHECKING."""
    grimp = _grimp()
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False)
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    problems = []
    for component in _cycles(edges):
        lines = []
        for importer in component:
            for imported in sorted(edges[importer] & set(component)):
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    lines.append(f"  {importer}:{detail['line_number']} -> {imported}: {detail['line_contents']}")
        problems.append("cycle among " + ", ".join(component) + "\n" + "\n".join(lines))
    assert not problems, "import cycles (pass a callable or protocol down instead of importing up):\n" + "\n".join(
        problems
    )


def test_item_6_no_module_of_core_or_a_plugin_is_over_500_lines() -> None:
    too_long = {
        str(path.relative_to(ROOT)): count
        for src in SOURCES
        for path in sorted(src.rglob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not too_long, f"modules over {MAX_LINES} lines (split them by job): {too_long}"


def test_item_6_the_cycle_finder_finds_cycles() -> None:
    """The checker itself: a two-module cycle and a three-module one are found, a chain is not."""
    edges = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}, "g": set()}
    assert sorted(_cycles(edges)) == [["a", "b"], ["c", "d", "e"]]


def test_item_6_the_tool_loop_runs_on_a_send_callable_without_a_client() -> None:
    """Dependency inversion: the conversation gets ``send`` (one model call) from above and needs no Client."""
    from llmplex.engine.telemetry import Telemetry
    from llmplex.plugins.host import PluginHost
    from llmplex.provider import Capabilities
    from llmplex.tooling.conversation import Conversation
    from llmplex.types import Message, Response, ToolCall

    answers = iter(
        [Response(tool_calls=(ToolCall(id="c1", name="add", arguments='{"a": 1, "b": 2}'),)), Response(text="3")]
    )
    sent: list[list[Message]] = []

    class OneCall:
        def __init__(self, messages: list[Message]) -> None:
            sent.append(list(messages))
            self.answer = next(answers)

        def complete(self) -> Response:
            return self.answer

        def where(self) -> dict[str, str]:
            return {}

    def add(a: int, b: int) -> int:
        return a + b

    conversation = Conversation(
        Capabilities(),
        "what is 1 + 2?",
        {"tools": [add]},
        deadline=None,
        send=lambda messages, _args: OneCall(messages),  # type: ignore[arg-type,return-value]
        telemetry=Telemetry(PluginHost()),
    )
    assert conversation.run().text == "3"
    assert [m.role for m in sent[1]] == ["user", "assistant", "tool"] and sent[1][2].content == "3"
