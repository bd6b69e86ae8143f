"""The older freeact API (``CodeActAgent(model, executor).run(...)``) as a thin facade over ``Agent``.

Every action is auto-approved, as in the original API. Scripts written against it keep working:

    agent = CodeActAgent(model, executor)
    turn = agent.run("plot a sine wave", max_steps=10, step_timeout=60)
    async for item in turn.stream():
        match item:
            case CodeActModelTurn():  print((await item.response()).text)
            case CodeExecution():     print((await item.result()).text)
    print((await turn.response()).text)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model

from freeact_tui.agent.agent import Agent
from freeact_tui.events import (
    AgentError,
    ApprovalRequest,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Response,
    ResponseChunk,
)
from freeact_tui.execution.base import Executor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import CodeAction

_DONE = object()


class MaxStepsReached(Exception):
    """The turn used ``max_steps`` model requests without a final answer."""


@dataclass
class CodeExecutionResult:
    text: str | None
    images: list[Path] = field(default_factory=list)
    is_error: bool = False


@dataclass
class CodeActModelResponse:
    text: str
    code: str | None = None


@dataclass
class CodeActAgentResponse:
    text: str


class _Streamed:
    """Something whose text chunks can be streamed while the turn goes on."""

    def __init__(self) -> None:
        self._chunks: asyncio.Queue[object] = asyncio.Queue()
        self._done = asyncio.Event()

    def _put(self, chunk: str) -> None:
        self._chunks.put_nowait(chunk)

    def _close(self) -> None:
        if not self._done.is_set():
            self._done.set()
            self._chunks.put_nowait(_DONE)

    async def stream(self) -> AsyncIterator[str]:
        while (chunk := await self._chunks.get()) is not _DONE:
            assert isinstance(chunk, str)
            yield chunk


class CodeActModelTurn(_Streamed):
    """One model response: streamed text, then ``response()`` with the text and the code it wrote."""

    def __init__(self) -> None:
        super().__init__()
        self._text: list[str] = []
        self._code: str | None = None

    async def response(self) -> CodeActModelResponse:
        await self._done.wait()
        return CodeActModelResponse("".join(self._text), self._code)


class CodeExecution(_Streamed):
    """One code execution: streamed output, then ``result()``."""

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code
        self._result: CodeExecutionResult | None = None

    async def result(self) -> CodeExecutionResult:
        await self._done.wait()
        assert self._result is not None
        return self._result


class CodeActAgentTurn:
    """A running turn; iterate ``stream()`` or await ``response()`` (or both, in that order)."""

    def __init__(self, agent: Agent, query: str, max_steps: int) -> None:
        self._agent = agent
        self._query = query
        self._max_steps = max_steps
        self._items: asyncio.Queue[object] = asyncio.Queue()
        self._final: list[str] = []
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    def _start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        model_turn: CodeActModelTurn | None = None
        execution: CodeExecution | None = None
        try:
            async with self._agent:
                async for event in self._agent.stream(self._query, max_turns=self._max_steps):
                    match event:
                        case ResponseChunk(content=chunk):
                            if model_turn is None:
                                model_turn = CodeActModelTurn()
                                self._items.put_nowait(model_turn)
                            model_turn._text.append(chunk)
                            model_turn._put(chunk)
                        case Response(content=text):
                            self._final = [text]
                        case ApprovalRequest(tool_call=CodeAction(code=code)):
                            if model_turn is None:
                                model_turn = CodeActModelTurn()
                                self._items.put_nowait(model_turn)
                            model_turn._code = code
                            model_turn._close()
                            model_turn = None
                            execution = CodeExecution(code)
                            self._items.put_nowait(execution)
                        case CodeExecutionOutputChunk(text=text) if execution is not None:
                            execution._put(text)
                        case CodeExecutionOutput() if execution is not None:
                            execution._result = CodeExecutionResult(
                                event.text, list(event.images), event.is_error
                            )
                            execution._close()
                            execution = None
                        case AgentError(kind="limit"):
                            self._error = MaxStepsReached(event.message)
                        case AgentError(message=message):
                            self._error = RuntimeError(message)
        except BaseException as exc:  # surfaced to the caller of stream()/response()
            self._error = exc
        finally:
            if model_turn is not None:
                model_turn._close()
            if execution is not None:
                execution._result = CodeExecutionResult(None, [], True)
                execution._close()
            self._items.put_nowait(_DONE)

    async def stream(self) -> AsyncIterator[CodeActModelTurn | CodeExecution]:
        self._start()
        while (item := await self._items.get()) is not _DONE:
            assert isinstance(item, CodeActModelTurn | CodeExecution)
            yield item
        self._items.put_nowait(_DONE)  # a later response() must not wait forever
        if self._error is not None:
            raise self._error

    async def response(self) -> CodeActAgentResponse:
        self._start()
        assert self._task is not None
        await asyncio.shield(self._task)
        if self._error is not None:
            raise self._error
        return CodeActAgentResponse("".join(self._final))


class CodeActAgent:
    """The seed's agent: ``run(query, max_steps, step_timeout)`` returns a ``CodeActAgentTurn``.

    Args:
        model: a pydantic-ai model or ``provider:name`` string.
        executor: a started executor (for example ``KernelExecutor``); it keeps its state across runs.
    """

    def __init__(self, model: str | Model, executor: Executor) -> None:
        self.model = model
        self.executor = executor
        self._history: list[ModelMessage] = []

    def run(self, query: str, max_steps: int = 30, step_timeout: float = 120) -> CodeActAgentTurn:
        agent = Agent(
            self.model,
            executor=self.executor,
            sessions_dir=None,
            skip_permissions=True,
            permissions=PermissionRules(None, skip_permissions=True),
            execution_timeout=step_timeout,
            enable_subagents=False,
        )
        agent.history = self._history  # one conversation across runs, as in the original
        return CodeActAgentTurn(agent, query, max_steps)


__all__ = [
    "CodeActAgent",
    "CodeActAgentResponse",
    "CodeActAgentTurn",
    "CodeActModelResponse",
    "CodeActModelTurn",
    "CodeExecution",
    "CodeExecutionResult",
    "MaxStepsReached",
]
