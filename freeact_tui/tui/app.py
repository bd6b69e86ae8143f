"""The Textual application: owns the agent, handles slash commands, quits cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel

from freeact_tui import typeahead
from freeact_tui.project import paths
from freeact_tui.project.sources import ConfigError, DeferredConfig, LaunchView
from freeact_tui.text.safe import visible
from freeact_tui.timeline import mark
from freeact_tui.tui import terminal_keys
from freeact_tui.tui.clipboard import copy_to_os_clipboard
from freeact_tui.tui.commands import (
    SlashCommand,
    SlashCommandProvider,
    SlashError,
    get_command,
    is_escaped,
    parse_slash,
    unescape_prompt,
)
from freeact_tui.tui.exit_signals import ExitSignals
from freeact_tui.tui.quit_keys import QuitKeys
from freeact_tui.tui.quitting import settle_for_exit
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.themes import ConfiguredTheme
from freeact_tui.tui.toast_place import keep_toasts_off_dialogs
from freeact_tui.tui.widgets.session_list import Clock

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from freeact_tui.agent.agent import Agent
    from freeact_tui.agent.kernel_launch import KernelLaunch
    from freeact_tui.events import KernelState
    from freeact_tui.project.config import Config
    from freeact_tui.tui.widgets.blocks import ActionBlock

SlashOutcome = Literal["prompt", "done", "invalid"]

# What the agent needs (pydantic-ai and its providers: ~0.5 s of imports). The first screen does not:
# the app draws it and takes keys first, and imports these in a thread.
_AGENT_MODULES = ("freeact_tui.agent.agent", "freeact_tui.agent.models")


def _import_agent_modules() -> None:
    for module in _AGENT_MODULES:
        importlib.import_module(module)


_NO_MODEL = (
    "No model is configured. Start with --model PROVIDER:NAME (for example anthropic:claude-sonnet-4-5, "
    'openai:gpt-4o, google-gla:gemini-2.5-flash or ollama:llama3.2), set model = "…" in {config}, '
    "or type /model NAME here. Provider keys come from their usual environment variables "
    "(ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, …). To try the app offline: /model demo."
)


class FreeactApp(App[None]):
    """The freeact terminal app.

    Args:
        config: Validated settings, or (the command line) settings validated once the first frame is
            drawn: a failure then ends the app with ``config_failure`` set.
        model: Overrides ``config.model`` (a ``provider:name`` string or a pydantic-ai model).
        session_id: Resume this session.
        clock: Returns the current time for elapsed and relative times in the side panel (tests fix it).
        fast_exit: The process ends right after the app (the command line): quitting then only ends the
            turn and writes the session; the kernels end by themselves once the process is gone.
        after_first_frame: Called once the first frame is drawn, before the agent loads (the command
            line turns garbage collection back on there).
        first_prompt: Sent as the first message once the agent is open (``freeact-tui "PROMPT"``).
        **agent_options: More keyword arguments of ``Agent.from_config`` for every agent this app
            opens, e.g. ``executor=`` an already started executor (tests share one kernel).
    """

    CSS_PATH = "app.tcss"
    TITLE = "freeact"
    COMMANDS = {SlashCommandProvider}  # the app's own commands (Textual's quit, maximize, screenshot: not ours)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "request_quit", "Quit", priority=True, id="app.quit"),
        Binding("f2", "copy_session_id", "Copy session id", id="app.copy_session_id"),
        Binding("f1", "slash('/help')", "Help", id="app.help"),
        # Before copy and dialogs: cancel a turn, clear a draft, or quit on a second press (quit_keys.py).
        Binding("ctrl+c", "interrupt", "Cancel turn", priority=True, show=False, id="app.interrupt"),
        Binding("ctrl+c", "help_quit", show=False, system=True),  # Textual's, which the line above hides
        Binding("ctrl+d", "end_of_input", "Quit", priority=True, show=False, id="app.end_of_input"),
    ]

    def __init__(
        self,
        config: Config | DeferredConfig,
        *,
        model: str | Model | None = None,
        session_id: str | None = None,
        clock: Clock | None = None,
        fast_exit: bool = False,
        after_first_frame: Callable[[], object] | None = None,
        first_prompt: str | None = None,
        **agent_options: Any,
    ) -> None:
        super().__init__()
        self._after_first_frame = after_first_frame
        self._first_prompt = first_prompt
        self.clock = clock
        self.fast_exit = fast_exit
        self._config: Config | None = None
        self._deferred: DeferredConfig | None = None
        if isinstance(config, DeferredConfig):
            self._deferred, self.launch = config, config.view
        else:
            self._config, self.launch = config, LaunchView.of(config)
        self.config_failure: str | None = None
        """Why the config did not validate after the first frame (the app then ended)."""
        self._model: str | Model | None = model
        self._session_id = session_id
        self._agent_options = agent_options
        self.agent: Agent | None = None
        self._kernel_launch: KernelLaunch | None = None  # started at boot, for the first agent to adopt
        self.startup_error: str | None = None
        self.agent_ready = False
        # Set once pydantic-ai is imported (in a thread: importing it meanwhile in the UI would race it).
        self.agent_modules_loaded = asyncio.Event()
        self.resume_hint: str | None = None
        """How to come back to the session, printed by the command line after the app exits."""
        self._exit_signals = ExitSignals(self.action_quit)
        self.quit_keys = QuitKeys(self)
        self._theme = ConfiguredTheme(self, self.launch.theme)
        terminal_keys.install()  # Alt+Enter as tmux/xterm send it

    async def on_mount(self) -> None:
        mark("app:mount:start")
        typeahead.adopt(self._driver)  # Textual puts back the settings from before the app, not the held ones
        if not self.is_headless:  # SIGHUP/SIGTERM/SIGINT quit as Ctrl+Q does (tests run headless)
            self._exit_signals.install()
        for warning in [*self.launch.notices, *self._theme.warnings]:
            self.notify(warning, severity="warning", timeout=10)
        if self.launch.execution == "remote":
            from freeact_tui.execution.gateway.endpoint import config_warning

            insecure = config_warning("remote", self.launch.remote_url, self.launch.remote_insecure)
            if insecure is not None:
                self.notify(insecure, severity="warning", timeout=15)
        self._theme.follow()
        keep_toasts_off_dialogs(self)
        if self.launch.keymap:
            self.set_keymap(dict(self.launch.keymap))
        # The screen comes first so the prompt takes keys while the agent loads (in a worker).
        screen = MainScreen(self)
        await self.push_screen(screen)
        mark("app:mount:end")  # the main screen and its prompt are up
        # After the first frame: the agent's imports (a thread holding the GIL) would delay it.
        self.call_after_refresh(self._start_boot, screen)

    @property
    def config(self) -> Config:
        """The validated settings (validated here if the command line deferred it: may raise ConfigError)."""
        if self._config is None:
            assert self._deferred is not None
            self._config = self._deferred.load()
        return self._config

    @config.setter
    def config(self, config: Config) -> None:
        self._config = config

    def _start_boot(self, screen: MainScreen) -> None:
        mark("boot:start")
        if self._after_first_frame is not None:
            self._after_first_frame()
        self.run_worker(self._boot(screen), name="boot", group="boot")

    async def _boot(self, screen: MainScreen) -> None:
        from freeact_tui.tui.trust_prompt import ask_trust

        if self._config is None and self._deferred is not None:  # in a thread: keys are echoed meanwhile
            try:
                loaded = await asyncio.to_thread(self._deferred.load)
            except ConfigError as exc:
                self.config_failure = str(exc)
                self.exit(return_code=2)
                return
            self._config = self._config or loaded  # (``config`` read meanwhile validated it too)
        self.config = await ask_trust(self, self.config)
        await self._launch_kernel(screen)
        mark("agent_import:start")
        try:
            await asyncio.to_thread(_import_agent_modules)
        finally:
            self.agent_modules_loaded.set()  # also on a failure: a waiting /model picker must not hang
        mark("agent_import:end")
        problem = self._setup_problem(self._model)
        if problem is not None:
            from freeact_tui.tui.screens.first_run import FirstRunScreen  # Markdown: not for the first frame

            self.startup_error = problem
            await screen.show_agent()
            self.agent_ready = True
            await screen.flow.first(self._first_prompt, send=False)  # kept in the prompt, not lost
            await self.push_screen(
                FirstRunScreen(problem, config_file=paths.user_config_file()), self._first_run_done
            )
            return
        mark("agent_open:start")
        self.agent = await self._open_agent(session_id=self._session_id, model=self._model)
        mark("agent_open:end")
        await screen.show_agent()
        mark("placeholder:set")
        self.agent_ready = True  # after the view is drawn: tests and prompts see a finished start
        await screen.flow.first(self._first_prompt, send=True)
        screen.send_queued()  # a prompt typed meanwhile goes to the model now, whatever the kernel does

    async def _launch_kernel(self, screen: MainScreen) -> None:
        """Start the local kernel now, from the config as trusted or not, while the agent's modules
        import: the first agent adopts it (its process boots on the other core meanwhile). The status
        bar shows its state until the agent is shown (whose events say it from then on)."""
        if "executor" in self._agent_options or self._agent_options.get("eager_kernel") is False:
            return
        from freeact_tui.agent.kernel_launch import KernelLaunch
        from freeact_tui.agent.settings import Settings

        overrides = {k: v for k, v in self._agent_options.items() if k in Settings.names()}
        try:
            settings = Settings.from_config(self.config, **overrides)
            if settings.execution != "local":  # the others start with the agent, as before
                return
            mark("kernel_launch:start")
            self._kernel_launch = launch = await KernelLaunch.begin(settings)
            mark("kernel_launch:end")
        except Exception:  # noqa: BLE001 - the agent starts its own kernel and reports what is wrong
            return

        def show(state: KernelState, detail: str) -> None:
            # no agent (yet): the kernel's own state; none once the screen is gone (the app quitting)
            if not self.agent_ready or self.agent is None:
                with contextlib.suppress(NoMatches):
                    screen.status_bar.set_kernel(state)

        launch.executor.add_state_listener(show)

    def _setup_problem(self, model: str | Model | None) -> str | None:
        """What the user must set before the model can be used (None when it can)."""
        from freeact_tui.agent.models import missing_setup

        if model is not None and not isinstance(model, str):  # a pydantic-ai Model object
            return None
        name = model if model is not None else self.config.model
        problem = missing_setup(name, self.config.base_url, self.config.api_key_env, self.config.provider_keys)
        if problem is not None and not name:
            return _NO_MODEL.format(config=paths.user_config_file())
        return problem

    async def _first_run_done(self, choice: bool | str | None) -> None:
        from freeact_tui.tui.screens.first_run import START_DEMO

        if choice is False:
            self.exit()
        elif choice == START_DEMO:
            from freeact_tui.agent.models import DEMO_MODEL

            await self.switch_agent(session_id=self._session_id, model=DEMO_MODEL)

    async def on_unmount(self) -> None:
        # Any exit path (Ctrl+Q, exit(), a crash, a signal) stops the agent and the kernel it started.
        await self._stop_agent()
        launch, self._kernel_launch = self._kernel_launch, None
        if launch is not None and not self.fast_exit:  # no agent adopted it (the first-run screen)
            await launch.stop()
        self._exit_signals.remove()

    async def _stop_agent(self, *, leave: bool = False) -> None:
        agent, self.agent = self.agent, None
        if agent is not None:
            if agent.history and agent.agent_id == "main" and agent.session is not None:
                from freeact_tui.store.index import is_uuid

                # a name is shown whole
                shown = agent.session_id[:8] if is_uuid(agent.session_id) else agent.session_id
                self.resume_hint = f"Resume this session with: freeact-tui --session-id {shown}"
            if leave:  # the process ends next: its kernels end without being waited for
                await settle_for_exit(agent)
            else:
                await agent.stop()

    @property
    def main_screen(self) -> MainScreen:
        return self.get_screen_in_stack(MainScreen)

    def get_screen_in_stack(self, kind: type[MainScreen]) -> MainScreen:
        for screen in self.screen_stack:
            if isinstance(screen, kind):
                return screen
        raise LookupError("the main screen is not open")

    async def _open_agent(self, *, session_id: str | None, model: str | Model | None) -> Agent | None:
        """Build and start an agent; on failure keep the message in ``startup_error``."""
        overrides: dict[str, Any] = dict(self._agent_options)
        if model is not None:
            overrides["model"] = model
        if session_id is not None:
            overrides["session_id"] = session_id
        self.startup_error = self._setup_problem(model)
        if self.startup_error is not None:
            return None
        from freeact_tui.agent.agent import Agent

        launch, self._kernel_launch = self._kernel_launch, None
        if launch is not None:
            overrides["kernel_launch"] = launch
        agent: Agent | None = None
        try:
            agent = Agent.from_config(self.config, **overrides)
            if session_id is not None:  # its last turns on the screen while the whole history loads
                await self._preview(agent)
            await agent.start()
        except Exception as exc:  # a bad model name or missing key must not crash the app
            self.startup_error = f"The agent could not start: {exc}"
            with contextlib.suppress(LookupError):
                await self.main_screen.conversation.clear()  # a tail drawn from the file: not this
            if agent is not None:
                await agent.stop()  # the kernel it started or adopted
            elif launch is not None:
                await launch.stop()
            return None
        self._model = model
        return agent

    async def _preview(self, agent: Agent) -> None:
        """A resumed session's last turns, drawn from the end of its file (``replay_tail``) before the
        agent loads the whole history; a failure only costs the head start (the whole is drawn then)."""
        screen = self.main_screen
        try:
            await screen.router.preview(agent)
        except Exception:  # noqa: BLE001 - a fast path: whatever is wrong, the whole history's load says it
            _log.exception("drawing the end of session %s failed", agent.session_id)
            await screen.conversation.clear()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast; control characters of the text (an error naming a hostile file) are shown, never sent."""
        super().notify(
            visible(message),
            title=visible(title, multiline=False),
            severity=severity,
            timeout=timeout,
            markup=markup,
        )

    async def action_request_quit(self) -> None:
        """Ctrl+Q: quit; while a turn, an action, a subagent or a ``!command`` runs, only a second Ctrl+Q quits."""
        await self.quit_keys.request_quit()

    async def action_interrupt(self) -> None:
        """Ctrl+C: cancel a running turn, else copy a selection, else clear the draft, else quit on a second press."""
        await self.quit_keys.ctrl_c()

    def action_help_quit(self) -> None:
        """Ctrl+C that a widget passed on without copying: as on an idle prompt."""
        self.run_worker(self.quit_keys.ctrl_c(passed=True), group="quit-keys", exit_on_error=False)

    async def action_end_of_input(self) -> None:
        """Ctrl+D: quit on the empty prompt; elsewhere it deletes forward."""
        await self.quit_keys.ctrl_d()

    async def action_quit(self) -> None:
        """Stop the agent (cancelling a running turn, stopping its kernel), then exit."""
        await self._stop_agent(leave=self.fast_exit)
        self.exit()

    async def on_action_block_diff_requested(self, event: ActionBlock.DiffRequested) -> None:
        """A key on an action block: show what that action changed."""
        from freeact_tui.tui import checkpoint_commands  # loaded on use: not before the first screen

        await checkpoint_commands.run_diff(self.main_screen, corr_id=event.corr_id)

    def copy_to_clipboard(self, text: str) -> None:
        """OSC 52 (Textual's), then the OS clipboard program if one is installed (freeact's fallback)."""
        super().copy_to_clipboard(text)
        if self.is_running:
            self.run_worker(
                partial(copy_to_os_clipboard, text), thread=True, group="clipboard", exit_on_error=False
            )

    def action_copy_session_id(self) -> None:
        """Copy the full session id to the clipboard."""
        if self.agent is None:
            self.notify("No session yet.", severity="warning")
            return
        self.copy_to_clipboard(self.agent.session_id)
        self.notify(f"Copied session id {self.agent.session_id}")

    # -- slash commands ----------------------------------------------------------------------------------

    def prompt_text(self, text: str) -> str:
        """What to send for a typed prompt (``//x`` sends ``/x``; ``/<skill> args`` the skill, as freeact)."""
        call = self._skill_call(text)
        if call is not None:
            from freeact_tui.project.skills import skill_prompt

            return skill_prompt(*call)
        return unescape_prompt(text)

    def skill_entries(self) -> list[tuple[str, str]]:
        """(name, description) of the skills ``/<name> args`` invokes (not those a command's name hides)."""
        from freeact_tui.project.skills import available_skills

        try:
            skills = available_skills(self.config.resolved_working_dir())
        except OSError:
            return []
        return [(s.name, s.description) for s in skills if get_command(s.name) is None]

    def _skill_call(self, text: str) -> tuple[str, str] | None:
        """(skill, arguments) when ``text`` starts with ``/<skill-name>`` (freeact's rule), else ``None``."""
        match = re.match(r"^/(\S+)([\s\S]*)", text.strip())
        if match is None or is_escaped(text):
            return None
        name = match.group(1)
        if name not in {entry[0] for entry in self.skill_entries()}:
            return None
        return name, match.group(2).strip()

    async def action_slash(self, text: str) -> None:
        """Run a slash command chosen in the command palette (a skill goes into the prompt for its arguments)."""
        call = self._skill_call(text)
        if call is None:
            await self.handle_slash(text)
            return
        prompt = self.main_screen.prompt
        prompt.start_with(f"/{call[0]}" + (f" {call[1]}" if call[1] else ""))
        prompt.focus()

    async def handle_slash(self, text: str) -> SlashOutcome:
        """Run ``text`` if it is a slash command.

        Returns:
            ``"prompt"`` for a normal prompt, ``"done"`` when the command ran, ``"invalid"`` when it
            could not be parsed (the user was told why and can edit it).
        """
        if self._skill_call(text) is not None:
            return "prompt"  # sent as freeact sends a skill (see ``prompt_text``)
        parsed = parse_slash(text)
        if parsed is None:
            return "prompt"
        if isinstance(parsed, SlashError):
            self.notify(parsed.message, severity="error", timeout=6)
            return "invalid"
        try:
            await self._dispatch(parsed)
        except Exception as exc:  # a failing command is reported, the app and session stay intact
            await self.main_screen.conversation.error(f"/{parsed.name} failed: {exc}")
        return "done"

    async def _dispatch(self, command: SlashCommand) -> None:
        from freeact_tui.tui.slash_dispatch import dispatch

        await dispatch(self.main_screen, command)

    @property
    def chosen_model(self) -> str | Model | None:
        """The model this app was started with or switched to (``None``: the config's)."""
        return self._model

    @property
    def current_model(self) -> str | None:
        """The model name in use as the user gave it (``provider:name``), else the agent's own name."""
        if isinstance(self._model, str):
            return self._model
        if self.config.model:
            return self.config.model
        return self.agent.model_name if self.agent is not None else None

    async def switch_agent(self, *, session_id: str | None, model: str | Model | None) -> None:
        await self._stop_agent()
        screen = self.main_screen
        await screen.conversation.clear()  # (before: the new session's tail is drawn while it opens)
        self.agent = await self._open_agent(session_id=session_id, model=model)
        await screen.show_agent()
