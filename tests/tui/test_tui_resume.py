"""A resumed session looks as it did live: decisions, shell parts, results under their own calls (real kernel)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from textual.widgets import Input

from freeact_tui.store.sessions import SessionStore
from freeact_tui.toolcalls import ShellAction
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import (
    ActionBlock,
    Block,
    ErrorBlock,
    ExecutionOutputBlock,
    UserMessageBlock,
)
from tests import helpers
from tests.helpers import freeact_load, main, other_writer, ready, send, until
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel
other_writer = other_writer  # the fixture: another process holding a session open
make_app = helpers.chat_app
SIZE = (120, 40)


dialog_for = partial(helpers.dialog, limit=60.0)


def look(app: FreeactApp) -> list[tuple[str, str, str]]:
    """What the log shows, block by block: kind, call id, decision (or output text)."""
    rows: list[tuple[str, str, str]] = []
    for block in main(app).conversation.query(Block):
        if isinstance(block, ActionBlock):
            rows.append((type(block).__name__, block.corr_id, block.status))
        elif isinstance(block, ExecutionOutputBlock):
            rows.append(("output", block.corr_id, block.text))
        else:
            rows.append((type(block).__name__, block.corr_id, ""))
    return rows


async def test_resumed_session_shows_decisions_parts_and_results_as_live(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = script(
        [Code("print('left')", call_id="c1"), Code("print('right')", call_id="c2")],  # parallel: y, then n
        [Code("n = 2\n!touch one.txt && touch two.txt", call_id="c3")],
        ["both parts ran"],
        [Code("!mkdir -p solo && rm -rf solo", call_id="c4")],  # only shell: asked per part
    )
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "two at once")
        await dialog_for(pilot, showing="print('left')")
        await pilot.press("y")
        await dialog_for(pilot, showing="print('right')")
        await pilot.press("n", "enter")  # n opens the instruction line; Enter alone rejects
        await until(pilot, lambda: not main(app).turn_running)

        await send(pilot, "shell parts")
        await dialog_for(pilot, showing="n = 2")
        await pilot.press("y")
        shell = await dialog_for(pilot, showing="touch one.txt")
        assert isinstance(shell.request.tool_call, ShellAction)
        await pilot.press("s")  # allow for this session; touch may write any file: the user widens it
        shell.query_one("#approval-pattern", Input).value = "touch *"
        await pilot.press("enter")
        await until(pilot, lambda: not main(app).turn_running)

        await send(pilot, "only shell")
        await dialog_for(pilot, showing="mkdir -p solo")
        await pilot.press("y")
        await dialog_for(pilot, showing="rm -rf solo")
        await pilot.press("n", "enter")  # n opens the instruction line; Enter alone rejects
        await until(pilot, lambda: not main(app).turn_running)
        await pilot.pause()
        live = look(app)
        assert app.agent is not None
        session_id = app.agent.session_id

    # What live showed, in order: the rejected right-hand call has nothing under it.
    expected_statuses = {
        ("ActionBlock", "c1"): ["approved"],
        ("ActionBlock", "c2"): ["rejected"],
        ("ActionBlock", "c3"): ["approved", "approved · session rule: touch *", "auto-approved by rule"],
        ("ActionBlock", "c4"): ["shell commands asked one by one", "approved", "rejected"],
    }
    for (kind, corr), statuses in expected_statuses.items():
        assert [st for k, c, st in live if (k, c) == (kind, corr)] == statuses, live
    assert [c for k, c, _ in live if k == "output"] == ["c1", "c3", "c4"]

    resumed = make_app(script(["unused"]), session_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.pause()
        assert look(resumed) == live


async def test_decisions_are_stored_as_metadata_freeact_ignores(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = script([Code("!touch stored.txt", call_id="c1")], ["ok"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "store")
        await dialog_for(pilot, showing="touch stored.txt")
        await pilot.press("y")
        await until(pilot, lambda: not main(app).turn_running)
        assert app.agent is not None
        session_id = app.agent.session_id
    lines = (tmp_path / "sessions" / session_id / "main.jsonl").read_text().splitlines()
    returns = [
        part
        for line in lines
        for part in json.loads(line)["message"]["parts"]
        if part.get("part_kind") == "tool-return"
    ]
    (ret,) = returns
    assert set(json.loads(lines[0])) == {"v", "message", "meta"}  # freeact's envelope, nothing added
    assert ret["metadata"]["approvals"] == [
        {"call": {"kind": "code"}, "approved": True, "by": "parts"},
        {
            "call": {"kind": "shell", "command": "touch stored.txt", "full_command": "touch stored.txt"},
            "approved": True,
            "by": "user",
        },
    ]
    loaded = SessionStore(tmp_path / "sessions").session(session_id).load()
    assert loaded.damage is None and len(loaded.messages) == len(lines)
    assert len(freeact_load(tmp_path / "sessions" / session_id / "main.jsonl")) == len(
        lines
    )  # freeact's rules


async def test_export_names_the_full_path_it_wrote(
    make_app: Callable[..., FreeactApp], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    app = make_app(script(["an answer"]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "a question")
        await until(pilot, lambda: not main(app).turn_running and bool(app.agent and app.agent.history))
        assert app.agent is not None
        await send(pilot, "/export out/chat.md")
        await pilot.pause()
        target = tmp_path / "out" / "chat.md"
        assert "an answer" in target.read_text()
        messages = [n.message for n in app._notifications]
        assert f"Exported to {target}" in messages  # the full path, not "out/chat.md"
        await send(pilot, "/export out/chat.md/inside.md")
        await pilot.pause()
        failed = [n for n in app._notifications if n.message.startswith("Export failed")]
        assert failed and "chat.md" in failed[0].message and failed[0].severity == "error"


async def test_a_session_open_in_another_process_is_read_only_here(
    make_app: Callable[..., FreeactApp], tmp_path: Path, other_writer: Callable[[str], subprocess.Popen[str]]
) -> None:
    session_id = SessionStore(tmp_path / "sessions").new_session().id
    other = other_writer(session_id)  # another freeact-tui has this session open
    s = script(["never asked"])
    app = make_app(s, session_id=session_id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.pause()
        assert [b.text for b in main(app).conversation.query(UserMessageBlock)] == ["from the other window"]
        errors = [b.text for b in main(app).conversation.query(ErrorBlock)]
        assert any(f"open in another freeact-tui (pid {other.pid})" in e for e in errors), errors
        assert main(app).read_only
        await send(pilot, "hello")
        await pilot.pause()
        assert not main(app).turn_running and not s.requests
    history = (tmp_path / "sessions" / session_id / "main.jsonl").read_text()
    assert "hello" not in history and history.count("\n") == 1
    assert (tmp_path / "sessions" / session_id / "lock").read_text().strip() == str(other.pid)
