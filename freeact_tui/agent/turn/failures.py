"""What an exception that ends a turn is, for the user: one table from exception types to an error kind.

Every exception that escapes a turn's steps (the model request, a compaction before it, an action, the
session file) is read here, and only here, into a ``Failure``: the ``AgentError`` kind and its
one-line message. The kind is what every front end acts on — the headless exit code
(``cli/run.py``), the ACP stop reason (``acp/turn_runner.py``), the TUI's title — so an error of the
model path (an HTTP error, a timeout, a failed compaction, a usage limit, unexpected model behaviour)
ends as a model error everywhere, never as an "Internal error". An exception the table does not know
is a bug: it stays ``internal``, logged with its traceback, and its message names the log file.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from pydantic_ai.exceptions import (
    AgentRunError,
    ModelAPIError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.messages import ModelResponse

from freeact_tui.agent.model_call import ModelCallError, describe_model_error
from freeact_tui.agent.reply_shape import NotProtocolReply, not_protocol
from freeact_tui.agent.turn.state import TurnError
from freeact_tui.events import AgentError, ErrorKind
from freeact_tui.execution.base import ExecutorError
from freeact_tui.store.sessions import SessionDamaged

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Failure:
    """How a turn ends on an exception: the ``AgentError`` kind, its message, what the user saw of the reply."""

    kind: ErrorKind
    message: str
    partial: ModelResponse | None = None
    """The part of a reply the model had streamed before it failed (kept, marked incomplete)."""
    request_failed: bool = False
    """A model request failed before anything was shown: the turn is rolled back (the user sends it again)."""

    def event(self, agent_id: str = "main") -> AgentError:
        """The ``AgentError`` of this failure (what every front end reads)."""
        return AgentError(self.message, kind=self.kind, agent_id=agent_id)


def _turn_error(exc: BaseException) -> Failure:
    assert isinstance(exc, TurnError)
    return Failure(exc.kind, exc.message, exc.partial, request_failed=exc.kind == "model")


def _model_call(exc: BaseException) -> Failure:
    assert isinstance(exc, ModelCallError)  # CompactionError too: the compaction before a request failed
    return Failure("model", str(exc), exc.partial, request_failed=True)


def _model_error(exc: BaseException) -> Failure:
    assert isinstance(exc, Exception)
    wrong = not_protocol(exc)  # the server's reply was not the protocol: say what came back, not how it broke
    message = f"{wrong} The turn was rolled back." if wrong is not None else describe_model_error(exc)
    return Failure("model", message, request_failed=True)


def _usage_limit(exc: BaseException) -> Failure:
    reached = " ".join(str(exc).split()).rstrip(".")
    return Failure(
        "limit", f"A usage limit was reached: {reached}. The turn was rolled back.", request_failed=True
    )


def _kernel(exc: BaseException) -> Failure:
    return Failure("kernel", f"The kernel failed: {str(exc).rstrip('.')}. The turn stopped.")


def _damaged(exc: BaseException) -> Failure:
    return Failure("internal", f"The session file is damaged ({exc}). The turn stopped; nothing was written.")


def _session(exc: BaseException) -> Failure:
    return Failure(
        "internal", f"The session could not be saved: {exc}. The turn stopped; nothing after it was written."
    )


FAILURES: tuple[
    tuple[type[BaseException] | tuple[type[BaseException], ...], Callable[[BaseException], Failure]], ...
] = (
    (TurnError, _turn_error),  # a part of the turn said what happened
    (ModelCallError, _model_call),  # a model request failed for good (also a compaction: CompactionError)
    (UsageLimitExceeded, _usage_limit),
    (NotProtocolReply, _model_error),  # a base URL that answers with a page, not a chat completion
    (
        (ModelAPIError, UnexpectedModelBehavior, AgentRunError),
        _model_error,
    ),  # pydantic-ai's, not yet described
    (ExecutorError, _kernel),
    (SessionDamaged, _damaged),  # it names the file and the line
    (OSError, _session),
)
"""Exception types, most specific first, and the failure each is. Anything else is ``internal``."""


def failure_of(exc: BaseException) -> Failure:
    """The failure a turn ends on when ``exc`` escapes it (the first row of ``FAILURES`` that matches)."""
    for types, failure in FAILURES:
        if isinstance(exc, types):
            return failure(exc)
    logger.error("A turn ended on an internal error", exc_info=exc)
    where = log_file()
    details = f" (details in {where})" if where else ""
    return Failure("internal", f"Internal error: {type(exc).__name__}: {exc}{details}")


def log_file() -> str | None:
    """The file the process logs to (the CLI sets one up), if any."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler) and handler.baseFilename != os.devnull:
            return handler.baseFilename
    return None


__all__ = ["FAILURES", "Failure", "failure_of", "log_file"]
