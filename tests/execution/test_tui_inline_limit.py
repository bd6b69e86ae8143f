"""A result longer than the inline limit says, in the log, what the model got and where the full text is:
a file read (a tool result, collapsed) and a code action's output. Real app, real kernel, scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.toolcalls import READ_TEXT_TOOL
from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock, ToolOutputBlock
from tests import helpers
from tests.scripted import Call, Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel
SIZE = (120, 40)


def note_of(block: ToolOutputBlock | ExecutionOutputBlock) -> str:
    (note,) = block.query(".output-note")
    return str(note.render())


async def test_a_tool_result_and_a_code_output_over_the_inline_limit_name_the_full_text(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 301)))  # ~2.7 kB
    small = "small.txt"
    (work / small).write_text("tiny\n")
    s = script(
        [Call(READ_TEXT_TOOL, {"path": "big.txt"}, "c1")],
        [Call(READ_TEXT_TOOL, {"path": small}, "c2")],
        [Code("for i in range(300):\n    print(f'row {i}')", "c3")],
        ["done"],
    )
    config = {"skip_permissions": True, "subagent_pool_size": 0, "tool_result_inline_max_bytes": 1024}
    app = helpers.make_app(s, tmp_path / "sessions", work, config=config, executor=executor)
    async with app.run_test(size=SIZE) as pilot:
        await helpers.send(pilot, "read the files and print rows")
        await helpers.until(pilot, lambda: len(app.main_screen.conversation.query(ExecutionOutputBlock)) == 1)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.agent is not None
        saved = sorted((tmp_path / "sessions" / app.agent.session_id / "tool-results").iterdir())
        assert len(saved) == 2

        big, tiny = app.main_screen.conversation.query(ToolOutputBlock)
        said = note_of(big)
        assert said.startswith(
            "Over the inline limit (tool_result_inline_max_bytes): the model got its head and tail"
        )
        (path,) = [p for p in saved if str(p) in said]
        assert path.read_text().startswith("line 1\n") and "line 300\n" in path.read_text()
        assert not tiny.query(".output-note")  # under the limit: nothing to say

        output = app.main_screen.conversation.query_one(ExecutionOutputBlock)
        said = note_of(output)
        assert "the model got its head and tail; full text: " in said
        (path,) = [p for p in saved if str(p) in said]
        assert "row 299" in path.read_text()
