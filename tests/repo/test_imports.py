"""What importing costs: the MCP client stack and the agent load only when something needs them."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["mcp", "fastmcp", "mcpygen", "jsonschema", "pydantic_ai", "textual", "freeact_tui.store"]


def loaded_after(code: str) -> list[str]:
    """The modules of ``HEAVY`` loaded in a fresh interpreter after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_app_and_the_mcp_package_load_no_mcp_client() -> None:
    # The first screen needs neither the MCP client nor pydantic-ai: the app imports the agent in a
    # thread after drawing it (launch -> prompt accepting keys, bench/launch.py).
    assert not {"mcp", "fastmcp", "mcpygen", "jsonschema", "pydantic_ai"} & set(
        loaded_after("import freeact_tui.tui.app")
    )
    assert loaded_after("import freeact_tui.mcp.setup, freeact_tui.mcp.ptc") == ["pydantic_ai"]


def test_version_and_help_load_only_the_command_line() -> None:
    for flag in ("--version", "--help"):
        code = (
            f"import sys\nsys.argv = ['freeact-tui', {flag!r}]\nfrom freeact_tui.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass"
        )
        assert loaded_after(code) == []


def test_sessions_list_loads_neither_the_agent_stack_nor_the_ui() -> None:
    code = (
        "import sys\nsys.argv = ['freeact-tui', 'sessions', 'list']\nfrom freeact_tui.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert loaded_after(code) == ["freeact_tui.store"]  # the store, without pydantic-ai or textual
