"""Checkpoints wired into the agent: a real kernel writes, deletes and moves files; undo, diff and
rewind bring them back; the conversation is cut by a marker that freeact can still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.rewind import rewind
from freeact_tui.checkpoints.actions import ActionCheckpoints
from freeact_tui.checkpoints.checkpointing import (
    ACTION_LOG,
    ActionLog,
    Checkpointing,
    CheckpointsUnavailableHere,
)
from freeact_tui.checkpoints.engine import CheckpointStore
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.store.sessions import SessionStore
from freeact_tui.toolcalls import CodeAction
from tests import helpers
from tests.helpers import freeact_load, make_agent, run
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

BINARY = bytes(range(256)) * 4


executor = helpers.kernel


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a original\n")
    (root / "old.txt").write_text("to be removed\n")
    (root / "m1.txt").write_text("to be moved\n")
    return root


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_undo_reverts_the_last_action_then_the_one_before(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    before = files_of(work)
    python_writes = (
        f"from pathlib import Path\nw = Path({str(work)!r})\n"
        "(w / 'a.txt').write_text('a changed\\n')\n"
        "(w / 'nested' / 'deep').mkdir(parents=True)\n"
        "(w / 'nested' / 'deep' / 'new.py').write_text('x = 1\\n')\n"
        f"(w / 'bin.dat').write_bytes({BINARY!r})\n"
    )
    shell = f"!rm {work}/old.txt && mv {work}/m1.txt {work}/sub/m2.txt"
    s = script([Code(python_writes, "c1")], [Code(shell, "c2")], ["done"])
    async with make_agent(s, executor, tmp_path, work) as agent:
        await run(agent, "change files")
        after = files_of(work)
        assert after["bin.dat"] == BINARY and "old.txt" not in after and "sub/m2.txt" in after

        plan = await agent.checkpointing.plan_undo("action")
        assert {r.corr_id for r in plan.records} == {"c2"}
        assert {(c.path, c.status) for c in plan.changes} == {
            ("old.txt", "deleted"),
            ("m1.txt", "deleted"),
            ("sub/m2.txt", "added"),
        }
        assert "-to be removed" in plan.diff
        await agent.checkpointing.undo(plan)
        now = files_of(work)
        assert now["old.txt"] == before["old.txt"] and now["m1.txt"] == before["m1.txt"]
        assert "sub/m2.txt" not in now and now["a.txt"] == b"a changed\n"  # the first action stays

        _, diff = await agent.checkpointing.action_diff("c1")
        assert "+a changed" in diff and "nested/deep/new.py" in diff and "Binary files" in diff

        plan = await agent.checkpointing.plan_undo("action")
        assert {r.corr_id for r in plan.records} == {"c1"}
        await agent.checkpointing.undo(plan)
        assert files_of(work) == before
        assert not (work / "nested").exists()  # emptied directories go too

        with pytest.raises(CheckpointsUnavailableHere, match="Nothing to undo"):
            await agent.checkpointing.plan_undo("action")
    # The model hears of the undo with the next message.
    assert agent.checkpointing.notes.pending is not None and "undid" in agent.checkpointing.notes.pending


async def test_undo_of_a_turn_after_resume_names_a_write_outside_the_working_dir(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    outside = tmp_path / "elsewhere" / "out.txt"
    code = (
        f"import os\nos.makedirs({str(outside.parent)!r}, exist_ok=True)\n"
        f"open({str(outside)!r}, 'w').write('outside')\n"
        f"open({str(work / 'a.txt')!r}, 'w').write('inside')\n"
    )
    s = script([Code(code, "c1")], [Code(f"!echo more > {work}/b.txt", "c2")], ["done"])
    async with make_agent(s, executor, tmp_path, work) as agent:
        await run(agent, "write inside and outside")
        session_id = agent.session_id
    assert (work / "b.txt").read_text() == "more\n"

    resumed = make_agent(script(["unused"]), executor, tmp_path, work, session_id=session_id)
    async with resumed:
        plan = await resumed.checkpointing.plan_undo("turn")
        # c2 twice: before the cell, and before the shell command inside it
        assert [r.corr_id for r in plan.records] == ["c1", "c2", "c2"]
        assert [r.kind for r in plan.records] == ["code", "code", "shell"]
        assert str(outside) in plan.outside
        assert {c.path for c in plan.changes} == {"a.txt", "b.txt"}
        await resumed.checkpointing.undo(plan)
    assert (work / "a.txt").read_text() == "a original\n" and not (work / "b.txt").exists()
    assert outside.read_text() == "outside"  # not covered: the undo said so and left it
    log = (tmp_path / "sessions" / session_id / ACTION_LOG).read_text().splitlines()
    # "after": the state the turn left (what changes later was not the agent's doing)
    assert [json.loads(line)["type"] for line in log] == ["action", "action", "action", "after", "undo"]


async def test_rewind_cuts_the_conversation_restores_files_restarts_the_kernel_and_survives_resume(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    f = work / "f.txt"
    s = script(
        [Code(f"rewind_var = 1\nopen({str(f)!r}, 'w').write('1')", "c1")],
        ["first done"],
        [Code(f"open({str(f)!r}, 'w').write('2')\nopen({str(work / 'g.txt')!r}, 'w').write('g')", "c2")],
        ["second done"],
    )
    async with make_agent(s, executor, tmp_path, work) as agent:
        await run(agent, "first")
        await run(agent, "second")
        turns = agent.checkpointing.turns()
        assert [(t.text, t.actions) for t in turns] == [("first", 1), ("second", 1)]
        plan = await agent.checkpointing.plan_rewind(turns[1])
        assert {c.path for c in plan.changes} == {"f.txt", "g.txt"}
        outcome = await rewind(agent, plan, files=True, conversation=True)
        assert outcome.conversation_cut and outcome.kernel_restarted
        assert f.read_text() == "1" and not (work / "g.txt").exists()
        assert len(agent.history) == turns[1].msg_index
        session_id = agent.session_id
        main = tmp_path / "sessions" / session_id / "main.jsonl"
        archive = main.parent / "rewound" / "main.1.jsonl"
        lines = [json.loads(line) for line in main.read_text().splitlines()]
        withdrawn = len(freeact_load(archive)) - turns[1].msg_index
        assert lines[-1]["meta"]["rewind"] == {
            "keep": turns[1].msg_index,
            "withdrawn": {"messages": withdrawn, "turns": 1},
            "archive": "rewound/main.1.jsonl",
        }
        assert archive.read_bytes().startswith(b"".join(main.read_bytes().splitlines(keepends=True)[:-1]))
        # freeact loads the cut history (then the marker, a user request saying what was withdrawn) …
        by_freeact = freeact_load(main)
        assert by_freeact[:-1] == agent.history and len(lines) == len(agent.history) + 1
        assert "second done" not in main.read_text() and "second done" in archive.read_text()
        # … and ours the cut history, marked with what was withdrawn and where it is kept.
        loaded = SessionStore(tmp_path / "sessions").session(session_id).load()
        assert loaded.messages == agent.history
        assert [(m.at, m.withdrawn_turns, m.archive) for m in loaded.rewinds] == [
            (turns[1].msg_index, 1, archive)
        ]
        assert outcome.mark is not None and outcome.mark.archive == archive
        assert f"1 turn ({withdrawn} messages) withdrawn; kept in " in outcome.mark.describe()
    # The kernel's state is gone.
    check = script([Code("print('rewind_var' in globals())", "c3")], ["ok"])
    resumed = make_agent(check, executor, tmp_path, work, session_id=session_id)
    async with resumed:
        assert [m for m in resumed.history] == agent.history  # resume shows the cut history
        await run(resumed, "third")
    assert check.last_tool_return().strip() == "False"
    prompt = next(p for p in check.requests[0][-1].parts if isinstance(p, UserPromptPart))
    assert isinstance(prompt.content, str)
    assert prompt.content.startswith("[Note: the user rewound the conversation") and prompt.content.endswith(
        "third"
    )
    assert "second done" not in json.dumps([str(m) for m in check.requests[0]])  # withdrawn
    reloaded = SessionStore(tmp_path / "sessions").session(session_id).load()
    assert reloaded.rewind_note is None and len(reloaded.messages) == turns[1].msg_index + 4
    assert isinstance(reloaded.messages[turns[1].msg_index], ModelRequest)


async def test_remote_mode_and_config_off_say_why_nothing_can_be_undone(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    off = make_agent(script(["x"]), executor, tmp_path, work, checkpoints=False)
    assert off.checkpointing.hook("main") is None
    with pytest.raises(CheckpointsUnavailableHere, match="checkpoints = false"):
        await off.checkpointing.plan_undo()
    remote = Agent(script(["x"]).model(), working_dir=work, execution="remote", remote_url="http://x")
    with pytest.raises(CheckpointsUnavailableHere, match="remote mode"):
        await remote.checkpointing.action_diff()


async def test_tool_call_ids_need_not_be_unique(tmp_path: Path, work: Path) -> None:
    """Some models reuse one tool call id: an undo takes only the last action's run of records."""
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("one")])]
    cp = Checkpointing(
        ActionCheckpoints(CheckpointStore(work)), ActionLog(tmp_path / "log.jsonl"), lambda: history
    )
    await cp.before_action([CodeAction("write 1")], "same-id")
    (work / "a.txt").write_text("one\n")
    history += [ModelResponse(parts=[TextPart("ok")]), ModelRequest(parts=[UserPromptPart("two")])]
    await cp.before_action([CodeAction("write 2")], "same-id")
    (work / "a.txt").write_text("two\n")
    plan = await cp.plan_undo("action")
    assert [r.seq for r in plan.records] == [1] and plan.records[0].msg_index == 2
    await cp.undo(plan)
    assert (work / "a.txt").read_text() == "one\n"
    plan = await cp.plan_undo("action")  # the first action is still there to undo
    assert [r.seq for r in plan.records] == [0]
    assert [(t.text, t.actions) for t in cp.turns()] == [("one", 1), ("two", 1)]
    record, diff = await cp.action_diff(seq=0)
    assert record.summary == "write 1" and "+one" in diff and "two" not in diff
    record, diff = await cp.action_diff("same-id")  # the latest action with that id: undone, no change now
    assert record.seq == 1 and diff == ""
    reloaded = ActionLog(tmp_path / "log.jsonl")  # the log survives a restart
    assert [r.seq for r in reloaded.live()] == [0]


async def test_subagents_share_the_sessions_checkpoints(executor: KernelExecutor, tmp_path: Path) -> None:
    """Subagents' actions are checkpointed in the parent's log, under the parent's turn."""
    from tests.helpers import collect, make_parent, routed_model

    tasks = {"task A": "ca", "task B": "cb"}  # both subagents' code actions have the call id "s1"
    model = routed_model(
        tasks, lambda p: f"open({str(tmp_path / p.replace(' ', '_'))!r} + '.txt', 'w').write('x')"
    )
    async with make_parent(model, executor, tmp_path, max_subagents=1) as parent:
        await collect(parent, "delegate")
        records = parent.checkpointing.log.actions()
        assert len(records) == 2 and all(r.agent_id.startswith("sub-") and r.msg_index == 0 for r in records)
        assert records[0].agent_id != records[1].agent_id
        assert (tmp_path / "task_A.txt").exists() and (tmp_path / "task_B.txt").exists()
        plan = await parent.checkpointing.plan_undo("action")  # only the last subagent's action
        assert [r.agent_id for r in plan.records] == [records[1].agent_id]
        plan = await parent.checkpointing.plan_undo("turn")
        assert len(plan.records) == 2
        await parent.checkpointing.undo(plan)
    assert not (tmp_path / "task_A.txt").exists() and not (tmp_path / "task_B.txt").exists()


async def test_a_note_for_the_model_survives_a_rolled_back_message(work: Path) -> None:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("one")])]
    cp = Checkpointing(ActionCheckpoints(None, "off"), ActionLog(None), lambda: history)
    cp.notes.tell("[Note: rewound]")
    assert cp.notes.take("two") == "[Note: rewound]\n\ntwo"
    # the request failed: the turn's messages were rolled back, so the note was never seen
    assert cp.notes.take("two again") == "[Note: rewound]\n\ntwo again"
    history += [ModelRequest(parts=[UserPromptPart("two again")]), ModelResponse(parts=[TextPart("ok")])]
    assert cp.notes.take(["three"]) == ["three"]  # delivered: not repeated
