"""Snapshots of the approval dialog before it is armed, of a broad always-rule warning, and of a resumed
session with decisions, shell parts and a rejection under its own call (reviewed as pictures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from textual.pilot import Pilot
from textual.widgets import Input

from freeact_tui.project.config import Config
from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from tests.helpers import SESSION_ID, SIZE, SnapCompare, before, log_settled, main, send
from tests.helpers import own_kernel_until as until
from tests.helpers import snapshot_app as make_app
from tests.scripted import CODE_TOOL, Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.usefixtures("home_is_tmp")]

CODE = "import json\n\nwith open('notes.txt') as fh:\n    words = fh.read().split()\nprint(json.dumps({'words': len(words)}))"


def test_approval_dialog_before_it_is_armed(
    snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ApprovalScreen, "ARMING_SECONDS", 3600.0)  # stays unarmed for the picture
    s = script(["I will count the words.", Code(CODE)])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Count the words in notes.txt", wait_ready=False)
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await log_settled(pilot)  # in sight below the dialog
        await pilot.press("y")  # typed ahead: ignored

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_approval_dialog_warns_on_a_broad_always_rule(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script(["I will count the words.", Code(CODE)])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Count the words in notes.txt", wait_ready=False)
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await log_settled(pilot)  # in sight below the dialog
        await pilot.press("a")
        pilot.app.screen.query_one("#approval-pattern", Input).value = "*"
        await pilot.press("enter")  # the first Enter only asks for a second one

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def _call(corr: str, code: str) -> ToolCallPart:
    return ToolCallPart(CODE_TOOL, {"code": code}, tool_call_id=corr)


def _return(corr: str, text: str, outcome: str, approvals: list[dict[str, Any]]) -> ToolReturnPart:
    return ToolReturnPart(
        CODE_TOOL, text, tool_call_id=corr, metadata={"outcome": outcome, "approvals": approvals}
    )


def _shell(command: str, full: str, approved: bool, **extra: Any) -> dict[str, Any]:
    return {
        "call": {"kind": "shell", "command": command, "full_command": full},
        "approved": approved,
        "by": "user",
        **extra,
    }


def stored_session(root: Path) -> None:
    """A session as the agent stores it: two parallel calls (one rejected), then a shell-only cell."""
    session = SessionStore(root).session(SESSION_ID)
    session.append(
        [
            ModelRequest(parts=[UserPromptPart("Show the sizes, and delete the cache")]),
            ModelResponse(
                parts=[
                    _call("c1", "print(sum([3, 4]))"),
                    _call("c2", "import shutil\nshutil.rmtree('cache')"),
                ]
            ),
            ModelRequest(
                parts=[
                    _return("c1", "7", "ok", [{"call": {"kind": "code"}, "approved": True, "by": "user"}]),
                    _return(
                        "c2",
                        "The user rejected this code action. Wait for new instructions.",
                        "rejected",
                        [{"call": {"kind": "code"}, "approved": False, "by": "user"}],
                    ),
                ]
            ),
            ModelRequest(parts=[UserPromptPart("Then make the build dir only")]),
            ModelResponse(parts=[_call("c3", "!mkdir -p build && rm -rf dist")]),
            ModelRequest(
                parts=[
                    _return(
                        "c3",
                        "\n\nThe user rejected `rm -rf dist`; the action was stopped.",
                        "rejected",
                        [
                            {"call": {"kind": "code"}, "approved": True, "by": "parts"},
                            _shell(
                                "mkdir -p build",
                                "mkdir -p build && rm -rf dist",
                                True,
                                remember="session",
                                pattern="mkdir *",
                            ),
                            _shell("rm -rf dist", "mkdir -p build && rm -rf dist", False),
                        ],
                    )
                ]
            ),
            ModelRequest(parts=[UserPromptPart("Thanks")]),
            ModelResponse(parts=[TextPart("The build dir is ready; **dist** was kept.")]),
        ]
    )
    session.flush_meta()
    session.unlock()


def test_resumed_session_looks_as_it_did_live(snap_compare: SnapCompare, tmp_path: Path) -> None:
    stored_session(tmp_path / "sessions")
    (tmp_path / "work").mkdir()
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path / "work")
    app = FreeactApp(config, model=script(["unused"]).model(), session_id=SESSION_ID)

    async def shown(pilot: Pilot[Any]) -> None:
        await until(pilot, lambda: len(main(pilot.app).conversation.blocks) > 5)

    assert snap_compare(app, terminal_size=(120, 48), run_before=before(shown))
