"""A cell that changes directory, then runs git in a nested repository whose config runs a program
(issue 39). The rules judge the working dir's repository; the kernel asks about the command with the
directory it runs in, so it is never allowed by the working dir's clean config. Real kernel, real git.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.agent.agent import Agent
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def work(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[KernelExecutor, Path, Path]]:
    root = tmp_path_factory.mktemp("cwd")
    work = root / "work"
    nested = work / "vendor" / "lib"
    nested.mkdir(parents=True)
    marker = root / "TEXTCONV-RAN"
    for repo in (work, nested):
        _git(repo, "init", "-q")
        (repo / "f.txt").write_text("one\n")
        _git(repo, "add", "f.txt")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    _git(nested, "config", "diff.x.textconv", f"touch {marker}; cat")
    (nested / ".gitattributes").write_text("* diff=x\n")
    ex = KernelExecutor(working_dir=work, images_dir=root / "images")
    await ex.start()
    yield ex, work, marker
    await ex.stop()


async def asked_about(ex: KernelExecutor, work: Path, code: str) -> tuple[list[str], str]:
    agent = Agent(
        script([Code(code)], ["ok"]).model(),
        sessions_dir=work.parent / "sessions",
        working_dir=work,
        executor=ex,
        permissions=PermissionRules(None, working_dir=work),
    )
    asked: list[str] = []
    out: list[str] = []
    async with agent:
        async for event in agent.stream("go"):
            if isinstance(event, ApprovalRequest) and not event.decided:
                # The user approves the cell and a ``cd``, never git: what git would run is the question.
                text = event.tool_call.display_text()
                if event.tool_call.kind != "code":
                    asked.append(text)
                event.approve(event.tool_call.kind == "code" or text.startswith("cd "))
            if isinstance(event, CodeExecutionOutput):
                out.append(event.text or "")
    return asked, "".join(out)


async def test_git_in_the_working_dir_runs_unasked(work: tuple[KernelExecutor, Path, Path]) -> None:
    ex, root, _ = work
    asked, out = await asked_about(ex, root, "!git log -p -1")
    assert asked == [] and "+one" in out


async def test_git_after_a_chdir_is_asked_with_its_directory_and_does_not_run(
    work: tuple[KernelExecutor, Path, Path],
) -> None:
    ex, root, marker = work
    code = "import os\nos.chdir('vendor/lib')\n!git log -p -1"
    asked, _ = await asked_about(ex, root, code)
    # Asked about as it runs: in the nested repository, whose config runs a program.
    assert asked == [f"cd {root / 'vendor' / 'lib'}", "git log -p -1"], asked
    assert not marker.exists()
