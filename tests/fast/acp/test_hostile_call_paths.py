"""#44 (atk9a F2): a path from the model or the store whose probe raises (a name too long, a loop of links,
a NUL byte, a lone surrogate, ``~nosuchuser``) broke building the view of its tool call: ``session/prompt``
answered -32603 with no ``tool_call``, and ``session/load`` of the session failed forever.

The class: view/replay code probing a path someone else chose. Every file tool (read, media read, write,
edit), live (``TurnUpdates``: the approval request) and replayed (``replay_updates``: the stored call and
its result), with generated hostile paths, relative and absolute, with and without the kernel's resolved
path: always a view, naming the path, never an exception.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart

from freeact_tui.acp.replay import replay_updates
from freeact_tui.acp.toolcall_view import describe
from freeact_tui.acp.turn_updates import TurnUpdates
from freeact_tui.events import ApprovalRequest
from freeact_tui.toolcalls import (
    EDIT_TEXT_TOOL,
    READ_MEDIA_TOOL,
    READ_TEXT_TOOL,
    WRITE_TEXT_TOOL,
    FileCall,
    FileEdit,
    FileRead,
    FileWrite,
    TextEdit,
)

COMPONENTS = st.one_of(
    st.sampled_from(["a", "..", ".", "~", "~nosuchuserxyz", "loop", "x.txt", ""]),
    st.integers(250, 700).map(lambda n: "a" * n),  # beyond NAME_MAX
    st.text(min_size=1, max_size=6),  # NUL bytes, lone surrogates, controls
)
PATHS = st.builds(
    lambda lead, parts: lead + "/".join(parts),
    st.sampled_from(["", "/", "/tmp/", "~/", "~nosuchuserxyz/", "./"]),
    st.lists(COMPONENTS, min_size=1, max_size=4),
)
REPORTED = ["/tmp/" + "a" * 300 + "/x.txt", "a" * 300 + ".txt", "~nosuchuserxyz/" + "b" * 300, "a\x00b.txt"]

CALLS = {
    READ_TEXT_TOOL: lambda path, resolved: FileRead(path, resolved=resolved),
    READ_MEDIA_TOOL: lambda path, resolved: FileRead(path, media=True, resolved=resolved),
    WRITE_TEXT_TOOL: lambda path, resolved: FileWrite(path, "x", resolved=resolved),
    EDIT_TEXT_TOOL: lambda path, resolved: FileEdit(path, (TextEdit("a", "b"),), resolved=resolved),
}


def _args(tool: str, path: str) -> dict[str, object]:
    if tool == WRITE_TEXT_TOOL:
        return {"path": path, "content": "x"}
    if tool == EDIT_TEXT_TOOL:
        return {"path": path, "edits": [{"old_text": "a", "new_text": "b"}]}
    return {"path": path}


async def _live(call: FileCall, working_dir: Path) -> dict[str, object]:
    (start,) = TurnUpdates(working_dir).see(ApprovalRequest(call, corr_id="c1"))  # a request needs a loop
    return start.model_dump(mode="json", by_alias=True, exclude_none=True)


def _check_live(tool: str, path: str, resolved: str, working_dir: Path) -> None:
    call: FileCall = CALLS[tool](path, resolved)
    view = describe(call, _args(tool, path), working_dir)
    assert view.locations and view.locations[0].path
    dumped = asyncio.run(_live(call, working_dir))
    assert dumped["sessionUpdate"] == "tool_call" and dumped["toolCallId"] == "c1"


def _check_replay(tool: str, path: str, working_dir: Path) -> None:
    messages = [
        ModelRequest(parts=[UserPromptPart("go")]),
        ModelResponse(parts=[ToolCallPart(tool, _args(tool, path), tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart(tool, "done", tool_call_id="c1")]),
    ]
    updates = [u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in replay_updates(messages, working_dir)]
    kinds = [(u["sessionUpdate"], u.get("toolCallId")) for u in updates]
    assert ("tool_call", "c1") in kinds and ("tool_call_update", "c1") in kinds, kinds


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(sorted(CALLS)), path=PATHS, resolved_too=st.booleans())
def test_every_file_tool_with_any_path_has_a_view_live_and_replayed(
    tool: str, path: str, resolved_too: bool, tmp_path: Path
) -> None:
    loop = tmp_path / "loop"
    if not loop.is_symlink():
        loop.symlink_to("loop")
    resolved = path if resolved_too and path.startswith("/") else ""
    _check_live(tool, path, resolved, tmp_path)
    _check_replay(tool, path, tmp_path)


def test_the_reported_paths_have_a_view_live_and_replayed(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    for path in [*REPORTED, str(tmp_path / "loop" / "x.txt")]:
        for tool in CALLS:
            _check_live(tool, path, "", tmp_path)
            _check_live(tool, path, path if path.startswith("/") else "", tmp_path)
            _check_replay(tool, path, tmp_path)
    # a write of a file that cannot exist: a diff from nothing, the path as the model wrote it
    view = describe(FileWrite("~nosuchuserxyz/x", "new"), {}, tmp_path)
    assert view.locations[0].path == str(tmp_path / "~nosuchuserxyz/x")
    assert view.content[0].model_dump()["old_text"] is None
