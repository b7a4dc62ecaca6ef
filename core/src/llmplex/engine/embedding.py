"""``embed``: texts split into provider-sized batches, each sent with the call's retries, deadline and budgets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llmplex.engine.attempt import Attempt, hook_client
from llmplex.engine.bridge import run_on_loop
from llmplex.engine.contained import acontained, contained
from llmplex.engine.retrier import Retrier, RetryPlan
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMConfigurationError, LLMServerError
from llmplex.events import PromptExecuted
from llmplex.reliability.guard import await_before, call_before, in_worker
from llmplex.routing import Route, Router
from llmplex.types import Embeddings, LLMConfig, Message, Request, Usage

__all__ = ["EmbedRun", "embedding_route", "embedding_texts"]


def embedding_route(router: Router, model: str | None) -> Route:
    """The route of ``model``; ``"prefix:"`` alone is that provider's default embedding model, and ``None`` is
    the configured ``default_embedding_model`` (the local one of llmplex-llamacpp unless set)."""
    written = router.config.default_embedding_model if model is None else model
    if isinstance(written, str) and written.endswith(":") and written.count(":") == 1:
        instance = router.instance(written[:-1])
        name = instance.info.default_embedding_model
        if not name:
            raise LLMConfigurationError(
                f"model {written!r} names only the provider, and it has no default embedding model: "
                f"write it as '{written}<model>'"
            )
        route = Route(instance, name)
    else:
        route = router.resolve(written)
    capabilities = route.provider.capabilities
    if not capabilities.embeddings or not (
        route.provider.hooks.implements("embed") or route.provider.hooks.implements("aembed")
    ):
        raise LLMConfigurationError(
            f"provider {route.provider.name!r} does not make embeddings; "
            "use one that does (openai, gemini, litellm, llamacpp)"
        )
    return route


def embedding_texts(texts: str | Sequence[str]) -> list[str]:
    """``texts`` as a non-empty list of non-blank, UTF-8-encodable strings (one string is a list of one)."""
    items: object = [texts] if isinstance(texts, str) else texts
    if not isinstance(items, (list, tuple)):
        raise LLMConfigurationError(f"texts must be a string or a list of strings, got {type(texts).__name__}")
    if not items:
        raise LLMConfigurationError("no texts to embed: give at least one string")
    for index, text in enumerate(items):
        if not isinstance(text, str):
            raise LLMConfigurationError(f"texts[{index}] must be a string, got {type(text).__name__}")
        if not text.strip():
            raise LLMConfigurationError(f"texts[{index}] is blank; providers embed only non-empty text")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise LLMConfigurationError(
                f"texts[{index}] is not valid Unicode text: {exc.reason} at position {exc.start}; "
                "decode the source with errors='replace' or remove the stray character"
            ) from None
    return list(items)


def _positive(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise LLMConfigurationError(f"{name} must be a positive integer, got {value!r}")
    return value


class EmbedRun:
    """One ``embed`` call: its batches, in order, each retried as a completion is; the results joined.

    Every batch reserves an estimate of its texts on the budgets and settles to
    the usage it reported; all batches share the call's deadline.
    """

    def __init__(
        self,
        request_id: str,
        route: Route,
        texts: list[str],
        plan: RetryPlan,
        telemetry: Telemetry,
        *,
        dimensions: int | None = None,
        batch_size: int | None = None,
    ) -> None:
        capabilities = route.provider.capabilities
        self.dimensions = _positive(dimensions, "dimensions")
        if self.dimensions is not None and not capabilities.embedding_dimensions:
            raise LLMConfigurationError(
                f"provider {route.provider.name!r} cannot shorten embeddings: drop dimensions= "
                "or use a provider that takes it (openai, gemini)"
            )
        size = _positive(batch_size, "batch_size") or capabilities.embedding_batch_size
        self.batches = [texts[i : i + size] for i in range(0, len(texts), size)]
        self.request_id = request_id
        self.route = route
        self.plan = plan
        self.telemetry = telemetry
        self.runner = Attempt(route)
        self.started = plan.clock.monotonic()
        self.attempts = 0

    def _retrier(self, batch: list[str]) -> Retrier:
        request = Request(
            model=self.route.model,
            messages=(Message(role="user", content="\n".join(batch)),),
            config=LLMConfig(max_tokens=1),
        )
        return Retrier(
            self.request_id, self.runner, self.plan, self.telemetry, self.attempts, self.started, request=request
        )

    def _args(self, batch: list[str], asynchronous: bool) -> dict[str, Any]:
        client = hook_client(self.route.provider, asynchronous)  # built first: the timeout is what is left after
        deadline = self.plan.deadline
        return {
            "texts": batch,
            "model": self.route.model,
            "dimensions": self.dimensions,
            "settings": self.route.provider.settings,
            "client": client,
            "timeout": None if deadline is None else deadline.remaining(),
        }

    def _send(self, batch: list[str], retrier: Retrier) -> Any:
        """Send ``batch`` synchronously, held to the deadline (``llmplex.reliability.guard``)."""
        hooks, name = self.route.provider.hooks, self.route.provider.name
        if hooks.implements("embed"):
            return call_before(
                lambda: contained(lambda: hooks.embed(**self._args(batch, False)), name),
                self.plan.deadline,
                retrier.deadline_error,
            )
        return run_on_loop(lambda: self._asend(batch, retrier))

    async def _asend(self, batch: list[str], retrier: Retrier) -> Any:
        """Async ``_send``: cancelled at the deadline; a sync-only hook runs on a worker thread."""
        hooks, name = self.route.provider.hooks, self.route.provider.name

        async def sending() -> Any:
            if hooks.implements("aembed"):  # an async plugin embeds on the loop itself, no worker thread
                return await acontained(lambda: hooks.aembed(**self._args(batch, True)), name)
            return await in_worker(lambda: contained(lambda: hooks.embed(**self._args(batch, False)), name))

        return await await_before(sending, self.plan.deadline, retrier.deadline_error)

    def _accept(self, result: Any, batch: list[str], retrier: Retrier) -> Embeddings:
        if not isinstance(result, Embeddings) or len(result.vectors) != len(batch):
            got = len(result.vectors) if isinstance(result, Embeddings) else type(result).__name__
            raise LLMServerError(
                f"provider {self.route.provider.name!r} answered {got} embeddings for {len(batch)} texts"
            )
        self._check_dimensions(result)
        usage = result.usage.priced(self.route.provider.info.name, result.model or self.route.model)
        retrier.settle(usage)
        if self.telemetry.wants(PromptExecuted):
            self.telemetry.emit(PromptExecuted, attempt=retrier.attempt, usage=usage, **retrier.where())
        accepted: Embeddings = result.model_copy(update={"usage": usage})
        return accepted

    def _check_dimensions(self, result: Embeddings) -> None:
        """Vectors of one length, the one ``dimensions=`` asked for when it was given: a provider that ignored it
        (or answered vectors of mixed lengths) is an error, never vectors of another size."""
        lengths = sorted({len(vector) for vector in result.vectors})
        wanted = self.dimensions
        if len(lengths) > 1 or (wanted is not None and lengths and lengths != [wanted]):
            said = f"asked for dimensions={wanted}, " if wanted is not None else ""
            raise LLMServerError(
                f"provider {self.route.provider.name!r} {said}answered vectors of {', '.join(map(str, lengths))} "
                "dimensions: it did not honour the request (check the model takes dimensions=)"
            )

    def run(self) -> Embeddings:
        """Embed every batch, in order, synchronously."""
        parts = []
        for batch in self.batches:
            retrier = self._retrier(batch)
            try:
                while True:
                    retrier.begin()
                    try:
                        parts.append(self._accept(self._send(batch, retrier), batch, retrier))
                        break
                    except Exception as exc:
                        error, delay = retrier.failure(exc)
                    if delay is None:
                        raise error
                    self.plan.clock.sleep(delay)
            finally:
                retrier.close()
                self.attempts = retrier.sent
        return self._join(parts)

    async def arun(self) -> Embeddings:
        """Async ``run``: waits are cancelled at the deadline."""
        parts = []
        for batch in self.batches:
            retrier = self._retrier(batch)
            try:
                while True:
                    await retrier.abegin()
                    try:
                        parts.append(self._accept(await self._asend(batch, retrier), batch, retrier))
                        break
                    except Exception as exc:
                        error, delay = retrier.failure(exc)
                    if delay is None:
                        raise error
                    await self.plan.clock.asleep(delay)
            finally:
                retrier.close()
                self.attempts = retrier.sent
        return self._join(parts)

    def _join(self, parts: list[Embeddings]) -> Embeddings:
        usage = Usage()
        vectors: list[list[float]] = []
        for part in parts:
            usage = usage + part.usage
            vectors.extend(part.vectors)
        return Embeddings(
            vectors=vectors,
            usage=usage,
            model=parts[0].model or self.route.model,
            provider=self.route.provider.name,
            attempts=self.attempts,
            latency=self.plan.clock.monotonic() - self.started,
        )
