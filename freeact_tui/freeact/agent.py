"""freeact 0.11's ``Agent(runtime)``: this app's agent, speaking freeact's events.

Every action yields an ``ApprovalRequest`` the caller must decide (as in freeact, where rules are
the application's business: see ``PermissionManager``). A turn that fails raises, after its
messages were rolled back, as freeact's ``stream`` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelResponse, UserContent
from pydantic_ai.models import Model, StreamedResponse

from freeact_tui import events as ours
from freeact_tui.actions.definitions import tool_definitions
from freeact_tui.agent.agent import Agent as _Agent
from freeact_tui.agent.models import ModelSetupError
from freeact_tui.freeact.config import ResolvedRuntime
from freeact_tui.freeact.events import (
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Response,
    ResponseChunk,
    Thoughts,
    ThoughtsChunk,
    ToolOutput,
    cancelled_phase,
    ids,
)
from freeact_tui.freeact.toolcalls import from_ours
from freeact_tui.permissions.rules import PermissionRules

REJECTED = "Tool call rejected"


class UnusableModel(Model):
    """Stands in for a model that cannot be set up yet: its first request raises why."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__()
        self._name = name
        self._problem = problem

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def system(self) -> str:
        return self._name.split(":", 1)[0]

    async def request(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise ModelSetupError(self._problem)

    @asynccontextmanager
    async def request_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[StreamedResponse]:
        raise ModelSetupError(self._problem)
        yield  # an async generator, as the interface needs


class AgentTurnError(RuntimeError):
    """A turn failed (model error, kernel failure, limit); its messages were rolled back."""


class CancelToken:
    """A cancellation shared between agents: ``set()`` cancels every agent that holds it."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        self._event.set()
        for callback in list(self._callbacks):
            callback()

    def clear(self) -> None:
        self._event.clear()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()

    def _on_set(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)


class Agent:
    """A code-action agent configured by a freeact ``ResolvedRuntime``.

    Args:
        runtime: from ``freeact_tui.freeact.config.resolve()``.
        agent_id: defaults to ``"main"``.
        session_id: resume this session if it exists, else start one with this id.
        sandbox: run the kernel in the sandbox (bubblewrap, no network, writes only to the workspace).
        sandbox_config: freeact's custom sandbox configuration; not supported here (an error).
        cancel_token: a token whose ``set()`` cancels this agent's turn.

    Raises:
        ValueError: ``session_id`` while persistence is disabled, or a ``sandbox_config``.
    """

    def __init__(
        self,
        runtime: ResolvedRuntime,
        agent_id: str | None = None,
        session_id: str | None = None,
        sandbox: bool = False,
        sandbox_config: Path | None = None,
        cancel_token: CancelToken | None = None,
    ) -> None:
        persist = runtime.config.enable_persistence
        if session_id is not None and not persist:
            raise ValueError("session_id needs enable_persistence = true in the freeact config")
        if sandbox_config is not None:
            raise ValueError(
                "sandbox_config is freeact's sandbox-runtime file; freeact-tui's sandbox (bubblewrap) "
                "has no such file: writes are limited to the working dir and there is no network."
            )
        overrides: dict[str, Any] = {
            "model": runtime.model,
            "agent_id": agent_id or "main",
            # Every action reaches the caller, as in freeact: rules are the application's business.
            "permissions": PermissionRules(None, defaults=False, working_dir=runtime.working_dir),
        }
        if session_id is not None:
            overrides["session_id"] = session_id
        if not persist:
            overrides["sessions_dir"] = None
        if sandbox:
            overrides["execution"] = "sandbox"
        self.model: str | Model = runtime.model
        self.model_settings: dict[str, Any] = runtime.model_settings
        self._runtime = runtime
        try:
            self._agent = _Agent.from_config(runtime.app_config, **overrides)
        except ModelSetupError as exc:
            # freeact fails at the first request (e.g. no API key yet), not here.
            overrides["model"] = UnusableModel(str(runtime.model), str(exc))
            self._agent = _Agent.from_config(runtime.app_config, **overrides)
        self._rejected: set[str] = set()
        if cancel_token is not None:
            cancel_token._on_set(self.cancel)

    @property
    def runtime(self) -> ResolvedRuntime:
        return self._runtime

    @property
    def agent_id(self) -> str:
        return self._agent.agent_id

    @property
    def session_id(self) -> str | None:
        return self._agent.session_id if self._runtime.config.enable_persistence else None

    @property
    def tool_names(self) -> list[str]:
        """Names of all tools the model is offered (built-in ones and the MCP servers' tools,
        as in freeact; a JSON MCP server's tools are known once ``start()`` has listed them)."""
        builtin = tool_definitions(subagents=self._agent.enable_subagents)
        return [t.name for t in builtin] + [t.name for t in self._agent.mcp.tool_definitions()]

    def cancel(self) -> None:
        """Cancel the running turn (a ``Cancelled`` event ends it)."""
        self._agent.cancel()

    async def __aenter__(self) -> Agent:
        await self.start()
        return self

    async def __aexit__(self, *args: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Start the kernel and the MCP servers (their tools are listed when this returns)."""
        await self._agent.start()
        await self._agent.mcp.wait()

    async def stop(self) -> None:
        await self._agent.stop()

    async def stream(
        self, prompt: str | Sequence[UserContent], max_turns: int | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn, yielding freeact's events; every ``ApprovalRequest`` must be decided.

        Raises:
            AgentTurnError: the turn failed (its messages were rolled back).
        """
        self._rejected.clear()
        answered = False
        async for event in self._agent.stream(prompt, max_turns=max_turns):
            converted = self._convert(event)
            if converted is not None:
                answered = isinstance(converted, Response) or (
                    answered and isinstance(converted, ResponseChunk)
                )
                yield converted
        if self._rejected and not answered:
            # freeact ends a turn with a rejected call on this response.
            yield ResponseChunk(REJECTED, agent_id=self.agent_id)
            yield Response(REJECTED, agent_id=self.agent_id)

    def _decider(self, request: ours.ApprovalRequest) -> Callable[[bool], None]:
        def decide(decision: bool) -> None:
            if not decision and not request.decided:
                self._rejected.add(request.corr_id)
            request.approve(decision)

        return decide

    def _convert(self, event: ours.AgentEvent) -> AgentEvent | None:
        match event:
            case ours.ApprovalRequest(tool_call=call):
                if event.decision is not None and not event.decision.approved:
                    self._rejected.add(event.corr_id)
                return ApprovalRequest(from_ours(call), self._decider(event), event.approved, **ids(event))
            case ours.ThoughtsChunk(content=content):
                return ThoughtsChunk(content, **ids(event))
            case ours.Thoughts(content=content):
                return Thoughts(content, **ids(event))
            case ours.ResponseChunk(content=content):
                return ResponseChunk(content, **ids(event))
            case ours.Response(content=content):
                return Response(content, **ids(event))
            case ours.CodeExecutionOutputChunk(text=text):
                return CodeExecutionOutputChunk(text, **ids(event))
            case ours.CodeExecutionOutput(text=text, images=images, truncated=truncated):
                rejected = event.corr_id in self._rejected
                return CodeExecutionOutput(
                    text, list(images), truncated=truncated, approval_rejected=rejected, **ids(event)
                )
            case ours.ToolOutput(content=content):
                return ToolOutput(content, **ids(event))
            case ours.Cancelled(phase=phase):
                return Cancelled(phase=cancelled_phase(phase), **ids(event))
            case ours.AgentError(message=message):
                raise AgentTurnError(message)
        return None
