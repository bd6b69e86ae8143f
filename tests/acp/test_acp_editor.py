"""The file tools through the client's ``fs/*``: the model reads and edits the editor's unsaved buffers.

The SDK's own client side (``EditorClient``: files open with unsaved changes) drives the real
``freeact-tui acp`` process; the model is the fake OpenAI server, the kernel and store are real.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from freeact_tui.checkpoints.engine import CheckpointStore
from tests.acp_client import EditorClient, RecordingClient, acp_agent, write_config
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def file_call(tool: str, args: dict[str, object], call_id: str) -> Reply:
    return Reply(tool_calls=[ToolCallReply(tool, args, call_id=call_id)])


async def test_read_and_edit_go_through_the_editors_unsaved_buffer(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    notes = work / "notes.txt"
    notes.write_text("alpha\n")
    path = str(notes.resolve())
    buffer = "alpha\nbeta (unsaved)\n"  # typed in the editor, not saved
    edit = {"path": "notes.txt", "old_text": "beta (unsaved)", "new_text": "beta, kept by the agent"}
    fake_openai.script(
        # First turn: the edit is rejected (that ends the turn); nothing may reach the editor.
        file_call("filesystem_edit_text_file", edit, "call_rejected"),
        # Second turn: read, then edit text that exists only in the buffer.
        file_call("filesystem_read_text_file", {"path": "notes.txt"}, "call_read"),
        file_call("filesystem_edit_text_file", edit, "call_edit"),
        Reply("edited"),
    )
    client = EditorClient(["reject_once", "allow_once"], buffers={path: buffer})
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        sid = session.session_id
        first = await conn.prompt(session_id=sid, prompt=[text_block("edit notes")])
        assert first.stop_reason == "end_turn"
        assert client.writes == [] and client.buffers[path] == buffer  # rejected: the editor is untouched
        second = await conn.prompt(session_id=sid, prompt=[text_block("read and edit notes")])
    assert second.stop_reason == "end_turn"
    # The model read the buffer, not the disk.
    read_result = fake_openai.requests[2].tool_results()[-1]
    assert "beta (unsaved)" in read_result
    # The edit was asked with a diff against the buffer, and written through the editor.
    (asked, _) = client.asked[-1]
    diff = next(c for c in asked.content or [] if c.type == "diff")
    assert (diff.old_text, diff.new_text) == (buffer, "alpha\nbeta, kept by the agent\n")
    assert client.writes == [(path, "alpha\nbeta, kept by the agent\n")]
    assert client.statuses("call_edit")[-1] == "completed"
    assert "Edited notes.txt: 1 replacement(s)" in fake_openai.requests[3].tool_results()[-1]
    assert notes.read_text() == "alpha\nbeta, kept by the agent\n"  # the editor saved it
    assert client.reads and all(p == path for p in client.reads)


async def test_an_edit_through_the_editor_is_checkpointed_first_and_can_be_undone(
    fake_openai: FakeOpenAI, work: Path, tmp_path: Path
) -> None:
    notes = work / "notes.txt"
    notes.write_text("alpha\n")
    path = str(notes.resolve())
    edit = {"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}
    fake_openai.script(file_call("filesystem_edit_text_file", edit, "call_edit"), Reply("edited"))
    client = EditorClient(["allow_once"], buffers={path: "alpha\nbeta\n"})
    config = write_config(tmp_path, checkpoints=True)
    async with acp_agent(client, *fake_args(fake_openai, config), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit")])
    assert client.writes == [(path, "alpha\ngamma\n")]
    store = CheckpointStore(work)
    # the action's checkpoint (the turn's end made one more: the state the agent left)
    before = next((c for c in await store.list() if c.meta.get("corr_id") == "call_edit"), None)
    assert before is not None
    # The checkpoint holds the file as it was on disk before the editor saved the edit: undo restores it.
    await store.restore(before, ["notes.txt"])
    assert notes.read_text() == "alpha\n"


async def test_a_new_file_is_created_through_the_editor_and_outside_files_stay_on_disk(
    fake_openai: FakeOpenAI, work: Path, config_file: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("on disk\n")
    fake_openai.script(
        file_call("filesystem_write_text_file", {"path": "new/made.txt", "content": "hello\n"}, "call_w"),
        file_call("filesystem_read_text_file", {"path": str(outside)}, "call_o"),
        Reply("done"),
    )
    client = EditorClient(["allow_once", "allow_once"], buffers={str(outside.resolve()): "editor text\n"})
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("write")])
    assert result.stop_reason == "end_turn"
    made = str((work / "new" / "made.txt").resolve())
    assert client.writes == [(made, "hello\n")]
    assert (work / "new" / "made.txt").read_text() == "hello\n"
    # Outside the working directory the kernel reads the disk, as without the editor.
    assert "on disk" in fake_openai.requests[2].tool_results()[-1]
    assert client.reads == [made]  # asked whether the editor holds it unsaved (it did not); never outside


async def test_a_buffer_the_editor_never_saved_is_read_and_edited_through_it(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    draft = work / "draft.md"  # open in the editor, never saved: not on the disk
    path = str(draft.resolve())
    edit = {"path": "draft.md", "old_text": "first idea", "new_text": "better idea"}
    fake_openai.script(
        file_call("filesystem_read_text_file", {"path": "draft.md"}, "call_read"),
        file_call("filesystem_edit_text_file", edit, "call_edit"),
        Reply("edited"),
    )
    client = EditorClient(["allow_once", "allow_once"], buffers={path: "# Draft\nfirst idea\n"}, saves=False)
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("improve the draft")])
    assert result.stop_reason == "end_turn"
    assert "first idea" in fake_openai.requests[1].tool_results()[-1]
    assert client.statuses("call_read")[-1] == "completed"
    assert client.writes == [(path, "# Draft\nbetter idea\n")]
    assert client.statuses("call_edit")[-1] == "completed"
    assert not draft.exists()  # the editor keeps it unsaved; nothing was written behind its back


async def test_without_fs_the_disk_is_read_as_before(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    (work / "notes.txt").write_text("disk text\n")
    fake_openai.script(
        file_call("filesystem_read_text_file", {"path": "notes.txt"}, "call_read"), Reply("read")
    )
    client = RecordingClient()  # offers no fs/*: a request for it would fail the turn
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("read")])
    assert "disk text" in fake_openai.requests[1].tool_results()[-1]
