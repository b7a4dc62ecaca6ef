"""Call one provider's ``llmplex_batch_*`` hooks, each call retried under the provider's throttle policy."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from llmplex.engine.attempt import Attempt
from llmplex.errors import LLMError, LLMServerError, LLMTimeoutError
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import call_before
from llmplex.types import BatchLimits, BatchOutcome, BatchRequest, BatchStatus

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.routing import Route

__all__ = ["BatchCalls", "DuplicateBatchWarning"]

T = TypeVar("T")


class DuplicateBatchWarning(UserWarning):
    """A batch was submitted again although the provider may already hold it (it cannot be looked up)."""


class BatchCalls:
    """The batch hooks of the provider instance ``route`` goes to, as plain methods.

    A failure is classified by the plugin (``llmplex_classify_error``) and retried as
    any call to that provider would be (``[throttle]``); what is left raises its
    typed error.
    """

    def __init__(self, client: Client, route: Route) -> None:
        self.attempt = Attempt(route)
        self.provider = route.provider
        self.hooks = route.provider.hooks
        self.policy = client.calls.policy(route.provider.name)
        self.clock = client.clock
        self.timeout = client.config.timeout

    def _held(self, call: Callable[[], T], what: str) -> Callable[[], T]:
        """``call`` held to the config's ``timeout`` (a request's): past it, a (retried) ``LLMTimeoutError``.

        For the short requests only (finding and polling a batch): an upload or a
        download of results may rightly take longer.
        """
        timeout = self.timeout
        if timeout is None:
            return call
        name = self.provider.name

        def late() -> LLMTimeoutError:
            return LLMTimeoutError(f"{what} took longer than the timeout ({timeout}s)", provider=name)

        return lambda: call_before(call, Deadline.after(timeout, self.clock), late)

    def _args(self) -> dict[str, Any]:
        return {"settings": self.provider.settings, "client": self.provider.client(False)}

    def _retried(self, call: Callable[[], T], before_retry: Callable[[], T | None] | None = None) -> T:
        """``call()``, again after each retryable failure the policy allows; ``before_retry`` may end it early."""
        attempt, waited = 0, 0.0
        while True:
            attempt += 1
            try:
                return call()
            except Exception as exc:
                error = self.attempt.classify(exc)
            error.attempts = attempt
            decision = self.policy.decide(error, attempt, waited, self.clock.random())
            if decision.delay is None:
                error.context["gave_up"] = decision.reason
                raise error
            waited += decision.delay
            self.clock.sleep(decision.delay)
            if before_retry is not None:
                found = before_retry()
                if found is not None:
                    return found

    def limits(self) -> BatchLimits | None:
        """The provider's batch limits, or ``None`` when it declares none."""
        if not self.hooks.implements("batch_limits"):
            return None
        return self.hooks.batch_limits(settings=self.provider.settings)  # type: ignore[no-any-return]

    def find(self, label: str) -> str | None:
        """The id of the batch submitted under ``label``, when the provider can look it up."""
        if not self.hooks.implements("batch_find"):
            return None
        found = self._retried(
            self._held(lambda: self.hooks.batch_find(label=label, **self._args()), f"looking up batch {label}")
        )
        return _batch_id(found) if found is not None else None

    def submit(self, requests: Sequence[BatchRequest], label: str, *, maybe_sent: bool = False) -> str:
        """Submit ``requests`` as one batch and return its id.

        ``maybe_sent``: an earlier run may have submitted it already; it is looked up first.
        A failed attempt may also have reached the provider, so each retry looks first too.
        """
        if maybe_sent:
            found = self.find(label)
            if found is not None:
                return found
            if not self.hooks.implements("batch_find"):
                warnings.warn(
                    f"batch {label} of provider {self.provider.name!r} may have been submitted by the interrupted "
                    "run, and this provider's batches cannot be looked up: it is submitted again, so it may now "
                    "exist twice at the provider",
                    DuplicateBatchWarning,
                    stacklevel=2,
                )
        return _batch_id(
            self._retried(
                lambda: self.hooks.batch_submit(requests=list(requests), label=label, **self._args()),
                lambda: self.find(label),
            )
        )

    def poll(self, batch_id: str) -> BatchStatus:
        """Where batch ``batch_id`` stands."""
        status = self._retried(
            self._held(lambda: self.hooks.batch_poll(batch_id=batch_id, **self._args()), f"polling batch {batch_id}")
        )
        if not isinstance(status, BatchStatus):
            raise LLMServerError(
                f"the {self.provider.name!r} plugin's llmplex_batch_poll returned {type(status).__name__}, "
                "not a BatchStatus",
                provider=self.provider.name,
            )
        return status

    def results(
        self, batch_id: str, take: Callable[[BatchOutcome], None], restart: Callable[[], None] | None = None
    ) -> None:
        """Give ``take`` each outcome of the finished batch; a failed download starts over (``take`` skips
        repeats), ``restart()`` called before each read."""

        def read() -> None:
            if restart is not None:
                restart()
            for outcome in self.hooks.batch_results(batch_id=batch_id, **self._args()):
                take(outcome)

        self._retried(read)


def _batch_id(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise LLMError(f"a provider plugin's batch hook returned {value!r:.80} instead of a batch id (a string)")
    return value
