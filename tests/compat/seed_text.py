"""Read the seed documents copied into tests/compat/seeds: their Python blocks (classes, fields, signatures)
and their Markdown tables, so that tests compare llmplex.compat with the specification itself."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

__all__ = ["SeedField", "annotation_matches", "compat_fields", "seed", "seed_classes", "seed_functions", "table"]

SEEDS = Path(__file__).parent / "seeds"
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


@dataclasses.dataclass(frozen=True)
class SeedField:
    """One field of a class as the seed writes it."""

    name: str
    annotation: str
    default: str | None  # the default's source, None when the field has none


def seed(name: str) -> str:
    """The text of ``tests/compat/seeds/<name>``, without its provenance header."""
    text = (SEEDS / name).read_text(encoding="utf-8")
    return text.split("# ----\n", 1)[1]


def _trees(text: str) -> list[ast.Module]:
    trees = []
    for block in _BLOCK.findall(text):
        try:
            trees.append(ast.parse(block))
        except SyntaxError:  # a block with prose or "..." bodies that do not parse as a module
            continue
    return trees


def seed_classes(text: str) -> dict[str, list[SeedField]]:
    """Each class the seed's Python blocks define, with its annotated fields in order."""
    classes: dict[str, list[SeedField]] = {}
    for tree in _trees(text):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = [
                    SeedField(
                        item.target.id,
                        ast.unparse(item.annotation),
                        None if item.value is None else ast.unparse(item.value),
                    )
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                ]
    return classes


def seed_functions(text: str) -> dict[str, list[tuple[str, str | None]]]:
    """``Class.method`` (or ``function``) -> its parameters as ``(name, default source)``, ``self`` left out."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    for tree in _trees(text):
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    arguments = [*item.args.posonlyargs, *item.args.args, *item.args.kwonlyargs]
                    defaults: list[ast.expr | None] = [None] * (
                        len(item.args.posonlyargs) + len(item.args.args) - len(item.args.defaults)
                    )
                    defaults += [*item.args.defaults, *item.args.kw_defaults]
                    found[f"{node.name}.{item.name}"] = [
                        (a.arg, None if d is None else ast.unparse(d))
                        for a, d in zip(arguments, defaults, strict=True)
                        if a.arg != "self"
                    ]
    return found


def table(text: str, first_header: str, occurrence: int = 0) -> list[dict[str, str]]:
    """The rows of the ``occurrence``-th Markdown table whose first header cell is ``first_header``
    (cells without backticks)."""
    lines = text.splitlines()
    seen = -1
    for index, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and cells[0] == first_header:
            seen += 1
            if seen < occurrence:
                continue
            rows = []
            for row in lines[index + 1 :]:
                if not row.lstrip().startswith("|"):
                    break
                values = [c.strip().replace("`", "") for c in row.strip().strip("|").split("|")]
                if not any(values) or set("".join(values)) <= {"-", " "}:
                    continue  # a separator, or a bare "|" the seed's formatting left between rows
                rows.append(dict(zip(cells, values, strict=False)))
            return rows
    raise LookupError(f"no table headed {first_header!r}")


def compat_fields(cls: type[Any]) -> list[SeedField]:
    """A compat dataclass's fields in the seed's terms (annotation as written, default as source)."""
    result = []
    for item in dataclasses.fields(cls):
        if item.default is not dataclasses.MISSING:
            default: str | None = repr(item.default)
        elif item.default_factory is not dataclasses.MISSING:
            default = repr(item.default_factory())
        else:
            default = None
        annotation = item.type if isinstance(item.type, str) else getattr(item.type, "__name__", str(item.type))
        result.append(SeedField(item.name, ast.unparse(ast.parse(annotation)), default))
    return result


def annotation_matches(seed_annotation: str, ours: str) -> bool:
    """Equal, or the seed's bare ``dict``/``list`` written out with parameters in ours."""
    if seed_annotation == ours:
        return True
    return seed_annotation in ("dict", "list") and ours.startswith(f"{seed_annotation}[")
