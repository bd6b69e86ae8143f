"""The start of a turn: the session must be writable, MCP servers ready, the prompt (and, first, the system prompt) recorded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserContent, UserPromptPart

from freeact_tui.actions.ports import EventPorts
from freeact_tui.agent.prompts import build_system_prompt
from freeact_tui.agent.recorder import Recorder
from freeact_tui.agent.runtime import McpApis, Runtime
from freeact_tui.agent.turn.state import TurnError
from freeact_tui.events import AgentError, ProjectFileRefused
from freeact_tui.mcp.gentools import gentools_root, gentools_section
from freeact_tui.mcp.ptc import package_name
from freeact_tui.mcp.servers import McpServerError
from freeact_tui.mcp.setup import McpSetup
from freeact_tui.project import refusals
from freeact_tui.store.prompt_record import prompt_metadata


@dataclass
class TurnOpening:
    """Opens the turns of one agent."""

    runtime: Runtime
    recorder: Recorder
    mcp: McpSetup
    ports: EventPorts

    def system_prompt(self, apis: McpApis | None = None) -> str:
        """The system prompt, describing ``apis`` (the MCP APIs the agent knows)."""
        custom = self.runtime.settings.system_prompt
        if custom is not None:
            return custom
        working_dir = self.runtime.settings.working_dir
        trusted = self.runtime.settings.project_trusted
        return build_system_prompt(
            working_dir,
            mcp_apis=(apis or self.runtime.apis).description,
            subagents=self.runtime.subagents_enabled,
            # A project's saved tools describe themselves to the model: not before it is trusted.
            gentools=gentools_section(gentools_root(working_dir), working_dir) if trusted else None,
            protocol=self.runtime.settings.action_protocol,
            project=trusted,
        )

    def _first_system_prompt(self, apis: McpApis) -> str:
        """The system prompt the session starts with; each project file it did not use is told to the
        front end (``ProjectFileRefused``: the TUI's log, ``run``'s stderr, an ACP info line)."""
        with refusals.collecting() as refused:
            prompt = self.system_prompt(apis)
        folder = self.runtime.settings.working_dir
        for refusal in refused:
            text = refusals.notice(refusal, folder)
            self.ports.emit(ProjectFileRefused(text, refusal.reason.value, **self.ports.ids("")))
        return prompt

    async def __call__(self, known: McpApis, prompt: str | Sequence[UserContent], added: int = 0) -> McpApis:
        """Record the prompt of a new turn (its first ``added`` characters or items the agent put there).

        Returns ``known``, the MCP APIs the agent knew, with what this opening learned (the servers are ready).

        Raises:
            TurnError: the session is read-only.
        """
        recorder = self.recorder
        if recorder.load_damage is not None or recorder.locked is not None:
            raise TurnError(
                "config",
                f"This session is read-only: {recorder.load_damage or recorder.locked}. Start a new session to go on.",
            )
        for problem in await self.mcp.ready():
            self.ports.emit(AgentError(problem, kind="config", **self.ports.ids("")))
        apis = known.after(McpApis(self.mcp.description(), self._ptc_allow_list() if self.mcp.apis is not None else None))
        first = not recorder.history
        parts: list[Any] = [SystemPromptPart(self._first_system_prompt(apis))] if first else []
        parts.append(UserPromptPart(prompt if isinstance(prompt, str) else list(prompt)))
        recorder.record(ModelRequest(parts=parts, metadata=prompt_metadata(added)))
        session = recorder.session
        if session is not None and self.runtime.role.writes_session_meta:  # how to resume it (written when it changed)
            session.update_meta(launch=self.runtime.launch(), home=str(self.runtime.settings.working_dir))
        if session is not None and self.runtime.role.writes_session_meta and first:
            title = prompt[added:].lstrip("\n") if isinstance(prompt, str) else "(multimodal prompt)"
            session.update_meta(
                title=title, cwd=str(self.runtime.settings.working_dir), model=self.runtime.model.model_name
            )
        return apis

    def _ptc_allow_list(self) -> dict[str, dict[str, Any]]:
        """The generated APIs' connection parameters, each with its server's call timeout."""
        assert self.mcp.apis is not None
        timeouts: dict[str, float] = {}
        for name, config in self.mcp.ptc.items():
            try:
                timeouts[package_name(name)] = config.timeout
            except McpServerError:
                continue  # no package, so nothing to allow
        return {
            pkg: {**params, "timeout": timeouts[pkg]}
            for pkg, params in self.mcp.apis.params.items()
            if pkg in timeouts
        }


__all__ = ["TurnOpening"]
