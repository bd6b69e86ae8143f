"""freeact 0.11's SDK on freeact-tui: freeact code runs by changing its imports.

The example below is freeact's documented agent example (``examples/basic_agent.py`` and
``persistent_agent.py``, in 0.11's ``config.init/resolve`` + ``Agent(runtime)`` form) with only the
import changed and the model swapped for a scripted one; it runs against a real kernel.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

# The port: `from freeact import ...` → `from freeact_tui.freeact import ...`
from freeact_tui.freeact import (
    Agent,
    ApprovalRequest,
    Cancelled,
    CodeAction,
    CodeExecutionOutput,
    FileRead,
    GenericCall,
    PermissionManager,
    Phase,
    Response,
    ShellAction,
    Thoughts,
    ToolOutput,
    config,
    parse_pattern,
    suggest_display,
    suggest_pattern,
)
from tests.scripted import Code, Script, Think, Wait

FREEACT_011_NAMES = {
    "Agent", "AgentEvent", "ApprovalRequest", "CancelToken", "Cancelled", "CodeAction", "CodeExecutionOutput",
    "CodeExecutionOutputChunk", "FileEdit", "FileRead", "FileWrite", "GenericCall", "PermissionManager",
    "Phase", "Response", "ResponseChunk", "ShellAction", "Thoughts", "ThoughtsChunk", "ToolCall", "ToolOutput",
    "extract_tool_output_text", "parse_pattern", "suggest_display", "suggest_pattern",
}  # fmt: skip
FREEACT_011_CONFIG_NAMES = {
    "init",
    "load",
    "resolve",
    "workspace",
    "Workspace",
    "FreeactConfig",
    "ResolvedRuntime",
}


def test_every_public_name_of_freeact_011_is_here() -> None:
    import freeact_tui.freeact as sdk

    assert set(sdk.__all__) >= FREEACT_011_NAMES
    assert all(hasattr(config, name) for name in FREEACT_011_CONFIG_NAMES)


async def handle_events(agent: Agent, prompt: str, approve: bool = True) -> list[str]:
    """freeact's example event loop, unchanged; returns what it printed."""
    printed: list[str] = []
    async for event in agent.stream(prompt):
        match event:
            case ApprovalRequest(tool_call=CodeAction(code=code)) as request:
                printed.append(f"Code action:\n{code}")
                request.approve(approve)
            case ApprovalRequest(tool_call=ShellAction(command=cmd)) as request:
                printed.append(f"Shell command: {cmd}")
                request.approve(approve)
            case ApprovalRequest(tool_call=tool_call) as request:
                printed.append(f"Tool: {tool_call.tool_name}")
                request.approve(approve)
            case Thoughts(content=content):
                printed.append(f"Thinking: {content}")
            case CodeExecutionOutput(text=text, approval_rejected=rejected):
                printed.append(f"Code execution output: {text}" + (" (rejected)" if rejected else ""))
            case ToolOutput(content=content):
                printed.append(f"Tool call result: {content}")
            case Response(content=content):
                printed.append(content)
    return printed


@pytest.mark.kernel
async def test_freeacts_agent_example_runs_unchanged(tmp_path: Path) -> None:
    cfg = config.init(tmp_path)
    assert (tmp_path / ".freeact" / "config.toml").is_file()
    runtime = config.resolve(cfg, tmp_path)
    s = Script(
        [
            [Think("squares"), Code("print(sum(i * i for i in range(1, 11)))\n!echo shell-part")],
            ["The sum is 385."],
            ["Still here."],
        ]
    )
    runtime = dataclasses.replace(runtime, model=s.model())

    async with Agent(runtime) as agent:
        session_id = agent.session_id
        assert session_id is not None
        printed = await handle_events(agent, "Sum the squares of 1..10")
        assert printed[0] == "Thinking: squares"
        assert printed[1].startswith("Code action:\nprint(sum(")
        assert "Shell command: echo shell-part" in printed
        assert "Code execution output: 385\nshell-part" in printed
        assert printed[-1] == "The sum is 385."

    # persistent_agent.py: the same session id resumes the conversation.
    resumed_runtime = dataclasses.replace(runtime, model=Script([["Resumed."]]).model())
    async with Agent(resumed_runtime, session_id=session_id) as agent:
        assert await handle_events(agent, "What was the sum?") == ["Resumed."]
    stored = (tmp_path / ".freeact" / "sessions" / session_id / "main.jsonl").read_text()
    assert "What was the sum?" in stored and "The sum is 385." in stored


@pytest.mark.kernel
async def test_rejection_and_cancellation_look_as_in_freeact(tmp_path: Path) -> None:
    import asyncio

    gate = asyncio.Event()
    s = Script(
        [[Code("print('before')\n!touch gone.txt")], [Wait(gate), "late"]]
    )  # a rejection ends the turn
    runtime = dataclasses.replace(config.resolve(config.init(tmp_path), tmp_path), model=s.model())
    async with Agent(runtime) as agent:
        printed: list[str] = []
        async for event in agent.stream("run it"):
            match event:
                case ApprovalRequest(tool_call=ShellAction(command=cmd)) as request:
                    printed.append(f"reject {cmd}")
                    request.approve(False)
                case ApprovalRequest() as request:
                    request.approve(True)
                case CodeExecutionOutput(text=text, approval_rejected=rejected):
                    printed.append(f"output {text!r} rejected={rejected}")
        assert printed[0] == "reject touch gone.txt"
        assert printed[1].startswith("output 'before") and printed[1].endswith("rejected=True")
        assert not (tmp_path / "gone.txt").exists()

        events = []

        async def consume() -> None:
            async for event in agent.stream("wait"):
                events.append(event)

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.3)
        agent.cancel()
        await asyncio.wait_for(task, 30)
        cancelled = [e for e in events if isinstance(e, Cancelled)]
        assert cancelled and cancelled[0].phase is Phase.LLM_STREAMING


def test_resolve_maps_freeacts_settings_and_reports_missing_variables(tmp_path: Path) -> None:
    freeact_dir = tmp_path / ".freeact"
    freeact_dir.mkdir()
    (freeact_dir / "config.toml").write_text(
        '[agent]\nmodel = "openai:gpt-4o"\nexecution_timeout = 0\nmax_subagents = 3\n'
        '[agent.kernel_env]\nTOKEN = "${MY_TOKEN}"\n'
        '[agent.ptc_servers.gh]\ncommand = "gh-mcp"\n'
    )
    cfg = config.load(tmp_path)
    with pytest.raises(ValueError, match="MY_TOKEN is not set"):
        config.resolve(cfg, tmp_path, env={})
    runtime = config.resolve(cfg, tmp_path, env={"MY_TOKEN": "t"})
    assert (runtime.model, runtime.execution_timeout, runtime.kernel_env) == (
        "openai:gpt-4o",
        None,
        {"TOKEN": "t"},
    )
    assert list(runtime.ptc_servers) == ["gh"] and runtime.mcp_servers == {}
    assert runtime.app_config.max_subagents == 3
    assert runtime.app_config.resolved_sessions_dir() == freeact_dir / "sessions"

    (freeact_dir / "config.toml").write_text("[agent]\nmodle = 'typo'\n")
    with pytest.raises(ValueError, match=r"config\.toml"):
        config.load(tmp_path)


def test_permission_manager_reads_and_writes_freeacts_file(tmp_path: Path) -> None:
    freeact_dir = tmp_path / ".freeact"
    manager = PermissionManager(tmp_path, freeact_dir)
    manager.init()
    written = tomllib.loads((freeact_dir / "permissions.toml").read_text())
    assert {"type": "FileRead", "tool_name": "*", "path": "**"} in written["allow"]

    assert manager.is_allowed(ShellAction(tool_name="bash", command="git status"))
    assert not manager.is_allowed(ShellAction(tool_name="bash", command="rm -rf x"))
    assert manager.is_allowed(
        FileRead(tool_name="filesystem_read_text_file", path="src/a.py", offset=None, limit=None)
    )
    assert not manager.is_allowed(
        FileRead(tool_name="filesystem_read_text_file", path="/etc/passwd", offset=None, limit=None)
    )
    assert not manager.is_allowed(
        FileRead(tool_name="filesystem_read_text_file", path="app/.env", offset=None, limit=None)
    )

    call = ShellAction(tool_name="bash", command="make test")
    pattern = suggest_pattern(call)
    assert (pattern, suggest_display(call)) == ("make test *", "make test")
    manager.allow_always(parse_pattern("make *", call))
    manager.allow_session(GenericCall(tool_name="github_*", tool_args={}))
    again = PermissionManager(tmp_path, freeact_dir)
    again.load()
    assert again.is_allowed(call)  # persisted
    assert not again.is_allowed(GenericCall(tool_name="github_search", tool_args={}))  # session rules are not
    assert manager.is_allowed(GenericCall(tool_name="github_search", tool_args={}))

    # A file as freeact 0.11 writes it.
    (freeact_dir / "permissions.toml").write_text(
        'ask = []\n[[allow]]\ntype = "CodeAction"\ntool_name = "ipybox_*"\n'
    )
    third = PermissionManager(tmp_path, freeact_dir)
    third.load()
    assert third.is_allowed(CodeAction(tool_name="ipybox_execute_ipython_cell", code="x"))
    (freeact_dir / "permissions.toml").write_text('[[allow]]\ntype = "Teleport"\ntool_name = "x"\n')
    with pytest.raises(ValueError, match="permissions.toml"):
        PermissionManager(tmp_path, freeact_dir).load()
