"""One streamed model request: stream events become agent events; transient API errors are retried."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelServerError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings

from freeact_tui.agent.model_stream import open_model_stream
from freeact_tui.agent.reply_shape import NotProtocolReply, not_protocol
from freeact_tui.agent.usage import sane_usage
from freeact_tui.events import (
    AgentEvent,
    ModelRetry,
    ModelWaiting,
    Response,
    ResponseChunk,
    Thoughts,
    ThoughtsChunk,
)

# Seconds to wait before each retry of a transient error (rate limit, overload, 5xx, connection).
RETRY_DELAYS = (1.0, 3.0)
# A provider's Retry-After is honoured up to this many seconds; asking for longer ends the turn with
# a message saying when to try again, rather than a silent wait.
MAX_RETRY_AFTER = 60.0
# Seconds without any stream event before a request counts as stalled (``Config.model_idle_timeout``).
IDLE_TIMEOUT = 180.0
# A request silent for this many seconds is said to be waiting (``ModelWaiting``), then again every
# ``WAIT_EVERY`` seconds until it sends something: a slow model is never a silent one.
WAIT_AFTER = 5.0
WAIT_EVERY = 1.0


class _Stalled(Exception):
    """The model sent nothing for the idle timeout."""


class ModelCallError(Exception):
    """The request failed for good; ``str(error)`` is the message for the user.

    ``partial`` is what the model had streamed (and the user had seen) before it failed, if anything.
    """

    def __init__(self, message: str, partial: ModelResponse | None = None) -> None:
        super().__init__(message)
        self.partial = partial


def event_for(part_event: Any, ids: dict[str, Any]) -> AgentEvent | None:
    """The agent event of one model stream event (thinking and text; tool calls are not streamed)."""
    match part_event:
        case PartStartEvent(part=ThinkingPart(content=content)) if content:
            return ThoughtsChunk(content, **ids)
        case PartStartEvent(part=TextPart(content=content)) if content:
            return ResponseChunk(content, **ids)
        case PartDeltaEvent(delta=ThinkingPartDelta(content_delta=delta)) if delta:
            return ThoughtsChunk(delta, **ids)
        case PartDeltaEvent(delta=TextPartDelta(content_delta=delta)) if delta:
            return ResponseChunk(delta, **ids)
        case PartEndEvent(part=ThinkingPart(content=content)):
            return Thoughts(content, **ids)
        case PartEndEvent(part=TextPart(content=content)):
            return Response(content, **ids)
    return None


async def up_to_calls(stream: AsyncIterable[Any], limit: int | None) -> AsyncIterator[Any]:
    """The events of a streamed reply until a tool call past ``limit`` starts: the reply is read no
    further (it ends with that call, cut), the bound before the work it bounds."""
    calls = 0
    async for event in stream:
        if isinstance(event, PartStartEvent) and isinstance(event.part, ToolCallPart):
            calls += 1
            if limit is not None and calls > limit:
                return
        yield event


async def request_response(
    model: Model,
    messages: Sequence[ModelMessage],
    *,
    settings: ModelSettings | None,
    parameters: ModelRequestParameters,
    emit: Callable[[AgentEvent], None],
    ids: dict[str, Any],
    on_progress: Callable[[Callable[[], ModelResponse]], None],
    on_sent: Callable[[], None],
    idle_timeout: float = IDLE_TIMEOUT,
    max_calls: int | None = None,
) -> ModelResponse:
    """Stream one model response, emitting thoughts and text as they come.

    ``on_sent`` is called once for every request sent to the provider (each try: a retried request is
    sent again), whatever becomes of its reply — answered, cut, failed, cancelled; usage counts what was
    sent, never only what the history keeps (``usage.SentRequests``). A try that never reached the
    server (the connection was refused) is not counted.

    ``max_calls``: the stream is closed once the reply starts a tool call past it (the reply then ends
    with that call, cut): a reply of thousands of calls cost quadratic time inside the model library
    before the per-reply cap of actions could apply (``turn/actions.py`` tells the model).

    ``on_progress`` is given, once the stream opens, a function that returns the response so far
    (kept if the turn is cancelled mid-stream). It is called only when the response so far is needed:
    building it costs as much as the reply is long, so doing it per delta made a long reply quadratic. A
    transient error is retried only if nothing was shown yet, after the delay of ``RETRY_DELAYS``
    or the provider's Retry-After, whichever is longer. A request silent for ``WAIT_AFTER`` seconds
    emits ``ModelWaiting`` about every ``WAIT_EVERY`` seconds; one that sends nothing for
    ``idle_timeout`` seconds counts as a dropped connection. A reply that is not the protocol at all
    (``reply_shape.py``) is never retried.

    Raises:
        ModelCallError: the request failed and will not be retried.
    """
    attempts = len(RETRY_DELAYS)
    server = model_server(model)
    for number in range(attempts + 1):
        attempt = _Attempt(number, number >= attempts, RETRY_DELAYS[number] if number < attempts else 0.0)
        sent = True
        try:
            waiting = _waiting_announcer(emit, ids, idle_timeout)
            async with _idle_guard(idle_timeout, waiting) as guard:
                async with open_model_stream(
                    model, messages, settings=settings, parameters=parameters
                ) as stream:
                    guard.touch()
                    attempt.so_far = stream.get  # per delta: O(1) work, never the whole reply
                    on_progress(attempt.so_far)
                    async for part_event in up_to_calls(stream, max_calls):
                        guard.touch()
                        event = event_for(part_event, ids)
                        if event is not None:
                            emit(event)
                            attempt.emitted = True
                    return sane_usage(stream.get())  # provider usage taken in one place
        except (
            _Stalled,
            NotProtocolReply,
            ModelAPIError,
            UnexpectedModelBehavior,
            OSError,
            TimeoutError,
        ) as exc:
            sent = not never_sent(exc)
            reason, delay = _retry_or_raise(exc, attempt, server, idle_timeout)
        finally:
            if sent:
                on_sent()
        emit(ModelRetry(reason, number + 1, attempts, delay, **ids))
        await asyncio.sleep(delay)
    raise ModelCallError("The model request failed.")  # pragma: no cover - the loop always returns or raises


def never_sent(exc: BaseException) -> bool:
    """The request never reached the server: the connection could not be made (anywhere in the chain of
    causes: the client stack wraps it)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, httpx.ConnectError | ConnectionRefusedError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


@dataclass
class _Attempt:
    """One try of a request: whether it is the last, its retry delay, and what it showed before failing."""

    number: int
    last: bool
    delay: float
    emitted: bool = False
    so_far: Callable[[], ModelResponse] | None = None

    def cut(self, cause: str) -> ModelCallError:
        """The reply broke off after the user saw part of it: kept, marked incomplete, never retried."""
        return ModelCallError(_cut_message(cause), _partial(self.so_far))


def _retry_or_raise(
    exc: BaseException, attempt: _Attempt, server: str | None, idle_timeout: float
) -> tuple[str, float]:
    """What a failed attempt leads to: the reason and delay of a retry, or (raised) the error that ends it.

    Raises:
        ModelCallError: the request will not be retried.
    """
    wrong = not_protocol(exc)  # the client stack may have wrapped it: a wrong URL is never retried
    if wrong is not None:
        if attempt.emitted:
            raise attempt.cut(str(wrong)) from exc
        raise ModelCallError(f"{wrong} The turn was rolled back.") from exc
    if isinstance(exc, _Stalled):
        stalled = f"The model sent nothing for {idle_timeout:g} s (model_idle_timeout)"
        if attempt.emitted:
            raise attempt.cut(stalled) from None
        if attempt.last:
            raise ModelCallError(f"{stalled}. The turn was rolled back; try again.") from None
        return stalled, attempt.delay
    if isinstance(exc, ModelAPIError | UnexpectedModelBehavior):
        return _api_error(exc, attempt, server)
    if attempt.emitted:
        raise attempt.cut(f"Connection lost: {exc}") from exc
    reason = f"Cannot reach the model server{f' at {server}' if server else ''}: {str(exc).rstrip('.')}"
    if attempt.last:
        raise ModelCallError(f"{reason}. The turn was rolled back; try again.") from exc
    return reason, attempt.delay


def _api_error(exc: Exception, attempt: _Attempt, server: str | None) -> tuple[str, float]:
    """An error pydantic-ai reports: retried when transient, after the provider's Retry-After if longer."""
    if attempt.emitted:
        raise attempt.cut(describe_model_error(exc, rolled_back=False, server=server)) from exc
    if not is_retryable(exc) or attempt.last:
        raise ModelCallError(describe_model_error(exc, server=server)) from exc
    reason = describe_model_error(exc, rolled_back=False, server=server)
    asked = retry_after(exc)
    if asked is None or asked <= attempt.delay:
        return reason, attempt.delay
    if asked > MAX_RETRY_AFTER:
        raise ModelCallError(
            f"{reason}. The provider asks to wait {asked:g} s before trying again; the turn was rolled back."
        ) from exc
    return reason, float(asked)


def _partial(so_far: Callable[[], ModelResponse] | None) -> ModelResponse | None:
    """What the model had streamed when it failed (built once, here)."""
    return so_far() if so_far is not None else None


def _waiting_announcer(
    emit: Callable[[AgentEvent], None], ids: dict[str, Any], idle_timeout: float
) -> Callable[[float], None]:
    """Tells the turn (every front end) that the request has been silent ``seconds``: ``ModelWaiting``."""

    def announce(seconds: float) -> None:
        emit(ModelWaiting(round(seconds, 1), idle_timeout, **ids))

    return announce


class _IdleGuard:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._cm: asyncio.Timeout | None = None
        self.last = asyncio.get_running_loop().time()
        """When the request last showed a sign of life (opened, or sent an event)."""

    def touch(self) -> None:
        self.last = asyncio.get_running_loop().time()
        if self._cm is not None:
            self._cm.reschedule(self.last + self.timeout)

    async def announce_waits(self, announce: Callable[[float], None]) -> None:
        """Say that the request is waiting once it has been silent ``WAIT_AFTER`` s, then every ``WAIT_EVERY`` s."""
        loop = asyncio.get_running_loop()
        while True:
            silent = loop.time() - self.last
            if silent < WAIT_AFTER:
                await asyncio.sleep(WAIT_AFTER - silent)
                continue
            announce(silent)
            await asyncio.sleep(WAIT_EVERY)


class _idle_guard:  # noqa: N801 - used like a function in ``async with``
    """Raise ``_Stalled`` when the block sees no ``touch()`` for ``timeout`` seconds; meanwhile ``waiting``
    is told how long it has been silent (``_IdleGuard.announce_waits``)."""

    def __init__(self, timeout: float, waiting: Callable[[float], None] | None = None) -> None:
        self._guard = _IdleGuard(timeout)
        self._cm = asyncio.timeout(timeout)
        self._waiting = waiting
        self._announcer: asyncio.Task[None] | None = None

    async def __aenter__(self) -> _IdleGuard:
        self._guard._cm = await self._cm.__aenter__()
        if self._waiting is not None:
            self._announcer = asyncio.create_task(self._guard.announce_waits(self._waiting))
        return self._guard

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._announcer is not None:  # it ends at its next await: nothing is said after the request
            self._announcer.cancel()  # not awaited here: a cancelled turn must still leave the timeout below
        try:
            await self._cm.__aexit__(exc_type, exc, tb)
        except TimeoutError:
            if self._cm.expired():
                raise _Stalled from None
            raise


def _cut_message(cause: str) -> str:
    return f"The model's reply was cut off ({cause}). The partial reply is kept, marked incomplete."


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked to wait: pydantic-ai's ``retry_after``, else the response headers
    (``retry-after-ms``, ``Retry-After`` in seconds or as an HTTP date) of the error or its cause."""
    asked = getattr(exc, "retry_after", None)
    if isinstance(asked, int | float):
        return float(asked)
    for source in (exc, exc.__cause__):
        headers = getattr(source, "headers", None)
        if headers is None:
            headers = getattr(getattr(source, "response", None), "headers", None)
        if not headers:
            continue
        lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
        try:
            if "retry-after-ms" in lowered:
                return float(lowered["retry-after-ms"]) / 1000
            if "retry-after" in lowered:
                value = lowered["retry-after"]
                try:
                    return max(0.0, float(value))
                except ValueError:
                    when = parsedate_to_datetime(value)
                    return max(0.0, (when - datetime.now(when.tzinfo or UTC)).total_seconds())
        except (TypeError, ValueError, IndexError):
            continue
    return None


def is_retryable(exc: Exception) -> bool:
    """Rate limits, overload, server errors and dropped connections are worth another try."""
    if isinstance(exc, ModelRateLimitError | ModelServerError | ModelUnavailableError | ModelConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in (408, 429) or status >= 500)


def describe_model_error(exc: Exception, *, rolled_back: bool = True, server: str | None = None) -> str:
    """One sentence for the log: the HTTP status or error type, the provider's detail, and for a server
    that cannot be reached the address and the root cause ("Connection refused"), not "Connection error.".
    Labelled by what happened: an error event inside a stream that opened with 200 is the stream's
    report, never "HTTP 500" (pydantic-ai gives it the status the same error has before a stream opens)."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = str(exc)
    if body and not isinstance(body, str):
        try:
            detail = json.dumps(body)[:500]
        except (TypeError, ValueError):
            pass
    if isinstance(exc, ModelConnectionError):
        prefix = f"Cannot reach the model server{f' at {server}' if server else ''}"
        detail = _root_cause(exc) or detail
    elif getattr(exc, "in_stream", False) is True:  # by what happened: its status is one the stream never had
        prefix = "The server's stream reported an error"
    elif status:
        prefix = f"Model API error (HTTP {status})"
    elif isinstance(exc.__cause__, json.JSONDecodeError | UnicodeDecodeError):  # by its cause, not its words
        prefix = "The server sent a reply that is not valid text or JSON"
        detail = str(exc.__cause__)
    else:
        prefix = f"Model error ({type(exc).__name__})"
    sentence = f"{prefix}: {detail.strip().rstrip('.')}"
    if not rolled_back:
        return sentence
    return f"{sentence}. The turn was rolled back; {advice(exc)}."


def advice(exc: Exception) -> str:
    """What the user can do about a failed request, by what the failure is (never by the provider's
    words): a transient failure goes through on another try; a request the server refused as it is
    (HTTP 4xx: too long for the model's context, a bad parameter, a model it does not serve) fails the
    same way again, so say what changes it."""
    if isinstance(exc, ModelContextWindowExceededError):  # pydantic-ai's reading of the provider's answer
        return "the conversation no longer fits the model's context: compact it, or start a new session"
    status = getattr(exc, "status_code", None)
    rejected = isinstance(exc, ModelRequestRejectedError) or (isinstance(status, int) and 400 <= status < 500)
    if is_retryable(exc) or not rejected:
        return "try again"
    if status in (401, 403):
        return "check the API key and what it may use (sending it again fails the same way)"
    return (
        "sending it again fails the same way: a shorter conversation (compact it, or start a new session) "
        "or another model may go through"
    )


def _root_cause(exc: BaseException) -> str:
    """The message of the innermost cause (e.g. ``[Errno 111] Connection refused``), "" when none says more."""
    found, seen = "", set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        found = str(cause).strip() or found
        cause = cause.__cause__ or cause.__context__
    return found


def model_server(model: object) -> str | None:
    """The address of an OpenAI-compatible or other HTTP model's server, if the model says."""
    url = getattr(model, "base_url", None)
    return url if isinstance(url, str) and url else None
