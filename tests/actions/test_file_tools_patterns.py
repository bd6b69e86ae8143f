"""#30: a file tool called on a glob (``*.txt``) is told it is a pattern, never advised to create it:
Qwen2.5-Coder-1.5B, asked to rename every .txt file, followed "use the write tool to create it" and
wrote a file named ``*.txt``. The real agent, a real kernel, real files; the model is scripted."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.toolcalls import EDIT_TEXT_TOOL, READ_TEXT_TOOL, WRITE_TEXT_TOOL
from tests.actions.test_file_tools import make_agent, requests, returns
from tests.helpers import run
from tests.scripted import Call, script

pytestmark = pytest.mark.kernel
in_module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    work = tmp_path_factory.mktemp("kernel-home")
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    yield ex
    await ex.stop()


@in_module_loop
async def test_a_pattern_is_not_a_file_to_create(executor: KernelExecutor, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("first\n")
    s = script(
        [
            Call(EDIT_TEXT_TOOL, {"path": str(work / "*.txt"), "old_text": ".txt", "new_text": ".md"}, "c1"),
            Call(WRITE_TEXT_TOOL, {"path": "*.md", "content": ""}, "c2"),
            Call(READ_TEXT_TOOL, {"path": "notes-?.md"}, "c3"),
            Call(WRITE_TEXT_TOOL, {"path": "plain.md", "content": "x\n"}, "c4"),
        ],
        ["done"],
    )
    async with make_agent(s, executor, work) as agent:
        events = await run(agent, "rename every .txt file here to .md")
    texts = {r.tool_call_id: str(r.content) for r in returns(agent)}
    told = "is a pattern, not a file: the file tools take one file each; use code for several files."
    assert texts["c1"] == f"{work / '*.txt'} {told}"
    assert texts["c2"] == f"*.md {told}"
    assert texts["c3"] == f"notes-?.md {told}"
    assert sorted(p.name for p in work.iterdir()) == ["a.txt", "plain.md"]  # no file named like the pattern
    assert [r.corr_id for r in requests(events)] == ["c4"]  # refused before anything is asked
