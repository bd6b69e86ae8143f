"""Skills: freeact's SKILL.md files listed in the system prompt (names and descriptions only) and by /skills."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.agent.prompts import build_system_prompt
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config
from freeact_tui.project.skills import find_skills, front_matter
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import NoticeBlock
from tests.scripted import Code, Script

PARSER = """---
name: output-parsers
description: >
  Parse the output of a tool
  into typed results.
---
# Output parsers
Long instructions that must not reach the system prompt.
"""


def write_skill(root: Path, where: str, dirname: str, text: str) -> Path:
    path = root / where / dirname / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def test_front_matter_forms() -> None:
    assert front_matter(PARSER) == {
        "name": "output-parsers",
        "description": "Parse the output of a tool into typed results.",
    }
    assert front_matter('---\nname: "quoted"\ndescription: plain: with colon\n---\nbody') == {
        "name": "quoted",
        "description": "plain: with colon",
    }
    assert front_matter("no front matter\nname: x") == {}


def test_skills_are_found_in_freeact_and_project_dirs(tmp_path: Path) -> None:
    write_skill(tmp_path, ".freeact/skills", "parsers", PARSER)
    write_skill(
        tmp_path, ".agents/skills", "plan", "---\nname: task-planning\ndescription: Plan big tasks.\n---\n"
    )
    write_skill(tmp_path, ".agents/skills", "nameless", "no front matter")
    (tmp_path / "src").mkdir()
    skills = {s.name: s for s in find_skills(tmp_path / "src")}  # found from the project root
    assert set(skills) == {"output-parsers", "task-planning", "nameless"}
    assert skills["nameless"].description == ""

    prompt = build_system_prompt(tmp_path)
    assert "## Skills" in prompt
    assert (
        "**output-parsers** (`.freeact/skills/parsers/SKILL.md`): Parse the output of a tool into typed results."
        in prompt
    )
    assert "Long instructions" not in prompt  # read on demand, never listed whole


def test_without_project_skills_only_the_bundled_ones_are_listed(tmp_path: Path) -> None:
    section = build_system_prompt(tmp_path).split("## Skills", 1)[1].split("\n## ", 1)[0]
    # output-parsers (for generated mcptools APIs) only where there are generated APIs.
    assert [line.split("**")[1] for line in section.splitlines() if line.startswith("- **")] == [
        "saving-codeacts",
        "task-planning",
    ]


@pytest_asyncio.fixture
async def executor(tmp_path: Path) -> AsyncIterator[KernelExecutor]:
    ex = KernelExecutor(working_dir=tmp_path)
    await ex.start()
    yield ex
    await ex.stop()


@pytest.mark.kernel
async def test_slash_skills_lists_them_and_the_model_can_read_one(
    tmp_path: Path, executor: KernelExecutor
) -> None:
    path = write_skill(tmp_path, ".freeact/skills", "parsers", PARSER)
    s = Script([[Code("print(open('.freeact/skills/parsers/SKILL.md').read())")], ["Read it."]])
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model=s.model(), executor=executor, skip_permissions=True)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            if app.agent_ready:
                break
            await pilot.pause(0.05)
        prompt = app.main_screen.prompt
        prompt.text = "/skills"
        await pilot.press("enter")
        await pilot.pause()
        listing = app.main_screen.conversation.query(NoticeBlock).last().text
        assert (
            "output-parsers" in listing and "Parse the output of a tool" in listing and str(path) in listing
        )

        prompt.text = "use the parser skill"
        await pilot.press("enter")
        for _ in range(400):
            if not app.main_screen.turn_running and len(s.requests) == 2:
                break
            await pilot.pause(0.05)
    assert "Long instructions that must not reach" in s.last_tool_return()
    sent = str(s.requests[0]) + str(s.infos[0].instructions or "")
    assert "output-parsers" in sent and "Long instructions" not in sent  # the system prompt lists it
