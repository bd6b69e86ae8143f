"""The system prompt: shipped template, optional sections, AGENTS.md and extra instructions."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from freeact_tui.agent.prompts import MAX_PROJECT_INSTRUCTIONS_CHARS, build_system_prompt


def test_template_ships_inside_the_package() -> None:
    template = resources.files("freeact_tui.agent").joinpath("prompts", "system.md")
    assert template.is_file()
    assert "{working_dir}" in template.read_text(encoding="utf-8")


def test_prompt_tells_the_model_how_to_act(tmp_path: Path) -> None:
    prompt = build_system_prompt(tmp_path)
    for needle in (
        "`ipybox_execute_ipython_cell`",
        "stateful IPython kernel",
        "`!` syntax",
        "`%%bash`",
        "`subprocess`, `os.system`",
        "approves each shell command",
        "Print what you need to see",
        "images",
        f"Working directory: `{tmp_path}`",
        "answer in Markdown without calling a tool",
        "Keep each action small",
        "`subagent_task(prompt, max_turns)`",
        "`filesystem_edit_text_file`",
        "`filesystem_read_media_file`",
    ):
        assert needle in prompt, needle
    # Nothing of the template machinery leaks into the prompt.
    assert not re.search(r"\{working_dir\}|\{mcp_apis\}|<!--", prompt)
    assert len(prompt.split()) < 1200


def test_optional_sections(tmp_path: Path) -> None:
    plain = build_system_prompt(tmp_path, subagents=False)
    assert "subagent_task" not in plain and "## Subagents" not in plain
    assert "## MCP tool APIs" not in plain
    assert "## MCP tool APIs" not in build_system_prompt(tmp_path, mcp_apis="  \n")

    apis = "- `mcptools.github.search_repositories` — search GitHub"
    with_apis = build_system_prompt(tmp_path, mcp_apis=apis)
    section = with_apis.split("## MCP tool APIs", 1)[1]
    assert apis in section.split("\n## ", 1)[0]


def test_agents_md_is_appended_verbatim(tmp_path: Path) -> None:
    assert "Project instructions" not in build_system_prompt(tmp_path)
    # Braces and placeholders in user text stay as they are.
    instructions = "Run tests with `pytest -q`.\nFormat strings like {name} and {working_dir} stay."
    (tmp_path / "AGENTS.md").write_text(instructions + "\n", encoding="utf-8")
    prompt = build_system_prompt(tmp_path, extra="Answer in German.", mcp_apis="api {working_dir}")
    assert prompt.index("## Project instructions (AGENTS.md)") < prompt.index(instructions)
    assert prompt.rstrip().endswith("## Additional instructions\n\nAnswer in German.")
    assert "api {working_dir}" in prompt


def test_broken_or_huge_agents_md_does_not_stop_the_agent(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"Use \xff tabs.\n")
    assert "Use \ufffd tabs." in build_system_prompt(tmp_path)
    (tmp_path / "AGENTS.md").write_text("x" * (MAX_PROJECT_INSTRUCTIONS_CHARS + 10))
    prompt = build_system_prompt(tmp_path)
    assert "AGENTS.md truncated" in prompt
    assert "x" * (MAX_PROJECT_INSTRUCTIONS_CHARS + 1) not in prompt
    (tmp_path / "AGENTS.md").unlink()
    (tmp_path / "AGENTS.md").mkdir()  # a directory, not a file
    assert "Project instructions" not in build_system_prompt(tmp_path)
