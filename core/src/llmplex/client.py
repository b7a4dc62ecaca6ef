"""The public entry point: a Client holds config, plugins and provider instances."""

from __future__ import annotations

import itertools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar, Unpack, cast

from llmplex.config.loader import load_config
from llmplex.config.schema import Config
from llmplex.engine.call_args import CallArgs, check_cache_args
from llmplex.engine.embedding import EmbedRun, embedding_route, embedding_texts
from llmplex.engine.fallback import Call, CallPlanner
from llmplex.engine.group_embedding import GroupEmbedRun, embedding_run
from llmplex.engine.models import ModelCatalog
from llmplex.engine.request_builder import PromptInput, ToolInput, build_request, build_tools, prompt_request
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMConfigurationError, LLMDeadlineExceededError
from llmplex.masking.logs import install_log_redaction
from llmplex.plugins.host import PluginHost
from llmplex.reliability.budget import Budget, BudgetTracker
from llmplex.reliability.clock import Clock
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import call_before
from llmplex.reliability.storage import opened_store
from llmplex.routing import ProviderInstance, Route, Router
from llmplex.types import Embeddings, Message, ModelInfo, OutputSchema, Request, Response, StreamEvent, Tool

if TYPE_CHECKING:
    from llmplex.mcp import MCPServer
    from llmplex.store.recorder import CallLog
    from llmplex.tooling.conversation import Conversation

__all__ = ["Client"]

T = TypeVar("T")

_request_ids = itertools.count(1)


def _tool_list(tools: Any) -> Any:
    """``tools=`` as a list: one tool, function, tool dict or MCP source (``server``, ``server.tools(...)``)
    is a list of one, another iterable its items; anything else raises LLMConfigurationError asking for a list."""
    if tools is None or isinstance(tools, (list, tuple)):
        return tools
    if "llmplex.mcp.server" in sys.modules:
        from llmplex.mcp import selection

        if selection.is_source(tools):
            return [tools]
    if isinstance(tools, (Tool, Mapping)) or callable(tools):
        return [tools]
    if isinstance(tools, Iterable) and not isinstance(tools, (str, bytes)):
        return list(tools)
    raise LLMConfigurationError(
        f"tools must be a list of tools (Tool objects, tool dicts, functions or MCP servers), "
        f"got {type(tools).__name__}: pass tools=[...]"
    )


_REQUEST_ARGS = frozenset({"system", "tools", "tool_choice", "provider_options", "previous_response_id"})
_CALL_ARGS = frozenset({"timeout", "deadline", "throttle", "budget", "fallbacks", "cache", "cache_key"})
_CONVERSATION_ARGS = frozenset({"output", "output_retries", "output_strategy", "max_tool_rounds", "tool_context"})
_NOT_OPTIONS = _REQUEST_ARGS | _CALL_ARGS | _CONVERSATION_ARGS


class Client:
    """One configured llmplex: ``Client(config=..., **overrides)``; ``with``/``async with`` closes it.

    ``config`` is a ``Config``, a mapping, or the path
    of a TOML file; ``log`` records every call in the call log (``True``, a database URL or a
    ``llmplex.store.CallLog``; default: ``[log] enabled``); keyword ``overrides`` (``default_model=...``,
    ``disabled=[...]``) win over every other source. ``plugins`` are extra
    in-process plugin objects (observers, pipeline wrappers). ``budget`` (a
    ``Budget`` or a shared ``BudgetTracker``)
    caps every call of this client, instead of the config's ``[budget]`` table.
    Creating a client masks secrets in every log record of the process
    (``llmplex.masking.logs``).
    """

    def __init__(
        self,
        config: Config | Mapping[str, Any] | str | Path | None = None,
        *,
        plugins: Sequence[object] = (),
        clock: Clock | None = None,
        budget: Budget | BudgetTracker | Mapping[str, int | None] | None = None,
        log: bool | str | CallLog | None = None,
        **overrides: Any,
    ) -> None:
        install_log_redaction()
        self.config, origins = load_config(config, overrides)
        self.host = PluginHost()
        self.clock = clock or Clock()
        self.router = Router(self.config, origins, self.host, clock=self.clock)
        self.telemetry = Telemetry(self.host)
        self.calls = CallPlanner(self.config, self.router, self.telemetry, self.clock, budget)
        self.catalog = ModelCatalog()
        self._mcp_servers: dict[str, MCPServer] = {}  # [mcp.servers.NAME], built on first use
        self._mcp_used: dict[int, MCPServer] = {}  # every MCP server a call used: closed with the client
        for plugin in plugins:
            self.host.register_observer(plugin)
        cache_module = sys.modules.get("llmplex.cache")  # imported already if a ResponseCache was built
        self._caches = self.config.cache is not None or any(
            cache_module is not None and isinstance(p, cache_module.ResponseCache) for p in plugins
        )
        if self.config.cache is not None:
            from llmplex.cache import ResponseCache

            self.host.register_observer(ResponseCache.from_config(self.config.cache), name="llmplex.cache")
        self.call_log: CallLog | None = None
        if (self.config.log.enabled is True) if log is None else (log is not False):
            self.attach_log(None if isinstance(log, bool) else log)

    def __repr__(self) -> str:
        return f"Client(default_model={self.config.default_model!r})"

    # -- lifecycle -------------------------------------------------------------------

    def close(self) -> None:
        """Close the providers' SDK clients and their connections (idempotent).

        Async clients of event loops running on other threads are closed there; those of
        the running loop once control returns to it (prefer ``await aclose()`` in async
        code). The client stays usable: a later call opens new connections. MCP servers its calls used
        are closed too (their processes end); a later call starts them again. So are the event loops'
        Redis clients of the ``[limits]`` storage.
        """
        for instance in self.router.instances():
            instance.clients.close()
        for server in self._mcp_used.values():
            server.close()
        store = opened_store(self.config.limits)
        if store is not None:
            store.close()

    async def aclose(self) -> None:
        """Close the providers' SDK clients, awaiting the async ones, and the MCP servers (see ``close``)."""
        for instance in self.router.instances():
            await instance.clients.aclose()
        for server in self._mcp_used.values():
            await server.aclose()
        store = opened_store(self.config.limits)
        if store is not None:
            await store.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def attach_log(self, log: str | CallLog | None = None) -> CallLog:
        """Record every call of this client in the call log (``llmplex.store``) and return the ``CallLog``.

        ``log``: a database URL or a ``CallLog``; by default the ``[log]`` database (``logs.db`` in the user
        data directory) and its ``bodies`` setting."""
        from llmplex.store.recorder import CallLog

        if not isinstance(log, CallLog):
            log = CallLog(log or self.config.log.database, bodies=self.config.log.bodies)
        if self.call_log is not None:
            self.host.unregister_observer(self.call_log)
        self.host.register_observer(log, name="llmplex.store")
        self.call_log = log
        return log

    # -- building blocks -------------------------------------------------------------

    def route(self, model: str | None = None) -> Route:
        """Where ``model`` (or the default model) would go."""
        return self.router.resolve(self.config.default_model if model is None else model)

    def build_request(
        self, model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]
    ) -> tuple[Route, Request]:
        """Where ``model`` goes and the validated Request a call with these arguments sends; nothing is sent.

        For code that sends requests another way, such as a provider's Batch API.
        """
        route = self.route(model)
        return route, _build_request(route.model, prompt, False, kwargs)

    def provider_client(self, prefix: str, asynchronous: bool = False) -> Any:
        """The SDK client (or the mock backend) a provider instance uses."""
        return self.router.instance(prefix).client(asynchronous)

    def tool_declarations(self, tools: Sequence[ToolInput], provider: str) -> list[dict[str, Any]]:
        """``tools`` declared in ``provider``'s own wire shape, one dict per tool, in order.

        ``tools`` are what ``complete(tools=...)`` takes (``Tool`` objects,
        ``{"name", "description", "parameters"}`` dicts, typed functions);
        ``provider`` is a prefix (``"openai"``, ``"gemini"``, a config instance)
        or a model string. The shape is the one the provider instance sends: an
        ``openai`` instance speaking Chat Completions nests ``function``, one on
        the Responses API does not.
        """
        instance = self._provider(provider)
        built = build_tools(tools)
        if not instance.capabilities.tools:
            raise LLMConfigurationError(f"provider {instance.name!r} does not support tools, so it has no declarations")
        if not instance.hooks.implements("tool_declarations"):
            raise LLMConfigurationError(
                f"provider {instance.name!r} (plugin {instance.plugin.entry.name!r}) does not implement "
                "llmplex_tool_declarations; upgrade the plugin or build its tool declarations yourself"
            )
        declared = instance.hooks.tool_declarations(tools=built, settings=instance.settings)
        return [dict(d) for d in declared]

    def mcp_server(self, name: str) -> MCPServer:
        """The MCP server of the config table ``[mcp.servers.NAME]``, for ``tools=`` (the same object each time)."""
        if name not in self._mcp_servers:
            table = self.config.mcp.servers.get(name)
            if table is None:
                known = ", ".join(sorted(self.config.mcp.servers)) or "none"
                raise LLMConfigurationError(
                    f"no MCP server named {name!r} in the config; add an [mcp.servers.{name}] table (has: {known})"
                )
            from llmplex.mcp import MCPServer

            self._mcp_servers[name] = MCPServer(table, name=name)
        return self._mcp_servers[name]

    def _mcp_call(self, args: CallArgs) -> tuple[Any, CallArgs, set[str]] | None:
        """For a call whose tools include MCP servers: the module that lists their tools, ``args`` with the
        call's deadline fixed (listing counts against it) and the local tools' names; else ``None``.
        The servers are kept, to close with the client. A single tool or tool source given as ``tools=``
        becomes a list of one."""
        if "tools" in args:
            args["tools"] = _tool_list(args["tools"])
        tools = args.get("tools")
        if not tools or "llmplex.mcp.server" not in sys.modules:  # imported already if a tool is an MCP server
            return None
        from llmplex.mcp import selection

        if not any(selection.is_source(tool) for tool in tools):
            return None
        for server in selection.servers_in(tools):
            self._mcp_used.setdefault(id(server), server)
        fixed = cast("CallArgs", {k: v for k, v in args.items() if k != "timeout"})
        fixed["deadline"] = self._deadline(args.get("timeout"), args.get("deadline"))
        local = {tool.name for tool in build_tools([tool for tool in tools if not selection.is_source(tool)])}
        return selection, fixed, local

    def _provider(self, provider: str) -> ProviderInstance:
        """The provider instance of a prefix, an alias or a model string."""
        if not isinstance(provider, str) or not provider.strip():
            raise LLMConfigurationError(f"provider must be a prefix such as 'openai', got {provider!r}")
        if ":" in provider or provider in self.config.aliases:
            return self.route(provider).provider
        return self.router.instance(provider)

    def _deadline(
        self, timeout: float | None, deadline: Deadline | None, since: float | None = None
    ) -> Deadline | None:
        """The call's deadline: ``deadline``, else ``timeout`` (or the config's) seconds from ``since`` or now."""
        if deadline is not None:
            if not isinstance(deadline, Deadline):
                raise LLMConfigurationError(
                    f"deadline must be an llmplex.Deadline such as Deadline.after(30), got {type(deadline).__name__} "
                    "(give seconds as timeout=...)"
                )
            return deadline
        seconds = timeout if timeout is not None else self.config.timeout
        if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0):
            raise LLMConfigurationError(f"timeout must be a positive number of seconds, got {seconds!r}")
        return Deadline.after(seconds, self.clock, since=since) if seconds is not None else None

    def _since(self, args: CallArgs, started: float) -> CallArgs:
        """``args`` with their deadline counted from ``started``, a call that began before this client existed."""
        if args.get("deadline") is not None:
            return args
        deadline = self._deadline(args.get("timeout"), None, started)
        return args if deadline is None else {**args, "deadline": deadline}

    def _used(self, model: str | None) -> bool:
        """Whether ``model`` was used before: its route is known and the observers are loaded."""
        return self.host.observers_loaded and self.router.is_cached(
            self.config.default_model if model is None else model
        )

    def _first_use(self, model: str | None, deadline: Deadline | None, prepare: Callable[[], T]) -> T:
        """``prepare()``, held to the deadline when ``model`` is used for the first time.

        A first use loads observers, the provider plugin and its SDK: seconds on a busy
        machine, which the deadline bounds like any I/O (the imports finish in the background).
        """
        if self._used(model):
            return prepare()
        written = self.config.default_model if model is None else model

        def expired() -> LLMDeadlineExceededError:
            return LLMDeadlineExceededError(
                f"deadline reached before the request could be sent, while loading the provider plugin for "
                f"{written!r} (a first call also imports the provider's SDK: allow it more time)",
                attempts=0,
            )

        return call_before(prepare, deadline, expired)

    def _ready(self) -> None:
        if not self.host.observers_loaded:
            self.host.load_observers(self.config.disabled)

    def _call(self, model: str | None, prompt: PromptInput, stream: bool, args: CallArgs) -> Call:
        deadline = self._deadline(args.get("timeout"), args.get("deadline"))
        if self._used(model):  # nothing to load: started here, no function made to hand to _first_use
            return self._start(model, prompt, stream, args, deadline)
        return self._first_use(model, deadline, partial(self._start, model, prompt, stream, args, deadline))

    def _start(
        self, model: str | None, prompt: PromptInput, stream: bool, args: CallArgs, deadline: Deadline | None
    ) -> Call:
        """The call of ``prompt`` to ``model``, ready to run (observers and the provider plugin loaded first)."""
        self._ready()
        check_cache_args(args, stream, self._caches)
        route = self.route(model)
        request = _build_request(route.model, prompt, stream, args)
        if self.config.prompt_cache is not None:  # prompt_cache = "auto" in config or Client(prompt_cache=...)
            request = request.model_copy(update={"prompt_cache": self.config.prompt_cache})
        written = self.config.default_model if model is None else model
        return self.calls.start(f"req-{next(_request_ids)}", written, route, request, deadline, args)

    def _conversation(self, model: str | None, prompt: PromptInput, args: CallArgs) -> Conversation:
        """The tool loop or structured output of one call, each of its rounds started through ``send``.

        One deadline holds every round; it starts before the first use loads plugins. The loop gets
        ``send`` and never imports the client (it sits in the layer below).
        """
        from llmplex.tooling.conversation import Conversation

        deadline = self._deadline(args.get("timeout"), args.get("deadline"))
        route = self._first_use(model, deadline, lambda: self.route(model))
        rest = {k: v for k, v in args.items() if k not in ("timeout", "deadline")}

        def send(messages: list[Message], round_args: CallArgs) -> Call:
            return self._call(model, messages, False, round_args)

        return Conversation(
            route.provider.capabilities, prompt, rest, deadline=deadline, send=send, telemetry=self.telemetry
        )

    # -- public calls ----------------------------------------------------------------

    def complete(self, model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> Response:
        """Send ``prompt`` to ``model`` (``"provider:model"``; ``None`` for the default) and return the answer.

        ``prompt`` is a string, a message, or a list of messages; see
        ``CallArgs`` for the keyword arguments; ``tools`` may include ``llmplex.MCPServer``s.
        """
        if kwargs and (mcp := self._mcp_call(kwargs)) is not None:  # no keyword arguments: no tools
            selection, kwargs, local = mcp
            kwargs["tools"] = selection.tools_for(kwargs["tools"], local, kwargs["deadline"])
        if kwargs and _wants_conversation(kwargs):
            return self._conversation(model, prompt, kwargs).run()
        return self._call(model, prompt, False, kwargs).complete()

    async def acomplete(self, model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> Response:
        """Async ``complete``."""
        return await self._answer(model, prompt, kwargs)

    def _answer(self, model: str | None, prompt: PromptInput, args: CallArgs) -> Awaitable[Response]:
        """``acomplete``'s answer, made in the caller's coroutine (no coroutine of the client's in between)."""
        if args and (mcp := self._mcp_call(args)) is not None:  # no keyword arguments: no tools
            return self._alisted(model, prompt, mcp)
        if args and _wants_conversation(args):
            return self._conversation(model, prompt, args).arun()
        return self._call(model, prompt, False, args).acomplete()

    async def _alisted(self, model: str | None, prompt: PromptInput, mcp: tuple[Any, CallArgs, set[str]]) -> Response:
        """``_answer`` once the MCP servers in its tools have listed theirs (as tools: none is listed again)."""
        selection, kwargs, local = mcp
        kwargs["tools"] = await selection.atools_for(kwargs["tools"], local, kwargs["deadline"])
        return await self._answer(model, prompt, kwargs)

    def stream(self, model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> Iterator[StreamEvent]:
        """Stream the answer: text deltas as they come, then a final ``response`` event (an MCP server in
        ``tools`` is listed first, within the call's deadline, and its tools are offered)."""
        if kwargs and (mcp := self._mcp_call(kwargs)) is not None:
            selection, kwargs, local = mcp
            kwargs["tools"] = selection.tools_for(kwargs["tools"], local, kwargs["deadline"])
        return self._call(model, prompt, True, kwargs).stream()

    def astream(self, model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> AsyncIterator[StreamEvent]:
        """Async ``stream``: ``async for event in client.astream(...)``."""
        if kwargs and (mcp := self._mcp_call(kwargs)) is not None:
            return self._astream_listing(model, prompt, mcp)
        return self._call(model, prompt, True, kwargs).astream()

    def stream_call(self, model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> Call:
        """``astream``'s call, not started, for a caller that charges a stream cut mid-way (the gateway): iterate
        ``call.astream()`` or ``call.stream()``, and read ``call.reported_so_far()``. An MCP server in ``tools``
        is not listed here: use ``astream``."""
        return self._call(model, prompt, True, kwargs)

    async def _astream_listing(
        self, model: str | None, prompt: PromptInput, mcp: tuple[Any, CallArgs, set[str]]
    ) -> AsyncIterator[StreamEvent]:
        """``astream`` once the MCP servers in its tools have listed theirs."""
        selection, kwargs, local = mcp
        kwargs["tools"] = await selection.atools_for(kwargs["tools"], local, kwargs["deadline"])
        async for event in self._call(model, prompt, True, kwargs).astream():
            yield event

    # -- embeddings and models -------------------------------------------------------

    def _embedding(
        self, model: str | None, texts: str | Sequence[str], args: dict[str, Any]
    ) -> EmbedRun | GroupEmbedRun:
        self._ready()
        unknown = set(args) - {"dimensions", "batch_size", "timeout", "deadline", "throttle", "budget"}
        if unknown:
            raise LLMConfigurationError(
                f"embed() got unknown keyword arguments {sorted(unknown)}; it takes dimensions, batch_size, "
                "timeout, deadline, throttle and budget"
            )
        items = embedding_texts(texts)
        route = embedding_route(self.router, model)
        plan = self.calls.plan(route, self._deadline(args.get("timeout"), args.get("deadline")), args)  # type: ignore[arg-type]
        return embedding_run(f"req-{next(_request_ids)}", route, items, plan, self.telemetry, args, self.calls.limits)

    def embed(self, model: str | None, texts: str | Sequence[str], **kwargs: Any) -> Embeddings:
        """One vector per text, in order, from ``model`` (``"provider:model"``).

        ``"openai:"`` alone picks that provider's default embedding model.
        Keyword arguments: ``dimensions`` (shorter vectors, where the provider
        takes it), ``batch_size`` (texts per request; the provider's maximum
        by default), and ``timeout``, ``deadline``, ``throttle``, ``budget`` as
        for ``complete``.
        """
        return self._embedding(model, texts, kwargs).run()

    async def aembed(self, model: str | None, texts: str | Sequence[str], **kwargs: Any) -> Embeddings:
        """Async ``embed``."""
        return await self._embedding(model, texts, kwargs).arun()

    def models(self, provider: str, *, refresh: bool = False, timeout: float | None = None) -> list[ModelInfo]:
        """The models ``provider`` (a prefix or config instance) serves, asked once per client and kept.

        ``refresh=True`` asks again. ``timeout`` (default: the config's) bounds the asking:
        past it, ``LLMDeadlineExceededError``.
        """
        self._ready()
        deadline = self._deadline(timeout, None)
        return self.catalog.models(self._provider(provider), refresh=refresh, deadline=deadline)


def _wants_conversation(args: CallArgs) -> bool:
    """Whether a call needs the tool loop or structured output (imported only then)."""
    if args.get("output") is None and not args.get("tools"):
        return False
    from llmplex.tooling.conversation import wants_conversation

    return wants_conversation(args)


def _build_request(model: str, prompt: PromptInput, stream: bool, args: CallArgs) -> Request:
    """The validated Request of one call (a call without keyword arguments, the commonest, skips reading them)."""
    if not args:
        return prompt_request(model, prompt, stream)
    return build_request(
        model,
        prompt,
        system=args.get("system"),
        tools=args.get("tools"),
        tool_choice=args.get("tool_choice"),
        provider_options=args.get("provider_options"),
        previous_response_id=args.get("previous_response_id"),
        stream=stream,
        output=_request_output(args.get("output")),
        cache=args.get("cache"),
        cache_key=args.get("cache_key"),
        options={k: v for k, v in args.items() if k not in _NOT_OPTIONS and v is not None},
    )


def _request_output(output: Any) -> OutputSchema | None:
    if output is None or isinstance(output, OutputSchema):
        return output
    from llmplex.structured.schema import request_output

    return request_output(output)
