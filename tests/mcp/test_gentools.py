"""Tool discovery (generated APIs past a budget) and tool authoring (code saved as `gentools`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.prompts import build_system_prompt, bundled_skills_dir
from freeact_tui.events import CodeExecutionOutput
from freeact_tui.mcp.gentools import gentools_root, gentools_section, saved_tools
from freeact_tui.mcp.ptc import PtcApis, PtcTool
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project.skills import find_skills
from tests.scripted import Code, script


def apis(count: int) -> PtcApis:
    tools = [
        PtcTool("github", f"tool_{i}", f"tool-{i}", "run(params: Params) -> str", f"Does thing number {i}.")
        for i in range(count)
    ]
    return PtcApis(root=Path("/x"), tools=tools)


def test_a_small_api_set_is_listed_and_a_big_one_is_discovered() -> None:
    small = apis(3).description()
    assert "tool_2.run(params: Params) -> str`: Does thing number 2." in small
    big = apis(300).description()
    assert "tool_299" not in big and "`mcptools.github` (300 tools)" in big
    assert "pkgutil.iter_modules" in big and len(big) < 1000


def test_the_saving_skill_is_bundled_and_listed() -> None:
    names = [s.name for s in find_skills(Path("/nonexistent"), [bundled_skills_dir()])]
    assert "saving-codeacts" in names


API = '''
def run(n: int = 10) -> int:
    """Sum of the squares of 1..n."""
    return sum(i * i for i in range(1, n + 1))
'''


@pytest.mark.kernel
async def test_code_saved_as_a_tool_is_importable_in_a_later_session(tmp_path: Path) -> None:
    (tmp_path / ".freeact").mkdir()  # a freeact project: its tools go to .freeact/generated
    root = gentools_root(tmp_path)
    assert root == tmp_path / ".freeact" / "generated"
    tool_dir = root / "gentools" / "math" / "squares"
    save = (
        f"import pathlib\np = pathlib.Path({str(tool_dir)!r})\np.mkdir(parents=True)\n"
        "(p.parent / '__init__.py').write_text('')\n"
        "(p / '__init__.py').write_text('from .api import run\\n')\n"
        f"(p / 'api.py').write_text({API!r})\nprint('saved')"
    )
    first = script([Code(save)], ["Saved as gentools.math.squares."])
    later = script([Code("from gentools.math import squares\nprint(squares.run(100))")], ["338350"])
    outputs: list[str] = []
    for s in (first, later):  # two sessions, two kernels
        agent = Agent(
            s.model(),
            sessions_dir=tmp_path / "sessions",
            working_dir=tmp_path,
            permissions=PermissionRules(None, skip_permissions=True, defaults=False),
            enable_subagents=False,
        )
        async with agent:
            async for event in agent.stream("go"):
                if isinstance(event, CodeExecutionOutput):
                    outputs.append(event.text or "")
    assert outputs == ["saved", "338350"]
    assert [(t.module, t.summary) for t in saved_tools(root)] == [
        ("gentools.math.squares.api", "Sum of the squares of 1..n.")
    ]
    prompt = str(later.requests[0][0])
    assert "`gentools.math.squares.api.run(n: int=10)`: Sum of the squares of 1..n." in prompt
    assert "saving-codeacts" in prompt
    assert gentools_section(root, tmp_path) in build_system_prompt(
        tmp_path, gentools=gentools_section(root, tmp_path)
    )
