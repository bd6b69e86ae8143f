"""Every error of the model path ends a turn as what it is, never as an "Internal error" (``turn/failures.py``).

A table over the errors a model request (or the compaction before it) can raise, each played by a
scripted model (``FunctionModel``) through the real turn loop: the turn ends with one ``AgentError``
of the expected kind, whose message is one line and says what happened; a failure before anything
was shown rolls the turn back (the history is as before), a failure mid-reply keeps what was shown.
An exception no row knows stays ``internal``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.exceptions import (
    ContentFilterError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelRequestTimeout,
    ModelTimeoutError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent import model_call
from freeact_tui.agent.agent import Agent
from freeact_tui.agent.context.compaction import CompactionError
from freeact_tui.agent.model_call import ModelCallError
from freeact_tui.agent.reply_shape import NotProtocolReply
from freeact_tui.agent.turn.failures import failure_of
from freeact_tui.agent.turn.state import TurnError
from freeact_tui.events import AgentError, Compacting, ErrorKind
from freeact_tui.execution.base import ExecutorError
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.store.ids import SessionDamaged
from tests.fake_openai import FakeOpenAI, HttpError, RecordedRequest, Reply, ReplySpec
from tests.helpers import cli, fake_args, of, session_lines
from tests.windowed import sent_text

FILLER = "Notes that take room in the context and carry nothing else. " * 40


@dataclass
class Faulty:
    """Answers ``ok`` until ``armed``; then the chosen request raises ``error`` (after ``shown`` text, if any)."""

    error: BaseException
    on_summary: bool = False
    """Fail the compaction's summary request, not the turn's own."""
    shown: str = ""
    empty_summary: bool = False
    armed: bool = False
    requests: list[list[ModelMessage]] = field(default_factory=list)

    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self._stream, model_name="faulty")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        self.requests.append(list(messages))
        summary = "You compact the history" in sent_text(messages)
        if summary and self.empty_summary and self.armed:
            yield " "
            return
        if self.armed and summary == self.on_summary:
            if self.shown:
                yield self.shown
            raise self.error
        yield "a summary" if summary else "ok"


@dataclass(frozen=True)
class Case:
    name: str
    fault: Callable[[], Faulty]
    kind: ErrorKind
    says: str
    """A fragment the message must contain."""
    rolled_back: bool | None = True
    """True: the history is as before the turn; False: the partial reply is kept; None: not said (a bug)."""


CASES = [
    Case(
        "http 500",
        lambda: Faulty(ModelHTTPError(500, "faulty", {"error": "overloaded"})),
        "model",
        "HTTP 500",
    ),
    Case(
        "http 400",
        lambda: Faulty(ModelHTTPError(400, "faulty", {"error": "bad request"})),
        "model",
        "HTTP 400",
    ),
    Case(
        "context too long",
        lambda: Faulty(ModelContextWindowExceededError("faulty", "prompt is too long")),
        "model",
        "prompt is too long",
    ),
    Case(
        "connection",
        lambda: Faulty(ModelConnectionError("faulty", "connection reset")),
        "model",
        "connection",
    ),
    Case("timeout", lambda: Faulty(ModelTimeoutError("faulty", "read timed out")), "model", "timed out"),
    Case("request timeout", lambda: Faulty(ModelRequestTimeout("faulty", 30.0)), "model", "Model"),
    Case("socket timeout", lambda: Faulty(TimeoutError("timed out")), "model", "timed out"),
    Case("unexpected", lambda: Faulty(UnexpectedModelBehavior("garbled stream")), "model", "garbled stream"),
    Case("content filter", lambda: Faulty(ContentFilterError("filtered")), "model", "filtered"),
    Case(
        "cut off",
        lambda: Faulty(UnexpectedModelBehavior("stream ended"), shown="Half an ans"),
        "model",
        "cut off",
        rolled_back=False,
    ),
    Case(
        "usage limit",
        lambda: Faulty(UsageLimitExceeded("request_limit of 5 exceeded")),
        "limit",
        "request_limit",
    ),
    Case(
        "compaction fails",
        lambda: Faulty(ModelHTTPError(400, "faulty", {"error": "no summaries"}), on_summary=True),
        "model",
        "could not be compacted",
    ),
    Case(
        "compaction empty",
        lambda: Faulty(RuntimeError("unused"), empty_summary=True),
        "model",
        "empty summary",
    ),
    Case(
        "a bug",
        lambda: Faulty(RuntimeError("a bug in a model class")),
        "internal",
        "Internal error: RuntimeError",
        rolled_back=None,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_each_model_path_error_ends_the_turn_as_its_kind(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_call, "RETRY_DELAYS", (0.0, 0.0))  # retried errors: retry at once
    fault = case.fault()
    agent = Agent(
        fault.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
        eager_kernel=False,
        context_window=3000,
    )
    async with agent:
        i = 0
        while agent.context_usage().fraction < 0.7:  # history enough that the next request compacts first
            assert not of([e async for e in agent.stream(f"note {i}: {FILLER}")], AgentError)
            i += 1
        before = list(agent.history)
        fault.armed = True
        events = [e async for e in agent.stream(f"go on {FILLER}")]
        errors = of(events, AgentError)
        assert [e.kind for e in errors] == [case.kind], errors
        message = errors[0].message
        assert "\n" not in message and case.says.lower() in message.lower(), message
        if "compact" in case.says:
            assert of(events, Compacting)  # the failure came from the compaction before the request
        if case.kind != "internal":
            assert "Internal error" not in message
        if case.rolled_back is None:
            pass
        elif case.rolled_back:
            assert agent.history == before  # nothing of the failed turn is sent again
        else:
            assert isinstance(agent.history[-1], ModelResponse) and "Half an ans" in (
                agent.history[-1].text or ""
            )
        fault.armed = False
        after = [e async for e in agent.stream("again")]  # the session goes on
    assert not of(after, AgentError)


def test_an_unknown_exception_is_internal_and_names_the_log_file(tmp_path: Path) -> None:
    import logging

    handler = logging.FileHandler(tmp_path / "app.log")
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        failure = failure_of(KeyError("x"))
    finally:
        root.removeHandler(handler)
        handler.close()
    assert failure.kind == "internal"
    assert str(tmp_path / "app.log") in failure.message
    assert "KeyError" in (tmp_path / "app.log").read_text()  # the traceback is in the log


def test_headless_compaction_failure_is_a_clear_model_error_and_the_session_goes_on(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    """The real CLI against the fake OpenAI server: the compaction before a request fails (HTTP 400 on
    the summary request) → one line naming it, status ``error``, exit code 1, no traceback; the session
    file is intact and the next run of it works."""
    failing = {"on": False}

    def answer(request: RecordedRequest) -> ReplySpec:
        summary = any("You compact the history" in str(m.get("content")) for m in request.messages)
        if summary and failing["on"]:
            return HttpError(400, "the summary model refuses (fake)")
        return Reply("a summary" if summary else "ok")

    fake_openai.default = answer
    config = tmp_path / "config.toml"
    config.write_text("context_window = 3000\n")
    base = ["run", *fake_args(fake_openai), "--config", str(config), "-o", "json"]

    def run(prompt: str, *more: str) -> tuple[int, dict[str, Any], str]:
        done = cli(*base, *more, prompt, cwd=tmp_path)
        assert done.stdout.strip(), done.stderr
        return done.returncode, json.loads(done.stdout), done.stderr

    code, first, _ = run(f"note 0: {FILLER}")
    assert code == 0, first
    session = ["--session-id", first["session_id"]]
    assert run(f"note 1: {FILLER}", *session)[0] == 0
    lines = session_lines(isolated_home, first["session_id"])
    failing["on"] = True
    code, result, stderr = run(f"go on {FILLER}", *session)
    assert (code, result["status"]) == (1, "error"), result
    (error,) = result["errors"]
    assert error["kind"] == "model" and "could not be compacted" in error["message"], error
    assert "HTTP 400" in error["message"] and "\n" not in error["message"]
    assert "Traceback" not in stderr and "Internal error" not in stderr
    after = session_lines(isolated_home, first["session_id"])
    assert after[: len(lines)] == lines and len(after) == len(lines) + 1  # only the error's record came
    failing["on"] = False
    code, resumed, _ = run("and now?", *session)
    assert code == 0 and resumed["answer"] == "ok", resumed


def _wrapped(reason: BaseException) -> BaseException:
    """``reason`` as the client stack reports it: the cause of its own error."""
    outer = UnexpectedModelBehavior("Streamed response ended without content or tool calls")
    outer.__cause__ = reason
    return outer


TABLE: list[tuple[BaseException, ErrorKind, str]] = [
    (ModelHTTPError(503, "m", {"error": "busy"}), "model", "HTTP 503"),
    (ModelCallError("The model request failed."), "model", "model request failed"),
    (CompactionError("The context could not be compacted: no."), "model", "could not be compacted"),
    (UnexpectedModelBehavior("odd"), "model", "odd"),
    (NotProtocolReply("http://h/v1", "an HTML page"), "model", "http://h/v1 answered with an HTML page"),
    (
        _wrapped(NotProtocolReply("http://h/v1", "an empty body")),
        "model",
        "http://h/v1 answered with an empty body",
    ),
    (UsageLimitExceeded("tokens"), "limit", "usage limit"),
    (TurnError("config", "No model is set."), "config", "No model is set."),
    (TurnError("kernel", "The kernel died."), "kernel", "The kernel died."),
    (ExecutorError("cannot start"), "kernel", "cannot start"),
    (SessionDamaged(Path("main.jsonl"), 3, "not JSON"), "internal", "main.jsonl, line 3"),
    (OSError(28, "No space left on device"), "internal", "could not be saved"),
    (ValueError("a bug"), "internal", "Internal error: ValueError: a bug"),
]


@pytest.mark.parametrize(("exc", "kind", "says"), TABLE, ids=[type(row[0]).__name__ for row in TABLE])
def test_the_table_reads_each_exception_into_its_kind(exc: BaseException, kind: ErrorKind, says: str) -> None:
    """The one table every front end's error comes from (the turn, and headless and the TUI outside a turn)."""
    event = failure_of(exc).event()
    assert (event.kind, event.agent_id) == (kind, "main")
    assert says.lower() in event.message.lower() and "\n" not in event.message
