"""The plan the agent keeps (the task-planning skill's plan file) as ACP ``plan`` updates.

The SDK's own client side drives the real ``freeact-tui acp`` process; the model is the fake OpenAI
server, writing and ticking the plan file with the file tools and with code in the real kernel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from freeact_tui.acp.plan import plan_entries
from freeact_tui.project import paths
from tests.acp_client import EditorClient, RecordingClient, acp_agent, write_config
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

PLAN = """# Fix the parser

## Steps

- [ ] Reproduce the bug
- [ ] Write a failing test
- [ ] Fix it

## Notes

- [ ] not a step? it is a checkbox too, and counts as one
"""


def call(tool: str, args: dict[str, Any], call_id: str) -> Reply:
    return Reply(tool_calls=[ToolCallReply(tool, args, call_id=call_id)])


def plans(client: RecordingClient) -> list[list[tuple[str, str]]]:
    return [[(e["content"], e["status"]) for e in u["entries"]] for u in client.of("plan")]


def test_checklist_entries_and_their_status() -> None:
    entries = plan_entries("- [x] one\n* [X] two\n  - [ ] three\n- [ ] four\ntext\n- [] no\n- [ ]   \n")
    assert [(e.content, e.status, e.priority) for e in entries] == [
        ("one", "completed", "medium"),
        ("two", "completed", "medium"),
        ("three", "in_progress", "medium"),
        ("four", "pending", "medium"),
    ]
    assert plan_entries("# no checklist\n") == []


async def test_a_plan_written_and_ticked_by_the_agent_is_sent_as_plan_updates(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    plan_file = paths.data_dir() / "plans" / "fix-the-parser.md"  # outside a freeact project
    tick = (
        "from pathlib import Path\n"
        f"p = Path({str(plan_file)!r})\n"
        "p.write_text(p.read_text().replace('- [ ] Reproduce', '- [x] Reproduce'))\n"
        "print('ticked')"
    )
    fake_openai.script(
        # A checklist in an ordinary file is not a plan.
        call("filesystem_write_text_file", {"path": "todo.md", "content": "- [ ] not a plan\n"}, "call_t"),
        call("filesystem_write_text_file", {"path": str(plan_file), "content": PLAN}, "call_p"),
        Reply("Here is the plan."),
        call("ipybox_execute_ipython_cell", {"code": tick}, "call_c"),
        Reply("Step one done."),
    )
    client = RecordingClient(["allow_once"] * 3)
    config = write_config(tmp_path)
    async with acp_agent(client, *fake_args(fake_openai, config), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=[text_block("plan the fix")])
        first = plans(client)
        await conn.prompt(session_id=sid, prompt=[text_block("go on")])
    steps = [
        "Reproduce the bug",
        "Write a failing test",
        "Fix it",
        "not a step? it is a checkbox too, and counts as one",
    ]
    assert first == [list(zip(steps, ["in_progress", "pending", "pending", "pending"], strict=True))]
    assert plans(client)[1:] == [
        list(zip(steps, ["completed", "in_progress", "pending", "pending"], strict=True))
    ]
    # Sent after the call that wrote it finished, before the answer.
    kinds = [u["sessionUpdate"] for u in client.updates]
    plan_at = kinds.index("plan")
    assert client.updates[plan_at - 1].get("toolCallId") == "call_p"
    assert client.updates[plan_at - 1].get("status") == "completed"


async def test_a_plan_written_through_the_editor_is_sent_even_unsaved(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / ".freeact" / "plans").mkdir(parents=True)  # a freeact project: plans in .freeact/plans
    plan_file = work / ".freeact" / "plans" / "fix-the-parser.md"
    plan_file.write_text(PLAN)
    path = str(plan_file.resolve())
    edit = {
        "path": ".freeact/plans/fix-the-parser.md",
        "old_text": "- [ ] Reproduce",
        "new_text": "- [x] Reproduce",
    }
    fake_openai.script(call("filesystem_edit_text_file", edit, "call_e"), Reply("ticked"))
    client = EditorClient(["allow_once"], saves=False)
    config = write_config(tmp_path)
    async with acp_agent(client, *fake_args(fake_openai, config), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("tick step one")])
    assert plan_file.read_text() == PLAN  # the editor did not save: the disk knows nothing of it
    assert [p for p, _ in client.writes] == [path]
    (sent,) = plans(client)
    assert sent[:2] == [("Reproduce the bug", "completed"), ("Write a failing test", "in_progress")]
