"""The kernel starts before the agent: ``ready`` once it runs code, with the tool server still coming up
(a cell's request waits for it; one that never comes up fails the executor and the waiting cell, not a
hang); an agent adopts an executor launched for it, reports where it got to and stops it; the app
launches it right after the trust decision and its first agent adopts it (real kernels throughout)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.kernel_launch import KernelLaunch
from freeact_tui.agent.settings import Settings
from freeact_tui.events import AgentEvent, KernelStatus
from freeact_tui.execution.base import ExecApproval, ExecChunk, ExecResult, ExecutorError
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.tools import link as tool_link
from freeact_tui.project.config import load_config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.trust import TrustScreen
from tests.executor_checks import descendants, no_new_descendants, run, until
from tests.helpers import SIZE, make_app
from tests.helpers import until as until_pilot
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120)]


@pytest.fixture
def tool_server_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[[Exception | None], threading.Event]]:
    """Hold the tool server's imports until the returned event is set; then they load (or ``error`` is raised)."""
    gates: list[threading.Event] = []
    original = tool_link.import_tool_server

    def hold(error: Exception | None = None) -> threading.Event:
        gate = threading.Event()
        gates.append(gate)

        def held() -> None:
            gate.wait(60)
            if error is not None:
                raise error
            original()

        monkeypatch.setattr(tool_link, "import_tool_server", held)
        return gate

    yield hold
    for gate in gates:  # a failed test must not leave a thread waiting
        gate.set()


def _executor(tmp_path: Path) -> KernelExecutor:
    (tmp_path / "work").mkdir(exist_ok=True)
    return KernelExecutor(working_dir=tmp_path / "work", images_dir=tmp_path / "images")


async def test_the_kernel_is_ready_and_runs_code_before_the_tool_server_is_up(
    tmp_path: Path, tool_server_gate: Callable[[Exception | None], threading.Event]
) -> None:
    gate = tool_server_gate(None)
    ex = _executor(tmp_path)
    try:
        await asyncio.wait_for(ex.start(), 60)  # before the fix: waits for the held tool server
        assert ex.state == "ready"
        _, result = await run(ex, "print(6 * 7)")
        assert result.text == "42" and not result.is_error

        # A `!cmd` asks the tool server for approval: the request waits in its socket's backlog.
        cell = asyncio.create_task(run(ex, "!echo after-the-server"))
        await asyncio.sleep(1.0)
        assert not cell.done(), "the approval request did not wait for the tool server"
        gate.set()
        items, result = await asyncio.wait_for(cell, 60)
        assert [i.command for i in items if isinstance(i, ExecApproval)] == ["echo after-the-server"]
        assert result.text == "after-the-server" and not result.is_error
    finally:
        gate.set()
        await ex.stop()


async def test_a_tool_server_that_fails_after_ready_fails_the_executor_and_the_waiting_cell(
    tmp_path: Path, tool_server_gate: Callable[[Exception | None], threading.Event]
) -> None:
    gate = tool_server_gate(ImportError("no module named 'uvicorn'"))
    before = descendants()
    ex = _executor(tmp_path)
    states: list[tuple[str, str]] = []
    ex.add_state_listener(lambda state, detail: states.append((state, detail)))
    try:
        await asyncio.wait_for(ex.start(), 60)
        assert ex.state == "ready"
        seen: list[str] = []

        async def cell_run() -> ExecResult:
            async for item in ex.stream("print('before', flush=True)\n!echo never"):
                if isinstance(item, ExecResult):
                    return item
                if isinstance(item, ExecChunk):
                    seen.append(item.text)
            raise AssertionError("stream ended without an ExecResult")

        cell = asyncio.create_task(cell_run())
        # The tool server fails while the cell waits on it: only once the cell runs (a loaded machine
        # may take seconds to start it; a cell sent after the failure is refused at once, by design).
        await until(lambda: "before" in "".join(seen), "the cell is running")
        gate.set()
        result = await asyncio.wait_for(cell, 30)  # never a hang
        assert result.is_error
        assert "The kernel's tool server could not start" in result.text
        assert "no module named 'uvicorn'" in result.text
        assert "before" in result.text and "never" not in result.text.splitlines()
        await until(lambda: ex.state == "failed", "the executor says it failed")
        assert states[-1][0] == "failed" and "tool server could not start" in states[-1][1]
        with pytest.raises(ExecutorError, match="tool server could not start"):
            await run(ex, "print(1)")
        await no_new_descendants(before, within=15)  # its kernel and gateway went with it
    finally:
        gate.set()
        await ex.stop()
    assert ex.state == "stopped"


async def test_a_tool_server_that_fails_while_the_kernel_starts_fails_the_start(
    tmp_path: Path, tool_server_gate: Callable[[Exception | None], threading.Event]
) -> None:
    gate = tool_server_gate(ImportError("no module named 'uvicorn'"))
    gate.set()
    before = descendants()
    ex = _executor(tmp_path)
    with pytest.raises(ExecutorError, match="uvicorn"):
        await asyncio.wait_for(ex.start(), 60)
    assert ex.state == "failed"
    await no_new_descendants(before, within=15)
    await ex.stop()


def _settings(tmp_path: Path) -> Settings:
    (tmp_path / "work").mkdir(exist_ok=True)
    return Settings(working_dir=tmp_path / "work", images_dir=tmp_path / "images", enable_subagents=False)


async def test_an_agent_adopts_a_launched_executor_reports_it_and_stops_it(tmp_path: Path) -> None:
    before = descendants()
    launch = await KernelLaunch.begin(_settings(tmp_path))
    await asyncio.wait_for(asyncio.shield(launch.task), 60)  # ready before any agent listens
    agent = Agent("test", _settings(tmp_path), kernel_launch=launch)
    seen: list[AgentEvent] = []
    agent.subscribe(seen.append)
    try:
        await agent.start()
        executor = await agent.kernel.ensure()
        assert executor is launch.executor and launch.adopted
        assert agent.kernel_state == "ready"
        assert any(isinstance(e, KernelStatus) and e.state == "ready" for e in seen), seen
        _, result = await run(executor, "print(6 * 7)")
        assert result.text == "42"
    finally:
        await agent.stop()
    assert launch.executor.state == "stopped"
    await no_new_descendants(before, within=15)


async def test_an_agent_stopped_while_its_launched_kernel_starts_leaves_nothing(tmp_path: Path) -> None:
    before = descendants()
    launch = await KernelLaunch.begin(_settings(tmp_path))
    agent = Agent("test", _settings(tmp_path), kernel_launch=launch)
    await agent.start()
    await until(lambda: descendants() - before, "the kernel's processes start")
    await agent.stop()
    assert launch.executor.state in ("stopped", "failed")
    assert launch.task.done()
    await no_new_descendants(before, within=15)


async def test_an_agent_never_started_stops_the_kernel_launched_for_it(tmp_path: Path) -> None:
    before = descendants()
    launch = await KernelLaunch.begin(_settings(tmp_path))
    agent = Agent("test", _settings(tmp_path), kernel_launch=launch)
    await agent.stop()
    assert launch.task.done()
    await no_new_descendants(before, within=15)


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[KernelLaunch]:
    """The kernels the app launches (``KernelLaunch.begin`` runs as it is and records each)."""
    made: list[KernelLaunch] = []
    begin = KernelLaunch.begin

    async def recorded(settings: Settings) -> KernelLaunch:
        launch = await begin(settings)
        made.append(launch)
        return launch

    monkeypatch.setattr(KernelLaunch, "begin", recorded)
    return made


async def test_the_app_launches_the_kernel_before_the_agent_and_the_agent_adopts_it(
    tmp_path: Path, launches: list[KernelLaunch]
) -> None:
    before = descendants()
    s = script([Code("print(6 * 7)")], ["42"])
    app = make_app(s, tmp_path / "sessions", tmp_path, config={"enable_subagents": False})
    async with app.run_test(size=SIZE) as pilot:
        await until_pilot(
            pilot, lambda: app.agent is not None and app.agent.kernel_state == "ready", limit=60
        )
        assert app.agent is not None
        assert len(launches) == 1 and launches[0].adopted
        assert app.agent.kernel.executor is launches[0].executor
        assert app.main_screen.status_bar.query_one("#status-kernel").content == "kernel: ready"
        await app.action_quit()
    assert launches[0].executor.state == "stopped"
    await no_new_descendants(before, within=15)


async def test_an_app_whose_agent_starts_its_kernel_on_use_launches_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launches: list[Settings] = []

    async def recorded(settings: Settings) -> KernelLaunch:
        launches.append(settings)
        raise AssertionError("no kernel is launched when the agent starts its own on use")

    monkeypatch.setattr(KernelLaunch, "begin", recorded)
    s = script(["hello"])
    app = make_app(s, tmp_path / "sessions", tmp_path, eager_kernel=False)
    async with app.run_test(size=SIZE) as pilot:
        await until_pilot(pilot, lambda: app.agent_ready, limit=30)
        assert app.agent is not None and app.agent.kernel_state == "stopped"
    assert launches == []


@pytest.mark.parametrize(("key", "seen"), [("n", "None"), ("t", "from-the-project")])
async def test_the_kernel_launches_only_once_trust_is_decided_with_what_it_allows(
    tmp_path: Path, launches: list[KernelLaunch], key: str, seen: str
) -> None:
    project = tmp_path / "clone"
    project.mkdir()
    (project / ".freeact-tui.toml").write_text('kernel_env = { PROJECT_MARK = "from-the-project" }\n')
    # the user lets this project's name reach the kernel (``project_kernel_env``: none by default)
    settings = {"working_dir": str(project), "sessions_dir": str(tmp_path / "sessions")}
    config = load_config(None, {**settings, "project_kernel_env": ["PROJECT_MARK"]}, cwd=project)
    before = descendants()
    app = FreeactApp(config, model=script(["hello"]).model(), enable_subagents=False)
    async with app.run_test(size=SIZE) as pilot:
        await until_pilot(pilot, lambda: isinstance(app.screen, TrustScreen), limit=30)
        await asyncio.sleep(1.0)  # the boot waits on the dialog: nothing of the project starts meanwhile
        assert launches == [] and descendants() == before
        await pilot.press(key)
        await until_pilot(
            pilot, lambda: app.agent is not None and app.agent.kernel_state == "ready", limit=60
        )
        assert (
            len(launches) == 1 and app.agent is not None and app.agent.kernel.executor is launches[0].executor
        )
        _, result = await run(launches[0].executor, "import os; print(os.environ.get('PROJECT_MARK'))")
        assert result.text == seen
        await app.action_quit()
    await no_new_descendants(before, within=15)
