"""weakincentives' prompts, as much as ``evaluate`` needs: templates of markdown sections, params, tools, output type.

template = PromptTemplate[Answer](ns="demo", key="qa", name="qa", sections=(
    MarkdownSection[Question](title="Task", key="task", template="Answer: ${text}"),
))
prompt = Prompt(template).bind(Question(text="2 + 2?"))
prompt.render().text   # "## 1. Task (task)\\n\\nAnswer: 2 + 2?"
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from string import Template
from types import TracebackType
from typing import Any, ClassVar, Generic, Literal, TypeVar, get_args, get_origin

from llmplex.compat.weakincentives.errors import PromptRenderError, PromptValidationError
from llmplex.compat.weakincentives.tools import Tool

__all__ = [
    "MarkdownSection",
    "Prompt",
    "PromptResources",
    "PromptTemplate",
    "RenderedPrompt",
    "Section",
    "SectionNode",
    "StructuredOutputConfig",
]

OutputT = TypeVar("OutputT")
ParamsT = TypeVar("ParamsT")
_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def _key(key: str, owner: str) -> str:
    normalized = key.strip().lower() if isinstance(key, str) else ""
    if not _KEY.match(normalized):
        raise PromptValidationError(f"{owner} key must match {_KEY.pattern}, got {key!r}")
    return normalized


class Section(Generic[ParamsT]):
    """A block of the prompt with a title, a key, optional params, child sections and tools."""

    params_type: ClassVar[type[Any] | None] = None

    def __class_getitem__(cls, item: Any) -> Any:
        if isinstance(item, TypeVar):
            return cls  # a generic subclass being declared
        if isinstance(item, tuple):
            raise TypeError(f"{cls.__name__}[...] expects a single params dataclass")
        return type(cls.__name__, (cls,), {"params_type": item, "__module__": cls.__module__})

    def __init__(
        self,
        *,
        title: str,
        key: str,
        default_params: Any = None,
        children: Sequence[Section[Any]] | None = None,
        enabled: Callable[..., bool] | None = None,
        tools: Sequence[Tool[Any, Any]] | None = None,
        accepts_overrides: bool = True,
        summary: str | None = None,
        visibility: Any = None,
    ) -> None:
        if self.params_type is None and default_params is not None:
            raise PromptValidationError("a section without a params type cannot have default_params")
        self.title = title
        self.key = _key(key, "Section")
        self.default_params = default_params
        self.children = tuple(children or ())
        if not all(isinstance(child, Section) for child in self.children):
            raise PromptValidationError("Section children must be Section instances")
        self._enabled = enabled
        self._tools = tuple(tools or ())
        if not all(isinstance(tool, Tool) for tool in self._tools):
            raise PromptValidationError("Section tools must be Tool instances")
        self.accepts_overrides = accepts_overrides
        self.summary = summary
        shown = getattr(visibility, "value", visibility)
        if shown is not None and str(shown).lower() != "full":
            raise PromptValidationError(
                f"Section {key!r}: visibility {shown!r} (progressive disclosure) is not supported by "
                "llmplex.compat.weakincentives; keep weakincentives' own prompts for it (llmplex's adapters take them)"
            )

    def tools(self) -> tuple[Tool[Any, Any], ...]:
        """The tools this section offers the model."""
        return self._tools

    def is_enabled(self, params: Any) -> bool:
        """Whether the section (and its children) render for ``params``."""
        if self._enabled is None:
            return True
        return bool(self._enabled(params) if self.params_type is not None else self._enabled())

    def format_heading(self, depth: int, number: str, path: tuple[str, ...] = ()) -> str:
        """``## 1. Title (key)``, one more ``#`` per level of nesting."""
        title = self.title.strip()
        if path:
            title = f"{title} ({'.'.join(path)})"
        return f"{'#' * (depth + 2)} {number.rstrip('.')}. {title}"

    def render_body(self, params: Any) -> str:
        """The section's text without its heading."""
        return ""

    def render(self, params: Any, depth: int, number: str, *, path: tuple[str, ...] = ()) -> str:
        """Heading and body."""
        heading = self.format_heading(depth, number, path)
        body = self.render_body(params)
        return f"{heading}\n\n{body}" if body else heading


class MarkdownSection(Section[ParamsT]):
    """A section whose body is a ``string.Template``: ``${field}`` takes the params dataclass's field."""

    def __init__(self, *, title: str, template: str, key: str, **options: Any) -> None:
        self.template = template
        super().__init__(title=title, key=key, **options)

    def render_body(self, params: Any) -> str:
        """The template with the params' fields substituted (dedented and stripped)."""
        values: dict[str, Any] = {}
        if params is not None:
            if not dataclasses.is_dataclass(params) or isinstance(params, type):
                raise PromptRenderError("Section params must be a dataclass instance.", dataclass_type=type(params))
            values = {item.name: getattr(params, item.name) for item in dataclasses.fields(params)}
        try:
            return Template(textwrap.dedent(self.template).strip()).substitute(values).strip()
        except KeyError as error:
            raise PromptRenderError(
                f"Missing placeholder during render: {error.args[0]}", placeholder=str(error.args[0])
            ) from None
        except ValueError as error:
            raise PromptRenderError(f"Invalid placeholder in section template: {error}") from None


@dataclass(frozen=True)
class SectionNode:
    """A section as placed in a template: depth, key path and number (``"1.2"``)."""

    section: Section[Any]
    depth: int
    path: tuple[str, ...]
    number: str


@dataclass(frozen=True)
class StructuredOutputConfig:
    """The output a prompt declares: a dataclass, one object or an array of them."""

    dataclass_type: type[Any]
    container: Literal["object", "array"] = "object"
    allow_extra_keys: bool = False


def _flatten(sections: Sequence[Section[Any]]) -> tuple[SectionNode, ...]:
    nodes: list[SectionNode] = []

    def walk(items: Sequence[Section[Any]], depth: int, parent: tuple[str, ...], prefix: str) -> None:
        for index, section in enumerate(items, 1):
            number = f"{prefix}{index}"
            path = (*parent, section.key)
            nodes.append(SectionNode(section, depth, path, number))
            walk(section.children, depth + 1, path, f"{number}.")

    walk(sections, 0, (), "")
    return tuple(nodes)


class PromptTemplate(Generic[OutputT]):
    """Sections under a namespace and key; ``PromptTemplate[Out]`` declares structured output of dataclass ``Out``.

    ``PromptTemplate[list[Out]]`` declares an array of ``Out``.
    """

    _output_spec: ClassVar[Any] = None

    def __class_getitem__(cls, item: Any) -> Any:
        if isinstance(item, TypeVar):
            return cls
        return type(f"{cls.__name__}[{getattr(item, '__name__', item)}]", (cls,), {"_output_spec": item})

    def __init__(
        self,
        ns: str,
        key: str,
        name: str | None = None,
        sections: Sequence[Section[Any]] = (),
        allow_extra_keys: bool = False,
        resources: Mapping[type[Any], Any] | None = None,
    ) -> None:
        if not isinstance(ns, str) or not ns.strip():
            raise PromptValidationError("Prompt namespace must be a non-empty string.")
        if not isinstance(key, str) or not key.strip():
            raise PromptValidationError("Prompt key must be a non-empty string.")
        self.ns = ns.strip()
        self.key = key.strip()
        self.name = name
        self.allow_extra_keys = allow_extra_keys
        self.resources: dict[type[Any], Any] = dict(resources or {})
        self.nodes = _flatten(tuple(sections))
        self.sections = tuple(sections)
        self.structured_output = self._output(allow_extra_keys)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ns={self.ns!r}, key={self.key!r}, name={self.name!r})"

    def _output(self, allow_extra_keys: bool) -> StructuredOutputConfig | None:
        spec = self._output_spec
        if spec is None:
            return None
        container: Literal["object", "array"] = "object"
        if get_origin(spec) is list:
            (spec,) = get_args(spec) or (None,)
            container = "array"
        if not (isinstance(spec, type) and dataclasses.is_dataclass(spec)):
            raise PromptValidationError(f"Prompt output type must be a dataclass, got {spec!r}")
        return StructuredOutputConfig(spec, container, allow_extra_keys)

    @property
    def params_types(self) -> set[type[Any]]:
        """The params dataclasses the sections take."""
        return {node.section.params_type for node in self.nodes if node.section.params_type is not None}


@dataclass(frozen=True)
class RenderedPrompt(Generic[OutputT]):
    """The rendered markdown, the tools of the enabled sections and the declared output."""

    text: str
    structured_output: StructuredOutputConfig | None = None
    tools: tuple[Tool[Any, Any], ...] = ()

    def __str__(self) -> str:
        return self.text

    @property
    def output_type(self) -> type[Any] | None:
        """The output dataclass, if the prompt declares one."""
        return None if self.structured_output is None else self.structured_output.dataclass_type

    @property
    def container(self) -> Literal["object", "array"] | None:
        """``"object"`` or ``"array"`` when the prompt declares output."""
        return None if self.structured_output is None else self.structured_output.container


class PromptResources:
    """The resources bound to a prompt: ``with prompt.resources: prompt.resources.get(Type)``."""

    def __init__(self, prompt: Prompt[Any]) -> None:
        self._prompt = prompt

    def __enter__(self) -> PromptResources:
        self._prompt._resource_depth += 1
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._prompt._resource_depth -= 1

    def get(self, kind: type[Any]) -> Any:
        """The resource bound for ``kind``; only inside ``with prompt.resources:``."""
        if self._prompt._resource_depth <= 0:
            raise RuntimeError("prompt resources are only available inside 'with prompt.resources:'")
        try:
            return self._prompt._resources[kind]
        except KeyError:
            raise LookupError(f"no resource bound for {getattr(kind, '__name__', kind)}") from None


class Prompt(Generic[OutputT]):
    """A template with its params bound: ``Prompt(template).bind(Params(...))``; ``render()`` makes the text."""

    def __init__(
        self, template: PromptTemplate[OutputT], overrides_store: Any = None, overrides_tag: str = "latest"
    ) -> None:
        self.template = template
        self.ns = template.ns
        self.key = template.key
        self.name = template.name
        self.overrides_store = overrides_store
        self.overrides_tag = overrides_tag
        self._params: tuple[Any, ...] = ()
        self._resources: dict[type[Any], Any] = dict(template.resources)
        self._resource_depth = 0

    def __repr__(self) -> str:
        return f"Prompt({self.template!r}, params={self._params!r})"

    @property
    def params(self) -> tuple[Any, ...]:
        """The bound params dataclasses."""
        return self._params

    @property
    def structured_output(self) -> StructuredOutputConfig | None:
        """The template's declared output."""
        return self.template.structured_output

    @property
    def resources(self) -> PromptResources:
        """The bound resources, usable inside ``with prompt.resources:``."""
        return PromptResources(self)

    def bind(self, *params: Any, resources: Mapping[type[Any], Any] | None = None) -> Prompt[OutputT]:
        """Bind params (replacing an earlier one of the same type) and resources; returns this prompt."""
        current = list(self._params)
        for value in params:
            same = [i for i, old in enumerate(current) if type(old) is type(value)]
            if same:
                current[same[0]] = value
            else:
                current.append(value)
        self._params = tuple(current)
        self._resources.update(resources or {})
        return self

    def render(self, *, session: Any = None) -> RenderedPrompt[OutputT]:
        """The markdown of the enabled sections, in order, with their tools."""
        lookup = self._lookup()
        parts: list[str] = []
        tools: list[Tool[Any, Any]] = []
        for node, params in self._enabled(lookup):
            parts.append(self._render_node(node, params))
            tools.extend(node.section.tools())
        return RenderedPrompt("\n\n".join(parts), self.template.structured_output, tuple(tools))

    def _lookup(self) -> dict[type[Any], Any]:
        lookup: dict[type[Any], Any] = {}
        expected = self.template.params_types
        for value in self._params:
            kind = type(value)
            if isinstance(value, type) or not dataclasses.is_dataclass(value):
                raise PromptValidationError(f"Prompt expects dataclass instances, got {kind.__name__}")
            if kind not in expected:
                raise PromptValidationError(f"Unexpected params type supplied to prompt: {kind.__name__}")
            lookup[kind] = value
        return lookup

    def _enabled(self, lookup: dict[type[Any], Any]) -> Iterator[tuple[SectionNode, Any]]:
        skip_below: int | None = None
        for node in self.template.nodes:
            if skip_below is not None and node.depth > skip_below:
                continue
            skip_below = None
            params = self._params_for(node, lookup)
            if not node.section.is_enabled(params):
                skip_below = node.depth
                continue
            yield node, params

    def _params_for(self, node: SectionNode, lookup: dict[type[Any], Any]) -> Any:
        kind = node.section.params_type
        if kind is None:
            return None
        if kind in lookup:
            return lookup[kind]
        if node.section.default_params is not None:
            return node.section.default_params
        try:
            return kind()
        except TypeError:
            raise PromptRenderError(
                f"Missing parameters for section {'.'.join(node.path)!r}: bind a {kind.__name__}",
                section_path=node.path,
                dataclass_type=kind,
            ) from None

    def _render_node(self, node: SectionNode, params: Any) -> str:
        try:
            return node.section.render(params, node.depth, node.number, path=node.path)
        except PromptRenderError as error:
            raise PromptRenderError(
                error.message,
                section_path=node.path,
                dataclass_type=node.section.params_type,
                placeholder=error.placeholder,
                prompt_name=self.name or "",
            ) from None
