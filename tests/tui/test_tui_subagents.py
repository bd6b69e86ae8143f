"""Subagents in the real app: a real Agent, real kernels, a routed scripted model, Pilot and a snapshot."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from textual.pilot import Pilot

from freeact_tui.agent import subagents
from freeact_tui.events import SubagentStatus
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.toolcalls import CodeAction, SubagentTask
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ActionBlock, SubagentBlock, ToolOutputBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from freeact_tui.tui.widgets.side_panel import SidePanel
from freeact_tui.tui.widgets.subagent_list import SubagentList
from tests import helpers
from tests.helpers import first_prompt, main, returns, send, until
from tests.scripted import CODE_TOOL

pytestmark = pytest.mark.kernel
executor = helpers.kernel  # one parent kernel for the module
SIZE = (120, 40)
NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
INTRO = "\n".join(f"{n}. Step {n} of the plan, explained." for n in range(1, 41))


def routed_model(code_for: Callable[[str], str]) -> FunctionModel:
    """The parent writes a long plan and delegates two tasks; each subagent runs one action, then answers."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        prompt, done = first_prompt(messages), returns(messages)
        if prompt == "delegate":
            if done:
                yield "Both tasks came back."
                return
            yield INTRO + "\n"
            for index, (task, call_id) in enumerate([("task A", "call-a"), ("task B", "call-b")], start=1):
                args = json.dumps({"prompt": task, "max_turns": 5})
                yield {index: DeltaToolCall(name="subagent_task", json_args=args, tool_call_id=call_id)}
            return
        if not done:
            code = json.dumps({"code": code_for(prompt)})
            yield {0: DeltaToolCall(name=CODE_TOOL, json_args=code, tool_call_id="s1")}
        else:
            yield f"{prompt} finished: {done[0].content}"

    return FunctionModel(stream_function=stream, model_name="routed")


@pytest.fixture
def fixed_sub_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Subagent ids are random in the agent; number them so tests and snapshots are deterministic."""
    counter = itertools.count(1)
    monkeypatch.setattr(subagents, "new_subagent_id", lambda: f"sub-{next(counter):04x}")


def make_app(
    model: FunctionModel,
    tmp_path: Path,
    executor: KernelExecutor | None = None,
    system_prompt: str | None = None,
    **kw: Any,
) -> FreeactApp:
    (tmp_path / "work").mkdir(exist_ok=True)
    config = {"subagent_pool_size": 0, "system_prompt": system_prompt}
    return helpers.make_app(
        model,
        tmp_path / "sessions",
        tmp_path / "work",
        config=config,
        executor=executor,
        clock=lambda: NOW,
        **kw,
    )


dialog_for = partial(helpers.dialog, limit=60.0)  # subagents' kernels start meanwhile


@pytest.mark.asyncio(loop_scope="module")
async def test_subagents_live_in_panel_dialogs_and_resume(
    executor: KernelExecutor, tmp_path: Path, fixed_sub_ids: None
) -> None:
    app = make_app(routed_model(lambda p: f"print('{p} ran')"), tmp_path, executor)
    seen: list[tuple[str, str]] = []
    async with app.run_test(size=SIZE) as pilot:
        panel = main(app).query_one(SidePanel)
        original = panel.update_subagent

        def spy(event: SubagentStatus) -> None:
            seen.append((event.agent_id, event.state))
            original(event)

        panel.update_subagent = spy  # type: ignore[method-assign]
        await send(pilot, "delegate")
        for _ in range(2):  # the parent's two subagent tasks are asked first
            task_dialog = await dialog_for(pilot, SubagentTask)
            assert task_dialog.request.agent_id == "main"
            await pilot.press("y")
            await until(pilot, lambda d=task_dialog: app.screen is not d)  # type: ignore[misc]

        # Both subagents ask for their code action at once: the dialog queues them, labelled by id.
        first = await dialog_for(pilot, CodeAction)
        await until(
            pilot, lambda: first.query_one("#approval-dialog").border_subtitle == "1 of 2", limit=180
        )  # two subagent kernels start; slow on a loaded machine
        first_id = first.request.agent_id
        assert first_id in ("sub-0001", "sub-0002")
        assert f"[{first_id}] Code action" in str(first.query_one("#approval-dialog").border_title)
        assert f"Agent {first_id} asks to run" in str(first.query_one("#approval-who").render())
        assert "2 approvals waiting" in str(main(app).status_bar.query_one("#status-approvals").render())
        listing = panel.query_one(SubagentList)
        assert {e.state for e in listing.entries} == {"waiting"}
        assert "2 active" in str(panel.query_one("#subagents-title").render())
        await pilot.press("y")
        second = await dialog_for(pilot, CodeAction, where=lambda request: request.agent_id != first_id)
        second_id = second.request.agent_id
        assert second.query_one("#approval-dialog").border_subtitle == "2 of 2"
        await pilot.press("n", "enter")  # n opens the instruction line; Enter alone rejects
        await until(pilot, lambda: not main(app).turn_running, limit=60)
        await pilot.pause()

        states = {e.agent_id: e.state for e in listing.entries}
        assert states == {first_id: "done", second_id: "failed"}
        mine = [state for agent, state in seen if agent == first_id]
        order = [mine.index(s) for s in ("queued", "running", "waiting", "done")]
        assert order == sorted(order), mine
        failed = str(listing.get_option(second_id).prompt)
        assert "failed" in failed and "rejected" in failed
        blocks = {b.corr_id: b for b in main(app).conversation.query(SubagentBlock)}
        assert f"{first_id} done" in blocks[listing.entry(first_id).corr_id].status  # type: ignore[union-attr]
        assert any(
            "task A ran" in b.content or "task B ran" in b.content for b in app.screen.query(ToolOutputBlock)
        )

        # Choosing a subagent in the panel scrolls the log to its task block.
        log = main(app).conversation
        await pilot.press("ctrl+b")
        await pilot.pause()
        log.scroll_home(animate=False)  # the long plan above the tasks fills the view
        listing.focus()
        await pilot.pause()
        target = blocks["call-a"]
        assert not log.content_region.contains_region(target.region)
        row = next(i for i, e in enumerate(listing.entries) if e.corr_id == "call-a")
        listing.highlighted = row
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert log.content_region.contains_region(target.region), (target.region, log.content_region)
        assert log.scroll_y > 30
        session_id = app.agent.session_id if app.agent else ""

    # Resume: the past subagent calls come back with their results and outcomes.
    resumed = make_app(routed_model(lambda p: ""), tmp_path, executor, session_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: resumed.agent_ready)
        await pilot.pause()
        log = main(resumed).conversation
        tasks = {b.corr_id: b for b in log.query(SubagentBlock)}
        assert set(tasks) == {"call-a", "call-b"}
        assert isinstance(tasks["call-a"].tool_call, SubagentTask)
        assert tasks["call-a"].tool_call.prompt == "task A"
        results = {b.corr_id: b for b in log.query(ToolOutputBlock)}
        done_call = "call-a" if first.request.parent_corr_id == "call-a" else "call-b"
        failed_call = "call-b" if done_call == "call-a" else "call-a"
        assert results[done_call].kind == "Subagent answer" and "ran" in results[done_call].content
        assert tasks[done_call].status == f"{first_id} done"  # as live
        assert results[failed_call].is_error
        assert tasks[failed_call].status == f"{second_id} failed: an action was rejected"
        assert "rejected" in results[failed_call].content
        assert not log.query(ActionBlock).filter(".-pending")
        # The subagents' own actions are back, inside their tasks, with their decisions.
        own = {b.agent_id: b for b in log.query(ActionBlock) if b.agent_id != "main"}
        assert own[first_id].parent is not None and own[first_id] in tasks[done_call].nested.children
        assert own[first_id].status == "approved" and own[second_id].status == "rejected"
        # The side panel lists the session's subagents instead of "No subagents".
        listing = main(resumed).query_one(SidePanel).query_one(SubagentList)
        assert {e.agent_id: e.state for e in listing.entries} == {first_id: "done", second_id: "failed"}


@pytest.mark.usefixtures("home_is_tmp")
def test_snapshot_side_panel_with_running_subagents(
    snap_compare: Callable[..., bool], tmp_path: Path, fixed_sub_ids: None
) -> None:
    """The real app, side panel open: two subagents running their actions, the session listed."""
    model = routed_model(lambda p: f"import time\nprint('{p} working', flush=True)\ntime.sleep(120)")
    # A fixed system prompt: the built-in one names temporary paths, and the panel shows the session's size.
    app = make_app(
        model,
        tmp_path,
        session_id="0b5848f8-89e8-4b08-a784-da134d221ea8",
        system_prompt="You are a test agent.",
    )

    async def run(pilot: Pilot[Any]) -> None:
        app.animation_level = "none"
        await until(pilot, lambda: app.agent is not None and app.agent.kernel_state == "ready", limit=60)
        main(app).query_one(PromptInput).cursor_blink = False
        await send(pilot, "delegate")
        for _ in range(2):
            await dialog_for(pilot, SubagentTask)
            await pilot.press("y")
        for _ in range(2):
            await dialog_for(pilot, CodeAction)
            await pilot.press("y")
        await until(
            pilot,
            lambda: sum("working" in b.text for b in main(app).query("ExecutionOutputBlock")) == 2,  # type: ignore[attr-defined]
            limit=60,
        )
        await pilot.press("ctrl+b")
        main(app).query_one(PromptInput).focus()
        await asyncio.sleep(0.3)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run)
