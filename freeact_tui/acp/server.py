"""The ACP agent: one ``Agent`` per ACP session, driven by ``session/prompt`` and answered over ``session/update``.

It consumes agent events only (``Agent.stream()`` and ``ApprovalRequest``), as the app does. Sessions
are the app's: the same store (a freeact project's ``.freeact/sessions`` where there is one), so a
session started in an editor resumes in the app and the other way round. See ``docs/acp.md``.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    ConfigOptionUpdate,
    ForkSessionResponse,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionForkCapabilities,
    SessionListCapabilities,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
)

from freeact_tui.acp.client_files import ClientFiles
from freeact_tui.acp.client_mcp import client_mcp_servers
from freeact_tui.acp.client_paths import client_folder
from freeact_tui.acp.client_requests import ClientLink
from freeact_tui.acp.effect_modes import effect_modes
from freeact_tui.acp.errors import internal_error, invalid_params, session_unusable, unknown_session
from freeact_tui.acp.folder_trust import ask_trust
from freeact_tui.acp.model_option import MODEL_OPTION, model_choices, model_option
from freeact_tui.acp.plan import PlanWatch, plans_dirs
from freeact_tui.acp.prompt_content import PromptBlock, PromptError, user_content
from freeact_tui.acp.replay import replay_updates
from freeact_tui.acp.session import ASK_MODE, AUTO_MODE, MODE_TABLE, AcpSession
from freeact_tui.acp.session_end import cancel_turns, end_session, run_turn, settle, stop_agent
from freeact_tui.acp.stored import StoredSettings, copy_history, listed_sessions, stored_settings
from freeact_tui.acp.turn_runner import TurnRunner
from freeact_tui.agent.agent import Agent
from freeact_tui.agent.demo_model import DEMO_MODEL, demo_model
from freeact_tui.project.config import Config, ConfigError, McpServerConfig
from freeact_tui.store.index import META_FILE
from freeact_tui.store.lock import SessionLocked
from freeact_tui.store.open_turn import open_turn_sizes
from freeact_tui.store.session import Session
from freeact_tui.store.sessions import InvalidSessionId, SessionStore, new_session_id, validate_session_id
from freeact_tui.text.safe import one_line
from freeact_tui.version import __version__

logger = logging.getLogger(__name__)

MODES = [spec.as_acp() for spec in MODE_TABLE]
# After the answer that opens a session, before its commands are announced (the answer goes out first).
ANNOUNCE_DELAY = 0.05

ConfigLoader = Callable[[Path], Config]
"""The config for a session's working directory (the command line's options applied)."""
AgentFactory = Callable[..., Agent]


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
        self._open_locks: dict[str, asyncio.Lock] = {}
        """One lock per session id, held while the session is opened or closed here: opening is atomic
        (a second load/resume of an id being opened waits and gets the same session, never a second agent)
        and a close waits for an open in flight."""
        self._turns: TurnRunner | None = None
        self._files: dict[str, ClientFiles] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = cast(Client, ClientLink(conn))  # a client gone: its updates dropped, not errors
        self._turns = TurnRunner(self._conn)

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
                    list=SessionListCapabilities(),
                    close=SessionCloseCapabilities(),
                    resume=SessionResumeCapabilities(),
                    fork=SessionForkCapabilities(),
                ),
            ),
            agent_info=Implementation(name="freeact-tui", title="freeact-tui", version=__version__),
            auth_methods=[],
        )

    async def initialize_from(self, params: dict[str, Any]) -> None:
        """Take in an ``initialize`` already answered (``handshake``): the client's capabilities."""
        try:
            request = InitializeRequest.model_validate(params)
        except ValueError as exc:
            logger.warning("the early initialize did not validate: %s", exc)
            return
        await self.initialize(request.protocol_version, request.client_capabilities, request.client_info)

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        # Provider keys come from the environment; there is nothing to authenticate here.
        return AuthenticateResponse()

    # -- sessions ---------------------------------------------------------------------------------------

    def _config(self, cwd: str, client_mcp: dict[str, McpServerConfig]) -> Config:
        path = client_folder(cwd)
        try:
            config = self._load_config(path)
        except ConfigError as exc:
            raise invalid_params(str(exc)) from None
        except OSError as exc:  # the folder's files cannot be read (a path beyond PATH_MAX, a folder gone)
            raise invalid_params(
                f"the config of {str(path)[:120]!r} cannot be read: {exc.strerror or exc}"
            ) from None
        return _for_session(config, path, client_mcp)

    async def _open(
        self,
        config: Config,
        session_id: str | None,
        client_mcp: dict[str, McpServerConfig],
        settings_of: str | None = None,
    ) -> AcpSession:
        """A session here, with the model and mode stored with it (or with ``settings_of``: a fork's source)."""
        session_id = session_id or new_session_id()
        settings = await stored_settings(config, settings_of or session_id)
        model = settings.model or config.model or ""
        files = self._client_files(config, session_id)
        agent = await self._start_agent(config, session_id, model)
        refusal = _refusal(agent)
        if refusal is not None:  # it opens, but no prompt could run: refused now, not at its first prompt
            self._files.pop(session_id, None)
            await _stop(agent)
            raise refusal
        try:
            return await self._opened_agent(agent, config, client_mcp, files, model, settings)
        except Exception:  # not yet a session of this process: its agent stops here (a session: the caller's)
            if self.sessions.get(agent.session_id) is None:
                self._files.pop(session_id, None)
                await _stop(agent)
            raise

    async def _opened_agent(
        self,
        agent: Agent,
        config: Config,
        client_mcp: dict[str, McpServerConfig],
        files: ClientFiles | None,
        model: str,
        settings: StoredSettings,
    ) -> AcpSession:
        """``agent`` (started, its session usable here) made a session of this process."""
        working_dir = config.resolved_working_dir()
        session = AcpSession(
            agent.session_id, agent, config, working_dir, PlanWatch(plans_dirs(working_dir)),
            files, model=model or agent.model_name, client_mcp=client_mcp,
        )  # fmt: skip
        if config.skip_permissions:
            session.mode = AUTO_MODE
        # a stored mode no longer offered (a sandbox mode outside the sandbox) leaves it in ask
        restored = (
            settings.mode is not None and not config.skip_permissions and session.set_mode(settings.mode)
        )
        state = config.trust_state
        session.trust_asked = state is None or state.trusted
        self.sessions[session.id] = session
        self._remember(session, mode=session.mode if restored else None)  # a fork keeps it too
        _hold(agent)  # its meta is written: from now on no other process can open it
        await self.turns.refresh_commands(session)
        return session

    def _announce_later(self, session: AcpSession) -> None:
        """Announce the session's commands and context fill once the answer that opens it has gone out."""

        async def announce() -> None:
            await asyncio.sleep(ANNOUNCE_DELAY)
            try:
                await self.turns.announce(session)
            except ConnectionError:  # the client closed stdin right after the answer: a normal end
                logger.info("the client went away before the commands of %s were announced", session.id)
            except Exception:  # a skills dir that cannot be read: no commands
                logger.exception("announcing the commands of %s failed", session.id)

        session.start(announce())  # the session's own: its close cancels it (nothing is announced after)

    async def _start_agent(self, config: Config, session_id: str, model: str) -> Agent:
        from freeact_tui.agent.models import ModelSetupError, missing_setup

        if model and model != config.model:
            config = config.model_copy(update={"model": model})
        problem = missing_setup(config.model, config.base_url, config.api_key_env, config.provider_keys)
        if problem:
            raise RequestError.auth_required({"message": problem})
        own: dict[str, Any] = {}
        if (config.model or "").strip() == DEMO_MODEL:  # its tour names an editor's menus, not the app's keys
            own["model"] = demo_model(front_end="acp")
        try:
            agent = self._agent_factory(
                config, session_id=session_id, file_access=self._files.get(session_id), **own
            )
        except (ModelSetupError, ValueError) as exc:
            raise invalid_params(str(exc)) from None
        await agent.start()
        return agent

    async def _reopen(
        self, session: AcpSession, *, config: Config | None = None, model: str | None = None
    ) -> None:
        """The session's agent made again (same id, its history loaded again) with another config or model,
        as the app's ``/model`` and its trust prompt do; the kernel starts afresh."""
        config = config or session.config
        model = model or session.model
        agent = await self._start_agent(config, session.id, model)
        old, session.agent, session.config, session.model = session.agent, agent, config, model
        session.set_mode(session.mode)  # the new agent's gate in the session's mode
        await _stop(old)
        if agent.session is not None:  # the old agent's lock went with it: this one takes it again
            agent.session.unlock()  # (it releases nothing: the lock was the old one's)
        _hold(agent)

    def _client_files(self, config: Config, session_id: str) -> ClientFiles | None:
        """The client's ``fs/*`` for the file tools, where it offers them and the kernel's files are its own."""
        fs = self._client_capabilities.fs if self._client_capabilities is not None else None
        if fs is None or not (fs.read_text_file or fs.write_text_file):
            return None
        if config.execution == "remote":  # the kernel's files are on another machine, not the editor's
            logger.info("remote execution: the file tools use the kernel's files, not the client's fs/*")
            return None
        files = ClientFiles(self.client, session_id, fs)
        self._files[session_id] = files
        return files

    def _modes(self, session: AcpSession) -> SessionModeState:
        return SessionModeState(
            current_mode_id=session.mode, available_modes=MODES + effect_modes(session.agent)
        )

    async def _options(
        self, session: AcpSession
    ) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        return [model_option(await model_choices(session.config, session.model), session.model)]

    async def _opened(
        self, session: AcpSession
    ) -> tuple[SessionModeState, list[SessionConfigOptionSelect | SessionConfigOptionBoolean]]:
        """The modes and options of the answer that opens ``session``; its announcement is scheduled only
        now, after all the answer waited for (a replay, the model list), so that it follows the answer."""
        modes, options = self._modes(session), await self._options(session)
        self._announce_later(session)
        return modes, options

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        client_mcp = client_mcp_servers(mcp_servers or [])
        session = await self._open(self._config(cwd, client_mcp), None, client_mcp)
        modes, options = await self._opened(session)
        return NewSessionResponse(session_id=session.id, modes=modes, config_options=options)

    def _stored_config(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None
    ) -> tuple[Config, dict[str, McpServerConfig]]:
        """The checks of a ``session/load`` or ``session/resume`` that need no wait (invalid params at once)."""
        client_mcp = client_mcp_servers(mcp_servers or [])
        config = self._config(cwd, client_mcp)
        try:
            validate_session_id(session_id)
        except InvalidSessionId as exc:
            raise invalid_params(str(exc)) from None
        return config, client_mcp

    async def _stored_session(
        self, config: Config, session_id: str, client_mcp: dict[str, McpServerConfig]
    ) -> AcpSession:
        """A session of the store, opened here (or as it is open already); the caller holds its open lock."""
        session = self.sessions.get(session_id)
        if session is None:
            if not _in_store(SessionStore(config.resolved_sessions_dir()).session(session_id)):
                raise unknown_session(session_id, f"in {config.resolved_sessions_dir()}")
            session = await self._open(config, session_id, client_mcp)
        elif session.working_dir != config.resolved_working_dir():
            # its kernel runs in the folder it was opened in: never answered as if it ran in another
            raise invalid_params(
                f"session {session_id} is open here in {str(session.working_dir)[:120]!r}; "
                "close it (session/close) to open it in another folder"
            )
        return session

    @asynccontextmanager
    async def _all_or_nothing(self, session_id: str) -> AsyncIterator[None]:
        """An open (load, resume, fork) is all or nothing: whatever fails once it began (the replay, the
        model list, anything) leaves no session open here that was not open before it (its kernels stopped,
        its writer lock released), and the answer is a protocol error: a refusal as it was raised, anything
        else the one refusal of an open (``session_unusable``), never an internal error."""
        was_open = session_id in self.sessions
        try:
            yield
        except Exception as exc:
            if not was_open:
                await self._discard(session_id)
            if isinstance(exc, RequestError):
                raise
            logger.exception("opening session %s failed", session_id)
            raise session_unusable(session_id, f"it could not be opened ({one_line(str(exc), 200)})") from None

    async def _discard(self, session_id: str) -> None:
        """A session this process opened taken back at once (an open that failed): nothing is left of it."""
        session = self.sessions.pop(session_id, None)
        self._files.pop(session_id, None)
        if session is None:
            return
        session.cancel_requested = True
        session.queue.cancel()
        session.cancel_tasks()
        await _stop(session.agent)

    def _open_lock(self, session_id: str) -> asyncio.Lock:
        return self._open_locks.setdefault(session_id, asyncio.Lock())

    async def _after_open(self, session_id: str) -> AcpSession:
        """The session ``session_id`` for a request sent after a ``session/load`` or ``session/resume`` of it
        (answered or not): it waits for that open (the open lock is FIFO, and acquiring a free one does not
        yield), then finds the session, in arrival order; the caller takes its place in the session's queue
        before its next ``await``."""
        lock = self._open_locks.get(session_id)
        if lock is not None:
            async with lock:
                pass
        return self._session(session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse | None:
        config, client_mcp = self._stored_config(cwd, session_id, mcp_servers)
        async with self._open_lock(session_id), self._all_or_nothing(session_id):
            # the lock is taken before the first await: what is sent after waits
            session = await self._stored_session(config, session_id, client_mcp)
            for update in replay_updates(session.agent.history, session.working_dir):
                await self.client.session_update(session_id=session.id, update=update)
            modes, options = await self._opened(session)
        return LoadSessionResponse(modes=modes, config_options=options)

    async def resume_session(
        self, session_id: str, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        """``session/load`` without the replay: the client has the conversation already."""
        config, client_mcp = self._stored_config(cwd, session_id, mcp_servers)
        async with self._open_lock(session_id), self._all_or_nothing(session_id):
            session = await self._stored_session(config, session_id, client_mcp)
            modes, options = await self._opened(session)
        return ResumeSessionResponse(modes=modes, config_options=options)

    async def fork_session(
        self, session_id: str, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ForkSessionResponse:
        """A new session that starts with the stored conversation of ``session_id`` up to its last completed
        point (a turn open in any process is left out: ``store.open_turn``); the source goes on unchanged,
        its open turn too."""
        client_mcp = client_mcp_servers(mcp_servers or [])
        config = self._config(cwd, client_mcp)
        try:
            validate_session_id(session_id)
        except InvalidSessionId as exc:
            raise invalid_params(str(exc)) from None
        store = SessionStore(config.resolved_sessions_dir())
        source = store.session(session_id)
        if not _in_store(source):
            raise unknown_session(session_id, f"in {config.resolved_sessions_dir()}")
        fork_id = new_session_id()
        copy = store.session(fork_id).dir
        # a turn open in the source (here or in another process) is left out: copied up to where it began
        await asyncio.to_thread(copy_history, source.dir, copy, open_turn_sizes(source.dir))
        try:  # a source another process writes forks well (the copy is this process's); a damaged one not
            async with self._all_or_nothing(fork_id):
                session = await self._open(config, fork_id, client_mcp, settings_of=session_id)
                modes, options = await self._opened(session)
        except Exception:
            await asyncio.to_thread(shutil.rmtree, copy, True)
            raise
        return ForkSessionResponse(session_id=session.id, modes=modes, config_options=options)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        folder = str(client_folder(cwd)) if cwd is not None else None  # the check of every method with a cwd ("" too)
        try:
            sessions = await asyncio.to_thread(listed_sessions, self._load_config, folder)
        except ConfigError as exc:
            raise invalid_params(str(exc)) from None
        except OSError as exc:
            raise invalid_params(
                f"the sessions of {cwd!r:.120} cannot be listed: {exc.strerror or exc}"
            ) from None
        return ListSessionsResponse(sessions=sessions)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        """The session's approval mode, from the next prompt sent after this request on (in order)."""
        session = await self._after_open(session_id)
        async with self._in_order(session):
            if not session.set_mode(mode_id):
                raise invalid_params(f"unknown mode {mode_id!r} (modes: {', '.join(session.known_modes())})")
            self._remember(session, mode=mode_id)  # a later load or resume (here or elsewhere) opens in it
            await self.client.session_update(session_id=session_id, update=update_current_mode(mode_id))
        return SetSessionModeResponse()

    @asynccontextmanager
    async def _in_order(self, session: AcpSession) -> AsyncIterator[None]:
        """A settings change of ``session`` in its place among the session's requests: after every prompt
        (and change) sent before it, before every one sent after it (``TurnQueue``; a cancel voids prompts,
        not changes). Its ticket is taken at once, so a handler enters this before its first ``await``."""
        async with session.queue.turn():
            if self.sessions.get(session.id) is not session:  # closed while it waited
                raise unknown_session(session.id)
            yield

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        """``model``: the prompts sent after this request talk to ``value`` (one of the offered models), those
        sent before it to the model they were sent to (in order); it is stored with the session."""
        session = await self._after_open(session_id)
        async with self._in_order(session):  # the first await: its place is where it was sent
            if config_id != MODEL_OPTION:
                raise invalid_params(f"unknown config option {config_id!r} (options: {MODEL_OPTION})")
            names = [c.name for c in await model_choices(session.config, session.model)]
            if not isinstance(value, str) or value not in names:
                raise invalid_params(f"unknown model {value!r} (models: {', '.join(names)})")
            if value != session.model:
                await self._reopen(session, model=value)
                self._remember(session)
                await self.turns.send_usage(session)  # another model: another context window
            options = await self._options(session)
            await self.client.session_update(
                session_id=session_id,
                update=ConfigOptionUpdate(session_update="config_option_update", config_options=options),
            )
        return SetSessionConfigOptionResponse(config_options=options)

    def _remember(self, session: AcpSession, mode: str | None = None) -> None:
        """The session's model, the mode the client chose and its folder in its meta; this also makes a
        session that has had no prompt yet exist in the store, so that another process (acpx runs one per
        command) can open it as it was left."""
        stored = session.agent.session
        if stored is not None:
            try:
                stored.update_meta(
                    home=str(session.working_dir),  # whichever way it was made (new, fork, load): never none
                    model=session.model,
                    approval_mode=mode,
                )
            except Exception:
                logger.exception("recording the model of %s failed", session.id)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise unknown_session(session_id)
        return session

    # -- turns ------------------------------------------------------------------------------------------

    async def prompt(self, prompt: list[PromptBlock], session_id: str, **kwargs: Any) -> PromptResponse:
        """One turn; a prompt sent while another runs waits its turn (in order)."""
        try:
            content = user_content(prompt)
        except PromptError as exc:
            raise invalid_params(str(exc)) from None
        session = await self._after_open(session_id)
        async with session.queue.turn() as go:
            if not go:  # a cancel (or close, or the server's end) sent after it, while it waited
                return PromptResponse(stop_reason="cancelled")
            if self.sessions.get(session_id) is not session:  # a close sent before it was handled first
                raise unknown_session(session_id)
            refusal = _refusal(session.agent)  # refused at open; a lock lost since (a deleted lock file) here
            if refusal is not None:
                raise refusal
            session.cancel_requested = False
            await self._settle_trust(session)
            if session.cancel_requested:  # cancelled while the client was asked about the folder
                return PromptResponse(stop_reason="cancelled")
            only = prompt[0] if len(prompt) == 1 else None
            text = only.text if isinstance(only, TextContentBlock) else ""
            # answered by the turn, or ``cancelled`` by the session's end, whatever the turn does
            stop = await run_turn(session, self.turns.run_prompt(session, text, content))
            self._remember(session)
            return PromptResponse(stop_reason=stop)

    async def _settle_trust(self, session: AcpSession) -> None:
        """Before the first turn: ask the client whether the folder's project files may apply."""
        if session.trust_asked:
            return
        session.trust_asked = True
        # a session/cancel cancels the question, as it cancels a permission request
        asking = session.start(ask_trust(self.client, session.id, session.config), asking=True)
        try:
            trusted = await asking
        except asyncio.CancelledError:
            this = asyncio.current_task()
            if not session.cancel_requested or (this is not None and this.cancelling()):
                raise  # this prompt itself was cancelled (the client is gone), not only the question
            session.trust_asked = False  # the next prompt asks again
            return
        if trusted is not session.config and not session.cancel_requested:
            await self._reopen(session, config=_for_session(trusted, session.working_dir, session.client_mcp))
            await self.turns.announce(session)  # the project's own skills now apply

    @property
    def turns(self) -> TurnRunner:
        if self._turns is None:
            raise RuntimeError("no client connection")
        return self._turns

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        try:  # a cancel sent after a load of it, before its answer, cancels the prompts sent before it
            session = await self._after_open(session_id)
        except RequestError:
            return  # a notification: nothing to answer for an unknown session
        cancel_turns(session)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        """End the session here: its running turn and the prompts sent before this close are cancelled (the
        history stays valid), then, in its place among the session's requests (after every change sent
        before it: they are answered as if handled first), its kernels and MCP servers stop and its writer
        lock is released, so it can be loaded again (here or in the app). A request sent after it finds no
        session. A close of a session being opened waits for the open, then closes it."""
        session = self.sessions.get(session_id)
        if session is None:
            async with self._open_lock(session_id):  # a load of it after this close opens it afresh
                await self._close(session_id)
            return CloseSessionResponse()
        cancel_turns(session)  # before the first await: the prompts sent before it, not after
        # the running turn ends (or is abandoned) within its bound, so the place in the queue comes; the open
        # lock first (a free one is taken without a wait), held until the session is gone: a load or resume
        # sent after this close waits for it and opens afresh, never the session being closed
        settling = session.start(settle(session, self.client))
        async with self._open_lock(session_id), session.queue.turn():
            await asyncio.wait({settling})
            await self._close(session_id)
        return CloseSessionResponse()

    async def _close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise unknown_session(session_id)
        self._files.pop(session_id, None)
        session.cancel_requested = True
        session.queue.cancel()
        session.cancel_tasks()
        try:
            await stop_agent(session.agent)  # bounded; what it could not stop ends with the process
        except Exception as exc:
            logger.exception("closing session %s failed", session_id)
            raise internal_error(f"the session could not be closed cleanly: {exc}") from None

    async def unreadable_line(self) -> None:
        """A line from the client could not be read (it was answered -32700 or -32600 with ``id: null``): no
        request of ours can be matched to it, so none is answered or cancelled by it; the calls whose
        permission requests wait say so in the session (``TurnRunner.note_unreadable``)."""
        if self._turns is None:
            return
        for session in list(self.sessions.values()):
            await self._turns.note_unreadable(session)

    # -- the end ----------------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """End every session (``session_end``, bounded): the client is gone or the process ends. Each running
        prompt is answered ``cancelled`` and its open tool calls end ``failed``; every agent is stopped
        (kernels, MCP servers)."""
        sessions, self.sessions = list(self.sessions.values()), {}
        self._files.clear()

        async def end(session: AcpSession) -> None:
            try:
                await end_session(session, self.client)
            except Exception:
                logger.exception("stopping session %s failed", session.id)

        await asyncio.gather(*(end(s) for s in sessions))


def _refusal(agent: Agent) -> RequestError | None:
    """Why the session of ``agent`` (just started) cannot be used in this process, or ``None``: its history
    is damaged, or another process writes it (its writer lock is taken here otherwise)."""
    if agent.load_damage is not None:
        return session_unusable(agent.session_id, f"its history cannot be read ({agent.load_damage})")
    stored = agent.session
    if stored is None:
        return None
    try:
        stored.lock()
    except SessionLocked as exc:
        return session_unusable(agent.session_id, str(exc))
    return None


def _hold(agent: Agent) -> None:
    """Take the writer lock of ``agent``'s session if it has not yet (a new session, once its directory
    exists); a lock another process took meanwhile is refused at the next prompt."""
    stored = agent.session
    if stored is None:
        return
    try:
        stored.lock()
    except SessionLocked as exc:
        logger.warning("%s", exc)


async def _stop(agent: Agent) -> None:
    try:
        await stop_agent(agent)
    except Exception:
        logger.exception("stopping the agent of %s failed", agent.session_id)


def _in_store(stored: Session) -> bool:
    """A session of the store: one with a history, or one opened over ACP that has had no prompt yet."""
    return stored.exists() or (stored.dir / META_FILE).is_file()


def _for_session(config: Config, cwd: Path, client_mcp: dict[str, McpServerConfig]) -> Config:
    """``config`` for a session in ``cwd``: its working dir, the client's MCP servers added (they win)."""
    servers = {**config.mcp_servers, **client_mcp}
    return config.model_copy(update={"working_dir": cwd, "mcp_servers": servers})


__all__ = ["ASK_MODE", "AUTO_MODE", "MODES", "AcpSession", "FreeactAcpAgent", "client_mcp_servers"]
