"""The system prompt puts what depends on the working directory last (#30).

A local llama.cpp server reuses its cached prompt only up to the first differing token: with the
working directory named early, tasks in two directories shared 393 of 1,227 prompt tokens.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from freeact_tui.agent.prompts import build_system_prompt, system_prompt_parts


@pytest.mark.parametrize("protocol", ["tools", "auto", "text"])
def test_two_working_dirs_share_everything_but_the_per_run_part(tmp_path: Path, protocol: str) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (two / "AGENTS.md").write_text("Use tabs.\n")
    apis = "- `mcptools.github.search_repositories`: search GitHub"
    prompts = [
        build_system_prompt(d, mcp_apis=apis, protocol=protocol, extra="Be brief.") for d in (one, two)
    ]
    shared = os.path.commonprefix(prompts)
    # Every section of the template but the environment lies in the common prefix.
    for heading in ("## How you act", "## Shell commands", "## MCP tool APIs", "## Answering"):
        assert heading in shared, heading
    assert apis in shared
    for prompt, working_dir in zip(prompts, (one, two), strict=True):
        assert prompt.index("## Answering") < prompt.index(f"Working directory: `{working_dir}`")
    assert "Use tabs." in prompts[1] and "Use tabs." not in shared


def test_the_parts_are_the_prompt_and_the_first_names_no_path(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run `make check`.\n")
    common, local = system_prompt_parts(
        tmp_path, extra="Answer in German.", gentools="## Saved tools\n\nnone"
    )
    assert build_system_prompt(tmp_path, extra="Answer in German.", gentools="## Saved tools\n\nnone") == (
        f"{common}\n\n{local}\n"
    )
    assert str(tmp_path) not in common and "/" not in common.split("## Answering", 1)[1]
    # The per-run part, in order: where, skills, saved tools, the project's instructions, extra.
    order = [
        "## Environment",
        "## Skills",
        "## Saved tools",
        "## Project instructions (AGENTS.md)",
        "## Additional",
    ]
    assert [local.index(h) for h in order] == sorted(local.index(h) for h in order)
    assert local.startswith("## Environment\n\n- Working directory: ")
