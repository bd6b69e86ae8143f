"""The ACP agent: one ``Agent`` per ACP session, driven by ``session/prompt`` and answered over ``session/update``.

It consumes agent events only (``Agent.stream()`` and ``ApprovalRequest``), as the app does. Sessions
are the app's: the same store (a freeact project's ``.freeact/sessions`` where there is one), so a
session started in an editor resumes in the app and the other way round. See ``docs/acp.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    StopReason,
    ToolCallUpdate,
)
from pydantic_ai.messages import ModelMessage, ModelResponse

from freeact_tui.acp.client_files import ClientFiles
from freeact_tui.acp.effect_modes import effect_modes, set_effect_mode
from freeact_tui.acp.permission import CANCELLED_REASON, decision_for, permission_options
from freeact_tui.acp.plan import PlanWatch, plans_dirs
from freeact_tui.acp.prompt_content import PromptBlock, PromptError, user_content
from freeact_tui.acp.replay import replay_updates
from freeact_tui.acp.turn_updates import TurnUpdates, Update
from freeact_tui.agent.agent import Agent
from freeact_tui.config import Config, ConfigError, McpServerConfig
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput, Decision, ToolOutput
from freeact_tui.store.sessions import InvalidSessionId, SessionStore, new_session_id, validate_session_id
from freeact_tui.version import __version__

logger = logging.getLogger(__name__)

ASK_MODE = "ask"
AUTO_MODE = "auto"
MODES = [
    SessionMode(id=ASK_MODE, name="Ask", description="Ask before every action no saved rule decides."),
    SessionMode(
        id=AUTO_MODE,
        name="Approve all",
        description="Run every action no deny rule refuses, without asking (like --skip-permissions).",
    ),
]
# How long stopping a session's kernels may take when the client goes away.
STOP_TIMEOUT = 15.0

ConfigLoader = Callable[[Path], Config]
"""The config for a session's working directory (the command line's options applied)."""
AgentFactory = Callable[..., Agent]


def _error(code: int, message: str) -> RequestError:
    return RequestError(code, message)


def invalid_params(message: str) -> RequestError:
    return _error(-32602, message)


@dataclass
class AcpSession:
    """One ACP session: its agent, its permission mode and what its running turn waits for."""

    id: str
    agent: Agent
    working_dir: Path
    plans: PlanWatch
    files: ClientFiles | None = None
    """The client's ``fs/*`` methods, when it offers them (the file tools go through them)."""
    mode: str = ASK_MODE
    asking: set[asyncio.Task[None]] = field(default_factory=set)
    cancel_requested: bool = False


class FreeactAcpAgent:
    """The ACP agent side (``acp.interfaces.Agent``) of freeact-tui.

    Args:
        load_config: the config for a working directory (a session's ``cwd``).
        agent_factory: builds an ``Agent`` from a config (``Agent.from_config`` and its keywords).
    """

    def __init__(self, load_config: ConfigLoader, agent_factory: AgentFactory = Agent.from_config) -> None:
        self._load_config = load_config
        self._agent_factory = agent_factory
        self._conn: Client | None = None
        self._client_capabilities: ClientCapabilities | None = None
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    @property
    def client(self) -> Client:
        if self._conn is None:
            raise RuntimeError("no client connection")
        return self._conn

    # -- initialize, authenticate -------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self._client_capabilities = client_capabilities
        logger.info("ACP client %s, protocol %s", client_info, protocol_version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), close=SessionCloseCapabilities()
                ),
            ),
            agent_info=Implementation(name="freeact-tui", title="freeact-tui", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        # Provider keys come from the environment; there is nothing to authenticate here.
        return AuthenticateResponse()

    # -- sessions ---------------------------------------------------------------------------------------

    def _config(self, cwd: str, mcp_servers: Sequence[Any] | None) -> Config:
        path = Path(cwd)
        if not path.is_absolute():
            raise invalid_params(f"cwd must be an absolute path, not {cwd!r}")
        if not path.is_dir():
            raise invalid_params(f"cwd {cwd!r} is not a directory")
        try:
            config = self._load_config(path)
        except ConfigError as exc:
            raise invalid_params(str(exc)) from None
        servers = dict(config.mcp_servers)
        servers.update(client_mcp_servers(mcp_servers or []))
        return config.model_copy(update={"working_dir": path, "mcp_servers": servers})

    async def _open(self, config: Config, session_id: str | None) -> AcpSession:
        from freeact_tui.agent.models import ModelSetupError, missing_setup

        problem = missing_setup(config.model, config.base_url, config.api_key_env)
        if problem:
            raise RequestError.auth_required({"message": problem})
        session_id = session_id or new_session_id()
        files = self._client_files(config, session_id)
        try:
            agent = self._agent_factory(config, session_id=session_id, file_access=files)
        except (ModelSetupError, ValueError) as exc:
            raise invalid_params(str(exc)) from None
        await agent.start()
        working_dir = config.resolved_working_dir()
        session = AcpSession(agent.session_id, agent, working_dir, PlanWatch(plans_dirs(working_dir)), files)
        if config.skip_permissions:
            session.mode = AUTO_MODE
        self.sessions[session.id] = session
        return session

    def _client_files(self, config: Config, session_id: str) -> ClientFiles | None:
        """The client's ``fs/*`` for the file tools, where it offers them and the kernel's files are its own."""
        fs = self._client_capabilities.fs if self._client_capabilities is not None else None
        if fs is None or not (fs.read_text_file or fs.write_text_file):
            return None
        if config.execution == "remote":  # the kernel's files are on another machine, not the editor's
            logger.info("remote execution: the file tools use the kernel's files, not the client's fs/*")
            return None
        return ClientFiles(self.client, session_id, fs)

    def _modes(self, session: AcpSession) -> SessionModeState:
        return SessionModeState(current_mode_id=session.mode, available_modes=MODES + effect_modes(session.agent))

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session = await self._open(self._config(cwd, mcp_servers), None)
        return NewSessionResponse(session_id=session.id, modes=self._modes(session))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse | None:
        config = self._config(cwd, mcp_servers)
        try:
            validate_session_id(session_id)
        except InvalidSessionId as exc:
            raise invalid_params(str(exc)) from None
        session = self.sessions.get(session_id)
        if session is None:
            store = SessionStore(config.resolved_sessions_dir())
            if not store.session(session_id).exists():
                raise _error(-32002, f"no session {session_id} in {config.resolved_sessions_dir()}")
            session = await self._open(config, session_id)
        if session.agent.load_damage is not None:
            raise invalid_params(f"the session cannot be read: {session.agent.load_damage}")
        for update in replay_updates(session.agent.history, session.working_dir):
            await self.client.session_update(session_id=session.id, update=update)
        return LoadSessionResponse(modes=self._modes(session))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        try:
            sessions = await asyncio.to_thread(self._list, cwd)
        except ConfigError as exc:
            raise invalid_params(str(exc)) from None
        return ListSessionsResponse(sessions=sessions)

    def _list(self, cwd: str | None) -> list[SessionInfo]:
        """The sessions of the store ``cwd``'s config names, newest first (only those started in ``cwd``)."""
        where = Path(cwd) if cwd else Path.cwd()
        config = self._load_config(where).model_copy(update={"working_dir": where})
        wanted = str(where.resolve()) if cwd else None
        return [
            SessionInfo(
                session_id=info.id,
                cwd=info.cwd or str(where),
                title=info.title or None,
                updated_at=info.updated.isoformat(),
            )
            for info in SessionStore(config.resolved_sessions_dir()).list()
            if wanted is None or info.cwd is None or str(Path(info.cwd).resolve()) == wanted
        ]

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        session = self._session(session_id)
        if not set_effect_mode(session.agent, mode_id) and mode_id != AUTO_MODE:
            known = ", ".join(m.id for m in MODES + effect_modes(session.agent))
            raise invalid_params(f"unknown mode {mode_id!r} (modes: {known})")
        session.mode = mode_id
        await self.client.session_update(session_id=session_id, update=update_current_mode(mode_id))
        return SetSessionModeResponse()

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid_params(f"no open session {session_id!r}: call session/new or session/load first")
        return session

    # -- turns ------------------------------------------------------------------------------------------

    async def prompt(self, prompt: list[PromptBlock], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        agent = session.agent
        if agent.busy:
            raise _error(-32600, "a prompt is already running in this session")
        if agent.session_locked is not None:
            raise _error(-32600, f"the session is open in another process: {agent.session_locked}")
        try:
            content = user_content(prompt)
        except PromptError as exc:
            raise invalid_params(str(exc)) from None
        session.cancel_requested = False
        turn = TurnUpdates(session.working_dir, session.files.texts if session.files is not None else None)
        start = len(agent.history)
        try:
            async for event in agent.stream(content):
                for update in turn.see(event):
                    await self._send(session, update)
                if isinstance(event, ApprovalRequest) and not event.decided:
                    self._ask(session, turn, event)
                elif isinstance(event, CodeExecutionOutput | ToolOutput):
                    # a call ended: it may have written the plan file
                    await self._send_plan(session)
        finally:
            await self._stop_asking(session)
        for update in turn.close_open("The turn ended before this call finished."):
            await self._send(session, update)
        await self._send_plan(session)
        return PromptResponse(stop_reason=self._stop_reason(session, turn, start))

    def _stop_reason(self, session: AcpSession, turn: TurnUpdates, start: int) -> StopReason:
        """Why the turn ended: cancelled, the model refused (its provider filtered the reply), the
        request budget ran out, or it answered."""
        if turn.cancelled or session.cancel_requested:
            return "cancelled"
        history = session.agent.history
        ended: ModelMessage | None = history[-1] if len(history) > start else None
        if isinstance(ended, ModelResponse) and ended.finish_reason == "content_filter":
            return "refusal"
        if turn.limit_reached:  # the request budget (the same error twice is kind "repeat")
            return "max_turn_requests"
        return "end_turn"

    async def _send_plan(self, session: AcpSession) -> None:
        written = session.files.take_written() if session.files is not None else None
        update = await asyncio.to_thread(session.plans.check, written)
        if update is not None:
            await self.client.session_update(session_id=session.id, update=update)

    async def _send(self, session: AcpSession, update: Update) -> None:
        await self.client.session_update(session_id=session.id, update=update)

    def _ask(self, session: AcpSession, turn: TurnUpdates, request: ApprovalRequest) -> None:
        """Decide ``request``: at once in the ``auto`` mode, else by asking the client (in a task, so the
        turn's other events keep flowing while the client shows its dialog)."""
        if session.mode == AUTO_MODE:
            request.resolve(Decision(True))
            return
        task = asyncio.create_task(self._request_permission(session, turn, request))
        session.asking.add(task)
        task.add_done_callback(session.asking.discard)

    async def _request_permission(
        self, session: AcpSession, turn: TurnUpdates, request: ApprovalRequest
    ) -> None:
        tool_call_id = turn.tool_call_id(request)
        view = turn.calls[tool_call_id].view
        decision = Decision(False, reason=CANCELLED_REASON)
        try:
            response = await self.client.request_permission(
                session_id=session.id,
                tool_call=ToolCallUpdate(
                    tool_call_id=tool_call_id,
                    title=view.title,
                    kind=view.kind,
                    status="pending",
                    content=view.content or None,
                    locations=view.locations or None,
                    raw_input=view.raw_input,
                ),  # fmt: skip
                options=permission_options(request.tool_call, request.effect_class),
            )
            decision = decision_for(response, request.tool_call, request.effect_class)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the client failed to answer or is gone: nobody approved it
            logger.warning("request_permission failed: %s", exc)
            decision = Decision(False, reason=f"the client did not answer the permission request ({exc})")
        finally:
            if not request.decided:
                request.resolve(decision)
                with contextlib.suppress(Exception):
                    for update in turn.decided(request, decision):
                        await asyncio.shield(self._send(session, update))

    async def _stop_asking(self, session: AcpSession) -> None:
        """Cancel the permission requests still waiting (their requests are rejected)."""
        tasks = list(session.asking)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            return
        session.cancel_requested = True
        session.agent.cancel()
        for task in list(session.asking):
            task.cancel()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        """End the session here: its running turn is cancelled (the history stays valid), its kernels and
        MCP servers stop and its writer lock is released, so it can be loaded again (here or in the app)."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise invalid_params(f"no open session {session_id!r}")
        session.cancel_requested = True
        for task in list(session.asking):
            task.cancel()
        try:
            await asyncio.wait_for(session.agent.stop(), STOP_TIMEOUT)
        except Exception as exc:
            logger.exception("closing session %s failed", session_id)
            raise _error(-32603, f"the session could not be closed cleanly: {exc}") from None
        return CloseSessionResponse()

    # -- the end ----------------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Cancel every turn and stop every agent (kernels, MCP servers): the client is gone."""
        sessions, self.sessions = list(self.sessions.values()), {}

        async def stop(session: AcpSession) -> None:
            for task in list(session.asking):
                task.cancel()
            try:
                await asyncio.wait_for(session.agent.stop(), STOP_TIMEOUT)
            except Exception:
                logger.exception("stopping session %s failed", session.id)

        await asyncio.gather(*(stop(s) for s in sessions))


def client_mcp_servers(servers: Sequence[Any]) -> dict[str, McpServerConfig]:
    """The MCP servers a client passed, as config entries (added to the config's, by name).

    Raises:
        RequestError: an SSE server (``mcpCapabilities.sse`` is false) or an ACP-transport server.
    """
    out: dict[str, McpServerConfig] = {}
    for server in servers:
        match server:
            case McpServerStdio(name=name, command=command, args=args, env=env):
                out[name] = McpServerConfig(
                    command=command, args=list(args), env={e.name: e.value for e in env}
                )
            case HttpMcpServer(name=name, url=url, headers=headers):
                out[name] = McpServerConfig(url=url, headers={h.name: h.value for h in headers})
            case _:
                kind = getattr(server, "type", type(server).__name__)
                name = getattr(server, "name", "?")
                raise invalid_params(
                    f"MCP server {name!r}: transport {kind!r} is not supported (stdio and http are)"
                )
    return out


__all__ = ["ASK_MODE", "AUTO_MODE", "AcpSession", "FreeactAcpAgent", "client_mcp_servers"]
