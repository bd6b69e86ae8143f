"""freeact 0.11's ``Agent(runtime)``: this app's agent, speaking freeact's events.

Every action yields an ``ApprovalRequest`` the caller must decide (as in freeact, where rules are
the application's business: see ``PermissionManager``). A turn that fails raises, after its
messages were rolled back, as freeact's ``stream`` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic_ai.messages import UserContent

from freeact_tui import events as ours
from freeact_tui.agent.agent import Agent as _Agent
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
from freeact_tui.permissions import PermissionRules
from freeact_tui.toolcalls import CODE_TOOL, FILE_TOOLS, SUBAGENT_TOOL


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
        self._runtime = runtime
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
        names = [CODE_TOOL, *FILE_TOOLS]
        if self._runtime.enable_subagents:
            names.append(SUBAGENT_TOOL)
        return names + sorted(self._runtime.mcp_servers)

    def cancel(self) -> None:
        """Cancel the running turn (a ``Cancelled`` event ends it)."""
        self._agent.cancel()

    async def __aenter__(self) -> Agent:
        await self.start()
        return self

    async def __aexit__(self, *args: object) -> None:
        await self.stop()

    async def start(self) -> None:
        await self._agent.start()

    async def stop(self) -> None:
        await self._agent.stop()

    async def stream(
        self, prompt: str | Sequence[UserContent], max_turns: int | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn, yielding freeact's events; every ``ApprovalRequest`` must be decided.

        Raises:
            AgentTurnError: the turn failed (its messages were rolled back).
        """
        async for event in self._agent.stream(prompt, max_turns=max_turns):
            converted = self._convert(event)
            if converted is not None:
                yield converted

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
