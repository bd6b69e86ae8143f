"""Helpers the test modules share: waiting under Pilot, driving the chat, building apps and agents,
reading a turn's events. One definition each; where modules need other values (a longer wait, a
different working dir) they pass them as arguments.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import json
import os
import pty
import shutil
import signal
import struct
import subprocess
import sys
import termios
import textwrap
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import psutil
import pytest
import pytest_asyncio
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Static

from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentEvent, ApprovalRequest, SubagentStatus
from freeact_tui.execution.base import Executor
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.widgets.blocks import (
    ActionBlock,
    Block,
    ExecutionOutputBlock,
    NoticeBlock,
    ResponseBlock,
    ThoughtBlock,
    ToolOutputBlock,
    UserMessageBlock,
)
from freeact_tui.tui.widgets.image_preview import ImagePreview
from freeact_tui.tui.widgets.prompt import PromptInput
from tests.fake_openai import FakeOpenAI
from tests.scripted import CODE_TOOL, Script
from tests.windowed import WindowedModel

SIZE = (120, 40)
"""The terminal size of most Pilot and snapshot tests."""

# -- Pilot -------------------------------------------------------------------------------------------


async def until(
    pilot: Pilot[Any], condition: Callable[[], object], limit: float = 10.0, step: float = 0.02
) -> None:
    """Pause until ``condition()`` is true (the UI runs meanwhile); fail after ``limit`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(step)


async def port_open(port: int, proc: asyncio.subprocess.Process | None = None, limit: float = 60.0) -> None:
    """Wait until a server listens on 127.0.0.1:``port``; fail (never fall through) when ``proc`` exits
    first or ``limit`` seconds pass. A loaded machine starts a Python server in tens of seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if proc is not None and proc.returncode is not None:
                raise AssertionError(f"the server exited ({proc.returncode}) before it listened on {port}") from None
            if loop.time() > deadline:
                raise AssertionError(f"nothing listened on 127.0.0.1:{port} within {limit:g} s") from None
            await asyncio.sleep(0.1)
            continue
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return


async def log_settled(pilot: Pilot[Any], limit: float = 30.0, *, answers: int = 1) -> None:
    """Wait until every answer in the log is drawn and the log rests at its end (for pictures: on a
    loaded machine the markdown and the scroll to the end arrive a few frames after the dialog): its
    scroll position has not moved for half a second, and at least ``answers`` answers are in it."""
    log = main(pilot.app).conversation
    seen: list[tuple[float, float]] = []

    def resting() -> bool:
        shown = "MarkdownParagraph, FoldedBlocks"  # a paragraph, or finished blocks drawn as lines
        paragraphs = log.query("ResponseBlock MarkdownParagraph, ResponseBlock FoldedBlocks")
        drawn = all(p.size.height for p in paragraphs) and all(
            block.query(shown) for block in log.query("ResponseBlock")
        )
        seen.append((log.scroll_y, log.max_scroll_y))
        return bool(drawn) and len(log.query("ResponseBlock")) >= answers and seen[-10:] == [seen[-1]] * 10

    await until(pilot, resting, limit, step=0.05)


def main(app: App[Any]) -> MainScreen:
    """The chat screen of a ``FreeactApp``."""
    assert isinstance(app, FreeactApp)
    return app.main_screen


async def ready(pilot: Pilot[Any], limit: float = 10.0) -> MainScreen:
    """Wait until the app's agent is ready; the chat screen."""
    app = pilot.app
    assert isinstance(app, FreeactApp)
    await until(pilot, lambda: app.agent_ready, limit)
    return app.main_screen


async def send(pilot: Pilot[Any], text: str, *, wait_ready: bool = True) -> None:
    """Type ``text`` into the prompt and press Enter (first waiting for the agent, unless told not to)."""
    screen = await ready(pilot) if wait_ready else main(pilot.app)
    prompt = screen.query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")


def texts(app: App[Any], kind: type) -> list[str]:
    """The texts of the conversation's blocks of one kind, in order."""
    return [b.text for b in main(app).conversation.query(kind)]


async def dialog(
    pilot: Pilot[Any],
    kind: type | None = None,
    *,
    showing: str = "",
    where: Callable[[ApprovalRequest], bool] | None = None,
    limit: float = 10.0,
) -> ApprovalScreen:
    """Wait for the approval dialog (the one every test waits for: asking for a call of ``kind``, whose
    text shows ``showing``, that ``where`` accepts, when given); the dialog."""

    def shown() -> bool:
        screen = pilot.app.screen
        return (
            isinstance(screen, ApprovalScreen)
            and (kind is None or isinstance(screen.request.tool_call, kind))
            and showing in screen.request.tool_call.display_text()
            and (where is None or where(screen.request))
        )

    await until(pilot, shown, limit)
    screen = pilot.app.screen
    assert isinstance(screen, ApprovalScreen)
    await pilot.pause()
    return screen


def actions(app: App[Any]) -> list[ActionBlock]:
    """The conversation's action blocks, in order."""
    return list(main(app).conversation.query(ActionBlock))


def outputs(app: App[Any]) -> list[str]:
    """The texts of the conversation's execution outputs, in order."""
    return [b.text for b in main(app).conversation.query(ExecutionOutputBlock)]


# -- apps and agents ---------------------------------------------------------------------------------


def make_app(
    model: Script | Model | None,
    sessions_dir: Path,
    working_dir: Path,
    *,
    config: Mapping[str, Any] | None = None,
    **app_kw: Any,
) -> FreeactApp:
    """A ``FreeactApp`` on a scripted model (None: no model), with ``config`` on top of the two dirs.

    ``app_kw`` goes to ``FreeactApp`` (``executor``, ``session_id``, ``clock``, ``eager_kernel`` …).
    """
    cfg = Config(sessions_dir=sessions_dir, working_dir=working_dir, **(config or {}))
    return FreeactApp(cfg, model=model.model() if isinstance(model, Script) else model, **app_kw)


def make_agent(
    model: Script | Model,
    executor: Executor | None,
    tmp_path: Path,
    work: Path | None = None,
    **kw: Any,
) -> Agent:
    """An ``Agent`` on a scripted model: sessions in ``tmp_path/sessions``, working in ``work`` (else
    ``tmp_path``), on a shared ``executor``; no default permission rules unless ``permissions`` is given."""
    kw.setdefault("permissions", PermissionRules(None, defaults=False))
    return Agent(
        model.model() if isinstance(model, Script) else model,
        sessions_dir=tmp_path / "sessions",
        working_dir=work or tmp_path,
        executor=executor,
        **kw,
    )


# -- fixtures (a module binds them to its own names: ``executor = helpers.kernel``) -----------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    """One kernel for the module; every app's agent uses it (and does not stop it)."""
    work = tmp_path_factory.mktemp("kernel")
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    yield ex
    await ex.stop()


@pytest.fixture
def chat_app(executor: KernelExecutor, tmp_path: Path) -> Callable[..., FreeactApp]:
    """``make(script, config_kw=None, **app_kw)``: an app on the module's kernel, working in ``tmp_path``."""

    def make(s: Script | None, config_kw: dict[str, object] | None = None, **kw: object) -> FreeactApp:
        config = {"subagent_pool_size": 0, **(config_kw or {})}
        return make_app(s, tmp_path / "sessions", tmp_path, config=config, executor=executor, **kw)

    return make


# -- turns -------------------------------------------------------------------------------------------


async def run(
    agent: Agent, prompt: str, decide: Callable[[ApprovalRequest], bool | None] = lambda r: True, **kw: object
) -> list[AgentEvent]:
    """Collect a turn's events, deciding undecided approvals with ``decide`` (None: leave open)."""
    events: list[AgentEvent] = []
    async for event in agent.stream(prompt, **kw):  # type: ignore[arg-type]
        events.append(event)
        if isinstance(event, ApprovalRequest) and not event.decided:
            answer = decide(event)
            if answer is not None:
                event.approve(answer)
    return events


def of(events: list[AgentEvent], kind: type) -> list:  # type: ignore[type-arg]
    """The events of one kind, in order."""
    return [e for e in events if isinstance(e, kind)]


# -- snapshots ---------------------------------------------------------------------------------------

SESSION_ID = "0b5848f8-89e8-4b08-a784-da134d221ea8"
"""The fixed session id of snapshot apps (it shows in the status bar)."""
SnapCompare = Callable[..., bool]


async def own_kernel_until(pilot: Pilot[Any], condition: Callable[[], object]) -> None:
    """``until`` for apps that start their own kernel (snapshots, ``!command``): 30 s in 0.05 s steps."""
    await until(pilot, condition, 30.0, 0.05)


def snapshot_app(s: Script, tmp_path: Path) -> FreeactApp:
    """An app for a snapshot: its own kernel, working in ``tmp_path/work``, the fixed session id."""
    (tmp_path / "work").mkdir(exist_ok=True)
    return make_app(s, tmp_path / "sessions", tmp_path / "work", session_id=SESSION_ID)


async def settle(pilot: Pilot[Any]) -> None:
    """Kernel ready, spinner frozen, cursor steady."""
    app = pilot.app
    assert isinstance(app, FreeactApp)
    app.animation_level = "none"
    await own_kernel_until(
        pilot, lambda: app.agent_ready and app.agent is not None and app.agent.kernel_state == "ready"
    )
    await own_kernel_until(pilot, lambda: "ready" in str(main(app).query_one("#status-kernel").render()))
    main(app).query_one(PromptInput).cursor_blink = False


def before(*steps: Callable[[Pilot[Any]], Awaitable[None]]) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A snapshot's ``run_before``: settle, run ``steps``, let the screen come to rest."""

    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for step in steps:
            await step(pilot)
        await pilot.pause(0.2)

    return run


def at_picker(typed: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A snapshot's step: ``Explain `` in the prompt, ``@`` opens the file picker, ``typed`` filters it."""

    async def pick(pilot: Pilot[Any]) -> None:
        from freeact_tui.tui.screens.file_picker import FilePicker

        prompt = main(pilot.app).prompt
        prompt.load_text("Explain ")
        prompt.move_cursor(prompt.document.end)
        await pilot.press("@")
        await own_kernel_until(pilot, lambda: isinstance(pilot.app.screen, FilePicker) and pilot.app.screen.shown == "")
        await pilot.press(*typed)
        await own_kernel_until(pilot, lambda: getattr(pilot.app.screen, "shown", None) == typed)

    return pick


# -- replay (a resumed log against the live one) -----------------------------------------------------


def log_rows(app: App[Any]) -> list[tuple[str, ...]]:
    """What the log shows, block by block: kind, agent, call id (a user's ``!command`` run's id is the
    app's, new each run: "user-shell"), the text, then what else the block shows — an action's status;
    an output's error flag, its notes (image links, "gone", where a long result is) and how many
    previews; a notice's title."""
    rows: list[tuple[str, ...]] = []
    for block in main(app).conversation.query(Block):
        corr_id = "user-shell" if block.corr_id.startswith("user-shell-") else block.corr_id
        head = (type(block).__name__, block.agent_id, corr_id)
        match block:
            case ActionBlock():
                rows.append((*head, block.tool_call.display_text(), block.status))
            case ExecutionOutputBlock():
                notes = [str(n.render()) for n in block.query(Static).filter(".output-note")]
                previews = f"previews={len(block.query(ImagePreview))}"
                rows.append((*head, block.text, str(block.is_error), *notes, previews))
            case ToolOutputBlock():
                rows.append((*head, block.content))
            case NoticeBlock():
                rows.append((*head, block.text, str(block.border_title or "")))
            case ThoughtBlock() | ResponseBlock() | UserMessageBlock():
                rows.append((*head, str(block.text)))
            case _:
                rows.append(head)
    return rows


async def idle(pilot: Pilot[Any], limit: float = 60.0) -> None:
    """Wait until no turn runs, then one more frame."""
    await until(pilot, lambda: not main(pilot.app).turn_running, limit)
    await pilot.pause()


async def resumed_rows(
    make: Callable[..., FreeactApp], session_id: str, config: Mapping[str, object] | None = None
) -> list[tuple[str, ...]]:
    """``log_rows`` of a new app (``make`` as ``chat_app``) that resumes ``session_id``, once drawn."""
    resumed = make(Script([["unused"]]), dict(config or {}), session_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await ready(pilot, limit=30)
        await until(pilot, lambda: bool(main(resumed).conversation.query(Block)), limit=30)
        await pilot.pause()
        return log_rows(resumed)


# -- sessions on disk -------------------------------------------------------------------------------


def freeact_load(path: Path) -> list[ModelMessage]:
    """The rules freeact's ``SessionStore.load_messages`` enforces (freeact 0.11, agent/session.py).

    A fast stand-in that always runs; tests/freeact/test_freeact_interop.py checks with the real freeact.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    payloads: list[Any] = []
    for index, line in enumerate(lines):
        try:
            envelope = json.loads(line)
        except json.JSONDecodeError:
            if index == len(lines) - 1:
                break
            raise ValueError(f"Malformed JSONL line {index + 1} in {path}") from None
        assert isinstance(envelope, dict) and {"v", "message", "meta"} <= envelope.keys()
        assert envelope["v"] == 1
        assert isinstance(envelope["meta"], dict) and "ts" in envelope["meta"]
        assert "agent_id" not in envelope["meta"]
        payloads.append(envelope["message"])
    return ModelMessagesTypeAdapter.validate_python(payloads)


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")


def conversation(prompt: str = "Plot a sine wave") -> list[ModelMessage]:
    """A short history with thinking, a code call, its output with an image, and an answer."""
    return [
        ModelRequest(parts=[SystemPromptPart("You are a code-action agent."), UserPromptPart(prompt)]),
        ModelResponse(
            parts=[
                ThinkingPart("Use matplotlib.", signature="sig"),
                ToolCallPart("ipybox_execute_ipython_cell", {"code": "print(1)"}, "call-1"),
            ],
            model_name="test-model",
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(
                    "ipybox_execute_ipython_cell",
                    ["1\n", BinaryContent(PNG, media_type="image/png")],
                    "call-1",
                )
            ]
        ),
        ModelResponse(parts=[TextPart("Done: 1")], model_name="test-model"),
    ]


def dumped(messages: list[ModelMessage]) -> list[object]:
    """``messages`` as JSON-able data (to compare histories)."""
    return ModelMessagesTypeAdapter.dump_python(messages, mode="json")


@pytest.fixture
def other_writer(tmp_path: Path) -> Iterator[Callable[[str], subprocess.Popen[str]]]:
    """Another process that appends to a session and keeps it open until its stdin closes."""
    procs: list[subprocess.Popen[str]] = []
    root = Path(__file__).resolve().parent.parent

    def start(session_id: str) -> subprocess.Popen[str]:
        code = textwrap.dedent(
            f"""
            import sys
            from pydantic_ai.messages import ModelRequest, UserPromptPart
            from freeact_tui.store.sessions import SessionStore
            session = SessionStore({str(tmp_path / "sessions")!r}).session({session_id!r})
            session.append([ModelRequest(parts=[UserPromptPart("from the other window")])])
            print("ready", flush=True)
            sys.stdin.read()
            session.unlock()
            """
        )
        env = {**os.environ, "PYTHONPATH": str(root)}
        proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- long sessions (compaction) ----------------------------------------------------------------------

WINDOW = 3000
"""The context window of the compaction tests (tokens)."""

FILLER = "Some notes that take room in the context but carry no facts. " * 12


def windowed_agent(
    model: WindowedModel, tmp_path: Path, session_id: str | None = None, **kw: object
) -> Agent:
    """An agent on a ``WindowedModel`` (a ``WINDOW``-token context unless told otherwise), no kernel started."""
    return Agent(
        model.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        session_id=session_id,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
        eager_kernel=False,
        **{"context_window": WINDOW, **kw},  # type: ignore[arg-type]
    )


async def turn(agent: Agent, prompt: str) -> list[AgentEvent]:
    """One turn's events (no approvals expected)."""
    return [event async for event in agent.stream(prompt)]


def fact(i: int) -> str:
    """A fact the summary must keep."""
    return f"FACT: the code of item{i} is c{i * 7919 % 10007}."


async def chat(agent: Agent, turns: int) -> list[AgentEvent]:
    """``turns`` turns, each telling a fact padded with filler."""
    events: list[AgentEvent] = []
    for i in range(turns):
        events += await turn(agent, f"{fact(i)} {FILLER}")
    return events


# -- subagents ----------------------------------------------------------------------------------------


def first_prompt(messages: list[ModelMessage]) -> str:
    """The first user prompt of a history (a subagent's task)."""
    for m in messages:
        if isinstance(m, ModelRequest):
            for p in m.parts:
                if isinstance(p, UserPromptPart) and isinstance(p.content, str):
                    return p.content
    return ""


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """The tool returns of the history's last request."""
    last = messages[-1]
    return [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []


def routed_model(tasks: dict[str, str], code_for: Callable[[str], str]) -> FunctionModel:
    """The parent delegates ``tasks`` (prompt → call id); each subagent runs ``code_for(prompt)`` then answers."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        prompt = first_prompt(messages)
        done = returns(messages)
        if prompt == "delegate":
            if not done:
                for i, (task, call_id) in enumerate(tasks.items()):
                    args = json.dumps({"prompt": task, "max_turns": 5})
                    yield {i: DeltaToolCall(name="subagent_task", json_args=args, tool_call_id=call_id)}
            else:
                yield "parent got: " + " | ".join(sorted(str(p.content) for p in done))
            return
        if not done:
            yield {
                0: DeltaToolCall(
                    name=CODE_TOOL, json_args=json.dumps({"code": code_for(prompt)}), tool_call_id="s1"
                )
            }
        else:
            yield f"answer for {prompt}: {done[0].content}"

    return FunctionModel(stream_function=stream, model_name="routed")


def make_parent(model: FunctionModel, executor: KernelExecutor, tmp_path: Path, **kw: object) -> Agent:
    """A main agent that may delegate (no warm subagent pool, no default permission rules)."""
    kw.setdefault("permissions", PermissionRules(None, defaults=False))
    kw.setdefault("subagent_pool_size", 0)
    return Agent(
        model,
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        **kw,  # type: ignore[arg-type]
    )


async def collect(
    agent: Agent, prompt: str, on_event: Callable[[AgentEvent], None] | None = None
) -> list[AgentEvent]:
    """A turn's events; approvals are granted unless ``on_event`` sees each event instead."""
    events: list[AgentEvent] = []
    async for event in agent.stream(prompt):
        events.append(event)
        if on_event is not None:
            on_event(event)
        elif isinstance(event, ApprovalRequest) and not event.decided:
            event.approve(True)
    return events


def statuses(events: list[AgentEvent]) -> list[tuple[str, str]]:
    """The (task, state) of each subagent status event, in order."""
    return [(e.task, e.state) for e in events if isinstance(e, SubagentStatus)]


# -- the CLI as a subprocess --------------------------------------------------------------------------


CLI = (sys.executable, "-m", "freeact_tui")
"""The command that runs this tree's ``freeact-tui``: every test that starts the CLI starts it with this."""


def cli(
    *args: str,
    cwd: Path,
    stdin: str | None = None,
    timeout: float = 120,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``freeact-tui`` (this tree's code, the test's isolated home, ``env`` added) and wait for it."""
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def check_plants_undone(
    done: subprocess.CompletedProcess[str], server: FakeOpenAI, work: Path, planted: tuple[str, ...]
) -> None:
    """An isolated ``run`` whose one action wrote code-configuring names (``planted``) beside ordinary
    work (``out.txt``): it worked, the names are undone, and both the model and the user were told."""
    assert done.returncode == 0, done.stderr[-3000:]
    output = json.loads(done.stdout)["actions"][0]["output"]
    assert "all written" in output, output
    told = server.requests[1].tool_results()[0]
    for rel in planted:
        assert not (work / rel).exists(), rel
        assert rel.split("/settings.json")[0] in told, (rel, told)  # told to the model
    assert "undone" in done.stderr and "sub/.git" in done.stderr  # and to the user (a notice)
    assert (work / "out.txt").read_text() == "work\n"  # ordinary work stays


def fake_args(server: FakeOpenAI, config_file: Path | None = None) -> list[str]:
    """The options that point the CLI at the fake OpenAI server (and at ``config_file``)."""
    config = ["--config", str(config_file)] if config_file is not None else []
    return ["--base-url", server.url, "--model", "fake-model", *config]


def session_lines(home: Path, session_id: str) -> list[dict[str, Any]]:
    """The envelopes of a session's main history, found anywhere below ``home``."""
    files = list(home.rglob(f"{session_id}/main.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


# -- docker -------------------------------------------------------------------------------------------

IMAGE = "freeact-tui-kernel:pytest"
"""The kernel image the docker tests build (``docker import``, nothing pulled)."""


@functools.cache
def docker_problem() -> str | None:
    """Why no Docker daemon can be used here (None: it answers)."""
    docker = shutil.which("docker")
    if docker is None:
        return "the docker CLI is not installed (Debian: apt-get install docker.io)"
    done = subprocess.run(
        [docker, "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True, timeout=30
    )
    if done.returncode != 0:
        return f"no Docker daemon answers ({done.stderr.strip().splitlines()[-1:]}); start dockerd"
    return None


# -- the app in a terminal ----------------------------------------------------------------------------

START_LIMIT = 150.0  # seconds until the kernels run (a loaded machine is slow)


ORPHAN_LIMIT = 5.0  # seconds the children may outlive the app


class InPty(NamedTuple):
    """A process on a pseudo-terminal: the process, the master and slave ends (the caller closes both),
    and the terminal's settings before the process started."""

    process: subprocess.Popen[bytes]
    master: int
    slave: int
    settings_before: list[Any]


def spawn_in_pty(argv: list[str], env: Mapping[str, str], cwd: Path) -> InPty:
    """``argv`` in a session of its own on a new 120x40 pseudo-terminal whose output a thread drains (a
    terminal nobody reads would block the app once its buffer is full)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    settings = termios.tcgetattr(slave)
    process = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True
    )
    threading.Thread(target=_drain, args=(master,), daemon=True).start()
    return InPty(process, master, slave, settings)


def _drain(master: int) -> None:
    try:
        while os.read(master, 65536):
            pass
    except OSError:
        pass


def with_home(home: Path) -> list[int]:
    """Every process whose environment has ``HOME=home`` (found through /proc, zombies left out)."""
    wanted = b"HOME=" + str(home).encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_bytes().rpartition(b")")[2].split()[0]
        except OSError:
            continue
        if wanted in environ and state != b"Z":
            found.append(int(name))
    return found


def left_after(home: Path, limit: float) -> list[int]:
    """The processes with ``home`` as their HOME still running after up to ``limit`` seconds."""
    deadline = time.monotonic() + limit
    left = with_home(home)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = with_home(home)
    return left


class TerminalApp:
    """``freeact-tui`` running in a pseudo-terminal with a HOME of its own (``tmp_path/home``) that every
    process it starts keeps. Use as a context manager: leaving it ends the app and every such process."""

    def __init__(self, tmp_path: Path, execution: str, project_config: str = "", user_config: str = "") -> None:
        self.home = tmp_path / "home"
        work = tmp_path / "work"
        self.home.mkdir()
        work.mkdir()
        (work / ".freeact-tui.toml").write_text(project_config)
        if user_config:  # what a project may not set (the docker image): the user's own config
            (self.home / "app" / "config").mkdir(parents=True)
            (self.home / "app" / "config" / "config.toml").write_text(user_config)
        env = {
            **os.environ,
            "HOME": str(self.home),
            "FREEACT_TUI_HOME": str(self.home / "app"),
            "TERM": "xterm-256color",
        }
        cmd = [*CLI, "--trust", "--model", "test", "--execution", execution]
        self.process, self.master, slave, _ = spawn_in_pty(cmd, env, work)
        os.close(slave)
        self._master_open = True

    def __enter__(self) -> TerminalApp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        kill_processes(with_home(self.home))

    def killed_leaves(self, signum: signal.Signals = signal.SIGKILL, wait: float = 10.0) -> list[int]:
        """Send ``signum`` to the app and wait for its end; the processes with its HOME still running
        ``ORPHAN_LIMIT`` seconds later."""
        os.kill(self.process.pid, signum)
        self.process.wait(wait)
        return left_after(self.home, ORPHAN_LIMIT)

    def close_terminal(self) -> None:
        if self._master_open:
            self._master_open = False
            os.close(self.master)

    def descendants(self) -> dict[int, float]:
        """Every process below the app: pid -> start time."""
        found: dict[int, float] = {}
        try:
            below = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            return found
        for proc in below:
            try:
                found[proc.pid] = proc.create_time()
            except psutil.Error:
                pass
        return found

    def kernels(self, below: dict[int, float]) -> int:
        """How many kernels run below the app."""
        return sum("ipykernel" in command_line(pid) for pid in below)

    def wait_for_kernels(self, count: int, also: str = "") -> dict[int, float]:
        """Wait until ``count`` kernels (and a process whose command line has ``also``) run and nothing
        new starts for a second; the descendants then."""
        deadline = time.monotonic() + START_LIMIT
        last: dict[int, float] = {}
        steady_since = time.monotonic()
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the app ended early (status {self.process.returncode})"
            now = self.descendants()
            if set(now) != set(last):
                last, steady_since = now, time.monotonic()
            elif self.kernels(now) >= count and any(also in command_line(pid) for pid in now):
                if time.monotonic() - steady_since >= 1.0:
                    return now
            time.sleep(0.2)
        raise AssertionError(
            f"{count} kernels did not start within {START_LIMIT:g}s: {describe_processes(last)}"
        )

    def stop(self) -> None:
        self.close_terminal()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class TimelineApp:
    """``freeact-tui ARGV`` in a pseudo-terminal of 120x40 with a start-up timeline
    (``FREEACT_TUI_TIMELINE``) and a home of its own; ``stages()`` reads the timeline. Use as a context
    manager: leaving it ends the app (SIGTERM, then its process group) and keeps the terminal's
    settings at that moment in ``settings_after``."""

    def __init__(self, tmp_path: Path, argv: list[str], env: Mapping[str, str] | None = None) -> None:
        self.work = tmp_path / "work"
        self.work.mkdir(exist_ok=True)
        self.timeline = tmp_path / "timeline.txt"
        full_env = {
            **os.environ,
            "HOME": str(tmp_path),
            "FREEACT_TUI_HOME": str(tmp_path / "app"),
            "FREEACT_TUI_TIMELINE": str(self.timeline),
            "TERM": "xterm-256color",
            **(env or {}),
        }
        argv = [*CLI, *argv]
        self.process, self.master, self._slave, self.settings_before = spawn_in_pty(argv, full_env, self.work)
        self.settings_after: list[Any] = []

    def stages(self) -> dict[str, float]:
        """Each stage's first time (``time.monotonic()``) in the timeline so far."""
        stages: dict[str, float] = {}
        for line in self.timeline.read_text().splitlines() if self.timeline.exists() else []:
            stage, _, at = line.rpartition(" ")
            stages.setdefault(stage, float(at))
        return stages

    def wait_for(self, stage: str, deadline: float, step: float = 0.02) -> None:
        """Wait until the timeline has ``stage`` (a ``time.monotonic()`` deadline)."""
        while stage not in self.stages():
            assert self.process.poll() is None, f"the app ended early (status {self.process.returncode})"
            assert time.monotonic() < deadline, f"no {stage!r} in time"
            time.sleep(step)

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def __enter__(self) -> TimelineApp:
        return self

    def __exit__(self, *exc: object) -> None:
        group = os.getpgid(self.process.pid) if self.process.poll() is None else None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if group is not None:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)
        self.settings_after = termios.tcgetattr(self._slave)
        os.close(self._slave)
        os.close(self.master)


def command_line(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return ""


def describe_processes(procs: dict[int, float] | list[int]) -> str:
    return "; ".join(f"{pid}: {command_line(pid)[:80]}" for pid in procs) or "none"


def alive(recorded: dict[int, float]) -> list[int]:
    """The recorded processes that still run (same pid and start time, not a zombie)."""
    left = []
    for pid, started in recorded.items():
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == started and proc.status() != psutil.STATUS_ZOMBIE:
                left.append(pid)
        except psutil.Error:
            pass
    return left


def wait_gone(recorded: dict[int, float], limit: float) -> tuple[list[int], float]:
    """Poll until no recorded process runs or ``limit`` seconds pass; what is left and the time taken."""
    started = time.monotonic()
    left = alive(recorded)
    while left and time.monotonic() - started < limit:
        time.sleep(0.1)
        left = alive(recorded)
    return left, time.monotonic() - started


def kill_processes(pids: list[int]) -> None:
    for pid in pids:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass


CALC_SERVER = f"""
[mcp_servers.calc]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(Path(__file__).parent / "mcp_servers" / "calc.py"))}]
mode = "json"
"""
