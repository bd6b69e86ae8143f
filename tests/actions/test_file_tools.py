"""The file tools end to end: scripted tool calls, the real agent, a real ipybox kernel, real files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic_ai.messages import BinaryContent, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Collapsible, Static
from textual.widgets._collapsible import CollapsibleTitle

from freeact_tui.actions.file_ops import EditError, apply_edits, unified_diff
from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentEvent, ApprovalRequest, ToolOutput
from freeact_tui.execution.base import Executor
from freeact_tui.execution.isolation.docker import DockerExecutor
from freeact_tui.execution.isolation.docker_image import build_image
from freeact_tui.execution.isolation.sandbox import SandboxExecutor
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project.config import Config
from freeact_tui.toolcalls import (
    EDIT_TEXT_TOOL,
    READ_MEDIA_TOOL,
    READ_TEXT_TOOL,
    WRITE_TEXT_TOOL,
    FileEdit,
    FileRead,
    FileWrite,
    TextEdit,
)
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.widgets.blocks import ActionBlock, ToolOutputBlock
from freeact_tui.tui.widgets.image_preview import ImagePreview
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.helpers import CLI, fake_args, run
from tests.scripted import Call, Script, script

pytestmark = pytest.mark.kernel
in_module_loop = pytest.mark.asyncio(loop_scope="module")  # the module's kernel lives in that loop

# The smallest valid PNG (1x1, transparent).
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    work = tmp_path_factory.mktemp("kernel-home")
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    yield ex
    await ex.stop()


def make_agent(s: Script | FunctionModel, executor: Executor, work: Path, **kw: object) -> Agent:
    kw.setdefault("permissions", PermissionRules(None, working_dir=work))  # the defaults: reads allowed
    return helpers.make_agent(s, executor, work.parent, work, **kw)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def requests(events: list[AgentEvent]) -> list[ApprovalRequest]:
    return [e for e in events if isinstance(e, ApprovalRequest)]


def returns(agent: Agent) -> list[ToolReturnPart]:
    """Every tool return of the agent's history."""
    return [
        p
        for m in agent.history
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]


@in_module_loop
async def test_read_text_pages_and_ranges_without_asking(executor: KernelExecutor, work: Path) -> None:
    (work / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    s = script(
        [Call(READ_TEXT_TOOL, {"path": "big.txt"}, "c1")],
        [Call(READ_TEXT_TOOL, {"path": "big.txt", "offset": 2001, "limit": 3}, "c2")],
        [Call(READ_TEXT_TOOL, {"path": "big.txt", "offset": 4999}, "c3")],
        [Call(READ_TEXT_TOOL, {"path": "big.txt", "offset": 6000}, "c4")],
        ["done"],
    )
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "read", decide=lambda r: None)
    asked = requests(events)
    assert [type(r.tool_call) for r in asked] == [FileRead] * 4
    assert all(r.pre_approved for r in asked)  # reads inside the working dir: allowed by the default rule
    first, second, third, fourth = (str(r.content) for r in returns(agent))
    assert first.startswith("line 1\nline 2\n") and "line 2000\n" in first and "line 2001" not in first
    assert first.rstrip().endswith("[more: lines 2001-5000 of 5000; call again with offset=2001]")
    assert (
        second
        == "line 2001\nline 2002\nline 2003\n[more: lines 2004-5000 of 5000; call again with offset=2004]"
    )
    assert third == "line 4999\nline 5000\n"
    assert "5000 lines; offset 6000 is past its end" in fourth


@in_module_loop
async def test_a_50_mb_file_is_read_in_pages(executor: KernelExecutor, work: Path) -> None:
    line = "x" * 99 + "\n"
    with (work / "huge.log").open("w") as f:
        for _ in range(5):
            f.write(line * 100_000)  # 50 MB, 500,000 lines
    s = script(
        [Call(READ_TEXT_TOOL, {"path": "huge.log"}, "c1")],
        [Call(READ_TEXT_TOOL, {"path": "huge.log", "offset": 499_999}, "c2")],
        ["done"],
    )
    async with make_agent(s, executor, work) as agent:
        await run(agent, "read")
    first, last = (str(r.content) for r in returns(agent))
    # A page is cut by size (24,000 characters) before its 2,000 lines.
    assert first.count("\n" + "x") == 239 and len(first) < 25_000
    assert "[more: lines 241-500000 of 500000; call again with offset=241]" in first
    assert last == line * 2


@in_module_loop
async def test_binary_and_missing_files_are_clear_errors(executor: KernelExecutor, work: Path) -> None:
    (work / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (work / "sub").mkdir()
    (work / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    s = script(
        [
            Call(READ_TEXT_TOOL, {"path": "blob.bin"}, "c1"),
            Call(READ_TEXT_TOOL, {"path": "nope.txt"}, "c2"),
            Call(READ_TEXT_TOOL, {"path": "sub"}, "c3"),
            Call(READ_TEXT_TOOL, {"path": "latin.txt"}, "c4"),
            Call(READ_TEXT_TOOL, {"path": "latin.txt", "offset": 0}, "c5"),
            Call(EDIT_TEXT_TOOL, {"path": "latin.txt", "old_text": "caf", "new_text": "tea"}, "c6"),
        ],
        ["done"],
    )
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "read")
    texts = {r.tool_call_id: str(r.content) for r in returns(agent)}
    assert "blob.bin is a binary file" in texts["c1"] and READ_MEDIA_TOOL in texts["c1"]
    # what is there first (#45: told only how to create it, a small model made files nobody asked for)
    assert texts["c2"] == (
        "nope.txt does not exist. The working directory holds `blob.bin`, `latin.txt`, `sub/`."
        f" A new file is made with `{WRITE_TEXT_TOOL}`."
    )
    assert "sub is a directory" in texts["c3"]
    assert texts["c4"] == "caf\ufffd\n[not UTF-8: undecodable bytes are shown as \ufffd]"
    assert texts["c5"] == "`offset` must be a positive integer (lines count from 1)."
    assert texts["c6"] == "latin.txt is not a UTF-8 text file; the file tools change only text files."
    errors = [e.corr_id for e in events if isinstance(e, ToolOutput) and e.is_error]
    assert sorted(errors) == ["c1", "c2", "c3", "c5", "c6"]
    # Missing files, directories and bad arguments are answered before anything is asked.
    assert sorted(r.corr_id for r in requests(events)) == ["c1", "c4"]


@in_module_loop
async def test_a_mangled_path_gets_the_file_of_that_name_in_the_working_directory(
    executor: KernelExecutor, work: Path
) -> None:
    # Small models drop a part of a long working directory path (``/tmp/x/work/a`` → ``/tmp/x/a``);
    # the error names the file they meant instead of advising to create a new one elsewhere.
    (work / "config.ini").write_text("color = red\n")
    (work / "pkg" / "deep").mkdir(parents=True)
    (work / "pkg" / "deep" / "notes.md").write_text("n\n")
    mangled = str(work.parent / "config.ini")
    edit = {"path": mangled, "old_text": "red", "new_text": "blue"}
    s = script(
        [
            Call(EDIT_TEXT_TOOL, edit, "c1"),
            Call(READ_TEXT_TOOL, {"path": str(work.parent / "notes.md")}, "c2"),
            Call(EDIT_TEXT_TOOL, {**edit, "path": "other.ini"}, "c3"),
            Call(EDIT_TEXT_TOOL, {**edit, "path": "config.ini"}, "c4"),
        ],
        ["done"],
    )
    async with make_agent(s, executor, work) as agent:
        await run(agent, "edit")
    texts = {r.tool_call_id: str(r.content) for r in returns(agent)}
    assert texts["c1"] == (
        f"{mangled} does not exist. Did you mean `config.ini` (relative to the working directory)?"
    )
    assert texts["c2"].endswith("Did you mean `pkg/deep/notes.md` (relative to the working directory)?")
    # no file of that name: what the folder holds, then how a new file is made
    assert texts["c3"] == (
        "other.ini does not exist. The working directory holds `config.ini`, `pkg/`."
        f" A new file is made with `{WRITE_TEXT_TOOL}`."
    )
    assert (
        texts["c4"].startswith("Edited config.ini") and (work / "config.ini").read_text() == "color = blue\n"
    )
    assert not (work.parent / "config.ini").exists()


@in_module_loop
async def test_media_is_attached_as_binary_content(executor: KernelExecutor, work: Path) -> None:
    (work / "dot.png").write_bytes(PNG)
    s = script([Call(READ_MEDIA_TOOL, {"path": "dot.png"}, "c1")], ["a dot"])
    async with make_agent(s, executor, work) as agent:
        await run(agent, "look")
        stored = agent.session.load("main").messages if agent.session else []
    (part,) = returns(agent)
    assert isinstance(part.content, list)
    text, attached = part.content
    assert text == "dot.png (image/png, 67 bytes) is attached."
    assert isinstance(attached, BinaryContent) and attached.data == PNG and attached.media_type == "image/png"
    # The session keeps it (freeact loads it as a normal tool return with an attachment).
    kept = [
        p for m in stored if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
    ]
    assert isinstance(kept[0].content, list) and kept[0].content[1].data == PNG


@in_module_loop
async def test_media_for_a_model_without_image_input_is_a_clear_message(
    executor: KernelExecutor, work: Path
) -> None:
    (work / "dot.png").write_bytes(PNG)
    s = script([Call(READ_MEDIA_TOOL, {"path": "dot.png"}, "c1")], ["ok"])
    model = FunctionModel(
        stream_function=s._stream, model_name="text-only", profile={"supports_image_input": False}
    )
    async with make_agent(model, executor, work) as agent:
        await run(agent, "look")
    (part,) = returns(agent)
    assert part.content == "This model does not accept images; the file was not attached."


@in_module_loop
async def test_write_new_file_shows_all_lines_added(executor: KernelExecutor, work: Path) -> None:
    s = script(
        [Call(WRITE_TEXT_TOOL, {"path": "pkg/new.py", "content": "a = 1\nb = 2\n"}, "c1")], ["written"]
    )
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "write")
        path = work.parent / "sessions" / agent.session_id / "main.jsonl"
        lines = [json.loads(x)["message"] for x in path.open()]
    (request,) = requests(events)
    call = request.tool_call
    assert isinstance(call, FileWrite) and not request.pre_approved and not call.outside
    assert call.diff == "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n"
    assert (work / "pkg" / "new.py").read_text() == "a = 1\nb = 2\n"
    assert str(returns(agent)[0].content) == "Created pkg/new.py (2 lines, 12 bytes)."
    # Stored as a normal tool call; the diff goes with the return's metadata for a resumed UI.
    call_part = next(
        p for m in lines if m["kind"] == "response" for p in m["parts"] if p["part_kind"] == "tool-call"
    )
    assert call_part["tool_name"] == WRITE_TEXT_TOOL
    ret = next(
        p for m in lines if m["kind"] == "request" for p in m["parts"] if p["part_kind"] == "tool-return"
    )
    resolved = str((work / "pkg" / "new.py").resolve())
    assert ret["metadata"] == {
        "diff": call.diff,
        "outcome": "ok",
        "resolved": resolved,
        "outside": False,
        "approvals": [
            {"call": {"kind": "write"}, "approved": True, "by": "user"}
        ],  # the decision, for replay
    }


@in_module_loop
async def test_writing_the_same_content_asks_nothing(executor: KernelExecutor, work: Path) -> None:
    (work / "same.txt").write_text("same\n")
    s = script(
        [
            Call(WRITE_TEXT_TOOL, {"path": "same.txt", "content": "same\n"}, "c1"),
            Call(EDIT_TEXT_TOOL, {"path": "same.txt", "old_text": "same", "new_text": "same"}, "c2"),
        ],
        ["ok"],
    )
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "write", decide=lambda r: False)
    assert requests(events) == []
    assert [str(r.content) for r in returns(agent)] == [
        "same.txt already has this content; nothing was written."
    ] * 2


def test_edits_tolerate_crlf_files_and_diffs_mark_a_missing_final_newline() -> None:
    text, count = apply_edits("a\r\nb\r\nc\r\n", [TextEdit("a\nb\n", "x\ny\n")])
    assert (text, count) == ("x\r\ny\r\nc\r\n", 1)
    missing = "\\ No newline at end of file"
    assert unified_diff("f", "a\nb", "a\nc").splitlines()[-4:] == ["-b", missing, "+c", missing]
    with pytest.raises(EditError, match="old_text is empty"):
        apply_edits("abc", [TextEdit("", "x")])


@in_module_loop
async def test_rejected_write_writes_nothing(executor: KernelExecutor, work: Path) -> None:
    (work / "keep.txt").write_text("old\n")
    s = script([Call(WRITE_TEXT_TOOL, {"path": "keep.txt", "content": "new\n"}, "c1")], ["no"])
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "write", decide=lambda r: False)
    (request,) = requests(events)
    assert isinstance(request.tool_call, FileWrite)
    assert request.tool_call.diff.splitlines()[2:] == ["@@ -1 +1 @@", "-old", "+new"]
    assert (work / "keep.txt").read_text() == "old\n"
    assert str(returns(agent)[0].content) == "The user rejected writing keep.txt. Wait for new instructions."


@in_module_loop
async def test_edit_exact_missing_and_ambiguous(executor: KernelExecutor, work: Path) -> None:
    target = work / "app.py"
    target.write_text("def f():\n    return 1\n\nx = 1\ny = 1\n")
    s = script(
        [Call(EDIT_TEXT_TOOL, {"path": "app.py", "old_text": "return 1", "new_text": "return 2"}, "c1")],
        [Call(EDIT_TEXT_TOOL, {"path": "app.py", "old_text": "return 3", "new_text": "return 4"}, "c2")],
        [Call(EDIT_TEXT_TOOL, {"path": "app.py", "old_text": " = 1", "new_text": " = 5"}, "c3")],
        [
            Call(
                EDIT_TEXT_TOOL,
                {
                    "path": "app.py",
                    "edits": [
                        {"old_text": "x = 1", "new_text": "x = 10"},
                        {"old_text": "y = 1", "new_text": "y = 20"},
                    ],
                },
                "c4",
            )
        ],
        ["done"],
    )
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "edit")
    asked = requests(events)
    # Only the two edits that apply are asked for; the broken ones never reach the user.
    assert [r.corr_id for r in asked] == ["c1", "c4"]
    first = asked[0].tool_call
    assert isinstance(first, FileEdit)
    assert "-    return 1\n+    return 2\n" in first.diff and first.diff.startswith(
        "--- a/app.py\n+++ b/app.py\n"
    )
    texts = [str(r.content) for r in returns(agent)]
    assert texts[0] == "Edited app.py: 1 replacement(s), +1 -1 lines."
    assert texts[1].startswith("app.py was not changed: old_text was not found")
    assert texts[2] == (
        "app.py was not changed: old_text occurs 2 times; include more surrounding lines so it is unique."
    )
    assert texts[3] == "Edited app.py: 2 replacement(s), +2 -2 lines."
    assert target.read_text() == "def f():\n    return 2\n\nx = 10\ny = 20\n"


@in_module_loop
async def test_edit_of_a_missing_old_text_in_a_batch_changes_nothing(
    executor: KernelExecutor, work: Path
) -> None:
    target = work / "a.txt"
    target.write_text("one\ntwo\n")
    edits = [{"old_text": "one", "new_text": "1"}, {"old_text": "three", "new_text": "3"}]
    s = script([Call(EDIT_TEXT_TOOL, {"path": "a.txt", "edits": edits}, "c1")], ["ok"])
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "edit")
    assert requests(events) == []
    assert str(returns(agent)[0].content).startswith("a.txt was not changed: edit 2: old_text was not found")
    assert target.read_text() == "one\ntwo\n"


@in_module_loop
async def test_paths_leaving_the_working_dir_ask_and_say_so(executor: KernelExecutor, work: Path) -> None:
    outside = work.parent / "secret.txt"
    outside.write_text("outside\n")
    (work / "link.txt").symlink_to(outside)
    s = script(
        [
            Call(READ_TEXT_TOOL, {"path": "../secret.txt"}, "c1"),
            Call(READ_TEXT_TOOL, {"path": "link.txt"}, "c2"),
            Call(READ_TEXT_TOOL, {"path": str(outside)}, "c3"),
        ],
        ["done"],
    )
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "read", decide=lambda r: r.corr_id != "c3")
    asked = {r.corr_id: r for r in requests(events)}
    real = str(outside.resolve())
    for corr in ("c1", "c2", "c3"):
        call = asked[corr].tool_call
        assert isinstance(call, FileRead) and call.outside and call.resolved == real
        assert not asked[corr].pre_approved
    texts = {r.tool_call_id: str(r.content) for r in returns(agent)}
    assert texts["c1"] == texts["c2"] == "outside\n"
    assert texts["c3"] == f"The user rejected reading {outside}. Wait for new instructions."


@in_module_loop
async def test_secrets_inside_the_working_dir_still_ask(executor: KernelExecutor, work: Path) -> None:
    (work / ".env").write_text("KEY=1\n")
    s = script([Call(READ_TEXT_TOOL, {"path": ".env"}, "c1")], ["done"])
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "read", decide=lambda r: False)
    (request,) = requests(events)
    assert not request.pre_approved and not request.tool_call.outside  # type: ignore[attr-defined]


@in_module_loop
async def test_before_write_hook_runs_after_approval(executor: KernelExecutor, work: Path) -> None:
    from freeact_tui.actions.dispatch import Dispatcher

    seen: list[tuple[object, str, bool]] = []

    async def hook(call: object, corr: str) -> None:
        seen.append((call, corr, (work / "h.txt").exists()))

    s = script([Call(WRITE_TEXT_TOOL, {"path": "h.txt", "content": "x\n"}, "c1")], ["ok"])
    async with make_agent(s, executor, work) as agent:
        original = agent._dispatcher

        def with_hook(budget: object) -> Dispatcher:
            dispatcher = original(budget)  # type: ignore[arg-type]
            assert dispatcher._files is not None
            dispatcher._files.options.before_write = hook
            return dispatcher

        agent._dispatcher = with_hook  # type: ignore[method-assign]
        await run(agent, "write")
    assert len(seen) == 1
    call, corr, existed = seen[0]
    assert (
        isinstance(call, FileWrite)
        and call.path == "h.txt"
        and call.resolved == str((work / "h.txt").resolve())
    )
    assert (corr, existed) == ("c1", False)  # called after approval, before the write
    assert (work / "h.txt").read_text() == "x\n"


@in_module_loop
async def test_file_tools_are_offered_to_the_model(executor: KernelExecutor, work: Path) -> None:
    s = script(["hi"])
    async with make_agent(s, executor, work) as agent:
        await run(agent, "hi")
    names = [t.name for t in s.infos[0].function_tools]
    assert names[:5] == [
        "ipybox_execute_ipython_cell",
        READ_TEXT_TOOL,
        READ_MEDIA_TOOL,
        WRITE_TEXT_TOOL,
        EDIT_TEXT_TOOL,
    ]
    schema_chars = sum(
        len(t.description or "") + len(json.dumps(t.parameters_json_schema))
        for t in s.infos[0].function_tools[1:5]
    )
    assert schema_chars < 1800  # the four file tools stay small in every request
    assert not any(
        isinstance(p, UserPromptPart) and "filesystem" in str(p.content)
        for m in s.requests[0]
        for p in getattr(m, "parts", [])
    )


# -- the app: the approval dialog shows the diff; the log keeps it, collapsible; a resumed session shows it --

SIZE = (120, 40)
# Actions run in the module's kernel: a longer wait than the default.
until = partial(helpers.until, limit=20.0)


def make_app(s: Script, executor: KernelExecutor, work: Path, **kw: object) -> FreeactApp:
    config = {"subagent_pool_size": 0}
    return helpers.make_app(s, work.parent / "sessions", work, config=config, executor=executor, **kw)


async def send(pilot: Pilot[None], app: FreeactApp, text: str) -> None:
    await until(pilot, lambda: app.agent_ready)
    prompt = app.main_screen.query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")


EDIT = {"path": "notes.md", "old_text": "- milk\n", "new_text": "- oat milk\n- coffee\n"}


@in_module_loop
async def test_approval_dialog_shows_the_diff_and_the_log_keeps_it(
    executor: KernelExecutor, work: Path
) -> None:
    (work / "notes.md").write_text("# Shopping\n\n- bread\n- milk\n")
    s = script(["I'll update the list.", Call(EDIT_TEXT_TOOL, EDIT, "c1")], ["Updated."])
    app = make_app(s, executor, work)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "add coffee")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await pilot.pause()
        body = screen.query_one("#approval-body", Static).render()
        assert isinstance(body, Content)
        assert str(body).splitlines() == [
            "Edit notes.md  +2 -1",
            "--- a/notes.md",
            "+++ b/notes.md",
            "@@ -1,4 +1,5 @@",
            " # Shopping",
            " ",
            " - bread",
            "-- milk",
            "+- oat milk",
            "+- coffee",
        ]
        styles = {span.style for span in body.spans if str(body)[span.start : span.end].startswith("+- ")}
        assert styles == {"$text-success on $success 10%"}  # added lines are coloured
        assert "Approve? \\[main] Edit file" in str(screen.query_one("#approval-dialog").border_title)
        await pilot.press("y")
        await until(pilot, lambda: app.agent is not None and not app.agent.busy)
        await pilot.pause()
        assert (work / "notes.md").read_text() == "# Shopping\n\n- bread\n- oat milk\n- coffee\n"
        (block,) = app.main_screen.conversation.query(ActionBlock)
        assert block.status == "approved"
        diff = block.query_one(Collapsible)
        assert not diff.collapsed and diff.title == "Diff +2 -1"
        title = diff.query_one(CollapsibleTitle)
        title.focus()
        await pilot.press("enter")  # the diff folds away by keyboard
        assert diff.collapsed


@in_module_loop
async def test_an_image_read_is_previewed_in_the_log(executor: KernelExecutor, work: Path) -> None:
    from PIL import Image

    picture = Image.new("RGB", (40, 20), (200, 30, 30))
    picture.paste((30, 30, 200), (20, 0, 40, 20))  # red left half, blue right half
    picture.save(work / "flag.png")
    s = script([Call(READ_MEDIA_TOOL, {"path": "flag.png"}, "c1")], ["A red and blue flag."])
    app = make_app(s, executor, work)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "what is in flag.png?")
        await until(pilot, lambda: bool(app.main_screen.conversation.query(ImagePreview)))
        (block,) = app.main_screen.conversation.query(ToolOutputBlock)
        assert block.content.startswith("flag.png (image/png, ")
        preview = block.query_one(ImagePreview)
        first = preview.render_line(0)
        colours = [seg.style.color.triplet for seg in first if seg.style and seg.style.color]  # type: ignore[union-attr]
        assert len(colours) == 40 and colours[0] == (200, 30, 30) and colours[-1] == (30, 30, 200)


@in_module_loop
async def test_outside_path_is_said_in_the_dialog(executor: KernelExecutor, work: Path) -> None:
    outside = work.parent / "elsewhere.txt"
    s = script([Call(WRITE_TEXT_TOOL, {"path": "../elsewhere.txt", "content": "hi\n"}, "c1")], ["ok"])
    app = make_app(s, executor, work)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "write outside")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.pause()
        text = str(app.screen.query_one("#approval-body", Static).render())
        assert text.splitlines()[:2] == [
            "Create ../elsewhere.txt  +1 -0",
            f"⚠ outside the working directory: {outside.resolve()}",
        ]
        await pilot.press("n", "enter")  # n opens the instruction line; Enter alone rejects
        await app.workers.wait_for_complete()
    assert not outside.exists()


@in_module_loop
async def test_a_resumed_session_shows_file_calls_and_the_diff(executor: KernelExecutor, work: Path) -> None:
    (work / "notes.md").write_text("# Shopping\n\n- bread\n- milk\n")
    s = script(
        [Call(EDIT_TEXT_TOOL, EDIT, "c1")],
        [Call(READ_TEXT_TOOL, {"path": "notes.md"}, "c2")],
        [Call(WRITE_TEXT_TOOL, {"path": "../out.txt", "content": "hi\n"}, "c3")],
    )
    async with make_agent(s, executor, work) as agent:
        await run(agent, "edit", decide=lambda r: r.corr_id != "c3")
    app = make_app(script(), executor, work, session_id=agent.session_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(app.main_screen.conversation.query(ActionBlock)) == 3)
        edit, read, write = app.main_screen.conversation.query(ActionBlock)
        assert isinstance(edit.tool_call, FileEdit) and isinstance(read.tool_call, FileRead)
        # The folded diff's body is mounted a moment after its block: wait for it, not for time.
        await until(pilot, lambda: len(edit.query(Collapsible).first().query(Static)) > 1)
        diff = edit.query_one(Collapsible)
        assert diff.collapsed and diff.title == "Diff +2 -1"  # replayed diffs start folded
        assert "+- coffee" in str(diff.query(Static).last().render())
        assert str(read.query_one(Static).render()) == "Read notes.md"
        # A rejected write keeps its diff and the warning that it pointed outside.
        assert str(write.query(Static).first().render()).splitlines() == [
            "Create ../out.txt  +1 -0",
            f"⚠ outside the working directory: {(work.parent / 'out.txt').resolve()}",
        ]
        assert write.query_one(Collapsible).title == "Diff +1 -0"
        await until(pilot, lambda: app.agent_ready)  # the replay has ended: nothing of it runs at exit


@pytest.mark.usefixtures("home_is_tmp")
def test_snapshot_approval_dialog_with_a_diff(snap_compare: Callable[..., bool], tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("# Shopping\n\n- bread\n- milk\n- eggs\n\nBuy on Friday.\n")
    s = script(["I'll update the list.", Call(EDIT_TEXT_TOOL, EDIT, "c1")])
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=work, subagent_pool_size=0)
    app = FreeactApp(config, model=s.model(), session_id="0b5848f8-89e8-4b08-a784-da134d221ea8")

    async def turn(pilot: Pilot[None]) -> None:
        app.animation_level = "none"
        await until(
            pilot,
            lambda: app.agent_ready and app.agent is not None and app.agent.kernel_state == "ready",
            limit=60,
        )
        await until(pilot, lambda: "ready" in str(app.main_screen.query_one("#status-kernel").render()))
        app.main_screen.query_one(PromptInput).cursor_blink = False
        await send(pilot, app, "Add coffee to my list")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), limit=60)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=turn)


# -- sandbox and docker modes: the file tools act inside the same boundary as code --

SANDBOX_MISSING = (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get(
    "CI"
)


def _docker_problem() -> str | None:
    if shutil.which("docker") is None:
        return "the docker CLI is not installed"
    done = subprocess.run(["docker", "version"], capture_output=True, text=True, timeout=30)
    return None if done.returncode == 0 else "no Docker daemon answers"


async def _sandbox(work: Path, images: Path) -> Executor:
    if SANDBOX_MISSING:
        pytest.skip("bwrap or socat not installed (Debian: bubblewrap, socat)")
    return SandboxExecutor(working_dir=work, images_dir=images)


async def _docker(work: Path, images: Path) -> Executor:
    problem = _docker_problem()
    if problem is not None and not os.environ.get("CI"):
        pytest.skip(f"Docker unavailable: {problem}")
    await build_image(DOCKER_IMAGE)  # cached after the first build
    return DockerExecutor(working_dir=work, images_dir=images, image=DOCKER_IMAGE)


DOCKER_IMAGE = "freeact-tui-kernel:pytest"  # the image tests/execution/test_docker.py builds


@pytest.mark.timeout(600)
@pytest.mark.parametrize("make_executor", [_sandbox, _docker], ids=["sandbox", "docker"])
@in_module_loop
async def test_file_tools_act_inside_the_boundary_of_code(
    make_executor: Callable[[Path, Path], Awaitable[Executor]], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "in.txt").write_text("inside\n")
    host_only = Path(sys.prefix) / f"freeact-file-tools-{os.getpid()}.txt"  # read-only in the boundary
    private = tmp_path / "private" / "t.txt"  # /tmp is the boundary's own
    executor = await make_executor(work, tmp_path / "images")
    s = script(
        [
            Call(READ_TEXT_TOOL, {"path": "in.txt"}, "c1"),
            Call(WRITE_TEXT_TOOL, {"path": "out.txt", "content": "made inside\n"}, "c2"),
            Call(WRITE_TEXT_TOOL, {"path": str(host_only), "content": "x"}, "c3"),
            Call(WRITE_TEXT_TOOL, {"path": str(private), "content": "x"}, "c4"),
        ],
        ["done"],
    )
    await executor.start()
    try:
        async with make_agent(s, executor, work) as agent:
            events = await run(agent, "files")
    finally:
        await executor.stop()
        host_only.unlink(missing_ok=True)
    texts = {r.tool_call_id: str(r.content) for r in returns(agent)}
    assert texts["c1"] == "inside\n"
    assert (work / "out.txt").read_text() == "made inside\n"  # the working dir is shared
    assert "Read-only file system" in texts["c3"]
    assert texts["c4"].startswith("Created ")  # inside the boundary's private /tmp …
    assert not private.exists()  # … never on the host behind its back
    outside = {r.corr_id for r in requests(events) if getattr(r.tool_call, "outside", False)}
    assert outside == {"c3", "c4"}


# -- headless runs use the same tools and rules --


def test_headless_run_reads_without_a_rule_and_writes_only_with_one(tmp_path: Path) -> None:
    from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("- milk\n")
    edit = ToolCallReply(EDIT_TEXT_TOOL, {"path": "notes.md", "old_text": "milk", "new_text": "coffee"})

    def headless(server: FakeOpenAI, *rules: str) -> dict[str, object]:
        done = subprocess.run(
            [*CLI, "run", *fake_args(server)]
            + [a for rule in rules for a in ("--allow", rule)]
            + ["-o", "json", "add coffee"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        )
        assert done.stdout, done.stderr
        result: dict[str, object] = json.loads(done.stdout)
        return result

    with FakeOpenAI() as server:
        server.script(
            Reply(tool_calls=[ToolCallReply(READ_TEXT_TOOL, {"path": "notes.md"}, call_id="r1")]),
            Reply(tool_calls=[edit]),
        )
        refused = headless(server)
        assert server.requests[1].tool_results() == ["- milk\n"]  # the read needed no rule
    assert refused["status"] == "refused" and (work / "notes.md").read_text() == "- milk\n"
    (refusal,) = refused["refusals"]  # type: ignore[misc]
    assert refusal["allow"] == "write:notes.md" and refusal["text"].startswith("--- a/notes.md")

    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=[edit]), Reply("Done."))
        allowed = headless(server, "write:notes.md")
    assert allowed["status"] == "answered" and (work / "notes.md").read_text() == "- coffee\n"


def test_rules_for_file_calls(tmp_path: Path) -> None:
    rules = PermissionRules(None, working_dir=tmp_path)
    inside = str(tmp_path / "a.txt")
    assert rules.check(FileRead("a.txt", resolved=inside)) == "allow"  # the default read rule
    assert rules.check(FileRead("src/../a.txt", resolved=inside)) == "allow"
    assert rules.check(FileRead("link.txt", resolved="/etc/passwd", outside=True)) == "ask"  # a symlink out
    assert rules.check(FileRead("/etc/passwd", resolved="/etc/passwd", outside=True)) == "ask"
    assert rules.check(FileRead(".env", resolved=str(tmp_path / ".env"))) == "ask"  # secrets ask
    assert rules.check(FileWrite("a.txt", "x", resolved=inside)) == "ask"  # writes ask
    rules.add("write", "path:docs/**", scope="session")
    assert (
        rules.check(FileEdit("docs/x.md", (TextEdit("a", "b"),), resolved=str(tmp_path / "docs/x.md")))
        == "allow"
    )
    assert rules.check(FileWrite("docs/../a.txt", "x", resolved=inside)) == "ask"
    rules.add("read", "path:private/**", scope="session", effect="ask")  # reads can be made to ask
    assert rules.check(FileRead("private/k", resolved=str(tmp_path / "private/k"))) == "ask"
    rules.add("read", "*.log", scope="session", effect="deny")  # or refused, by the path as written
    assert rules.check(FileRead("x.log", resolved=str(tmp_path / "x.log"))) == "deny"


@in_module_loop
async def test_a_missing_file_is_answered_with_what_its_folder_holds(executor: KernelExecutor, work: Path) -> None:
    """#45: told only how to create a missing file, a small model (renaming files it had misnamed) made
    files nobody asked for; the error names what the nearest existing folder above it holds, first."""
    data = work / "data"
    data.mkdir()
    for n in range(15):
        (data / f"a{n:02}.txt").write_text("x\n")
    (data / ".hidden").write_text("h\n")
    s = script(
        [
            Call(EDIT_TEXT_TOOL, {"path": "data/file1.txt", "old_text": "x", "new_text": "y"}, "c1"),
            Call(READ_TEXT_TOOL, {"path": "data/deeper/still/file2.txt"}, "c2"),
        ],
        ["done"],
    )
    async with make_agent(s, executor, work) as agent:
        await run(agent, "edit")
    texts = {r.tool_call_id: str(r.content) for r in returns(agent)}
    listed = ", ".join(f"`a{n:02}.txt`" for n in range(12))
    assert texts["c1"] == (
        f"data/file1.txt does not exist. `data` holds {listed} and 3 more."
        f" A new file is made with `{WRITE_TEXT_TOOL}`."
    )
    assert texts["c2"].startswith(f"data/deeper/still/file2.txt does not exist. `data` holds {listed} and 3 more.")
    assert ".hidden" not in texts["c1"] and not (data / "file1.txt").exists()
