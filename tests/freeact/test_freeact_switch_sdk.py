"""freeact 0.11's SDK names and behaviours on freeact-tui, and its SDK tutorial ported by changing imports.

The tutorial is freeact 0.11's ``docs/getting-started/sdk-tutorial.md`` (its ``examples/basic_agent.py``
in the 0.11 form: ``config.init`` / ``config.resolve``, ``generate_mcp_sources(runtime.ptc_servers,
runtime.workspace.generated_dir)``, ``Agent(runtime)`` and the ``match`` over events). Only its imports
change; its search/fetch presets (Gemini tools) are replaced by a local calculator ``ptc`` server and
the model by a scripted one.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

# The port: `from freeact import ...` → `from freeact_tui.freeact import ...`
from freeact_tui.freeact import (
    Agent,
    AgentTurnError,
    ApprovalRequest,
    CodeAction,
    CodeExecutionOutput,
    Response,
    ShellAction,
    Thoughts,
    ToolOutput,
    config,
)
from freeact_tui.freeact.tools.pytools.apigen import generate_mcp_sources
from tests.scripted import Code, Think, script

SERVERS = Path(__file__).parents[1] / "mcp_servers"
CALC = f'command = "{sys.executable}"\nargs = ["{SERVERS / "calc.py"}"]\n'


def workspace_with_servers(root: Path) -> Path:
    (root / ".freeact").mkdir(parents=True)
    (root / ".freeact" / "config.toml").write_text(
        f"[agent.ptc_servers.calc]\n{CALC}\n[agent.mcp_servers.jcalc]\n{CALC}"
    )
    return root


@pytest.mark.kernel
async def test_freeacts_sdk_tutorial_runs_with_only_its_imports_changed(tmp_path: Path) -> None:
    working_dir = workspace_with_servers(tmp_path)
    s = script(
        [
            Think("use the tool"),
            Code("from mcptools.calc import add\nprint(add.run(add.Params(a=2, b=3)).result)"),
        ],
        ["The sum is 5."],
    )
    printed: list[str] = []

    # -- the tutorial, step 2: load and resolve configuration
    config.init(working_dir)
    runtime = config.resolve(config.load(working_dir), working_dir)
    runtime = dataclasses.replace(runtime, model=s.model())  # the scripted model instead of Gemini

    # -- step 3: generate MCP tool APIs
    if runtime.ptc_servers:
        await generate_mcp_sources(runtime.ptc_servers, runtime.workspace.generated_dir)

    # -- step 4: run the agent and handle events
    async with Agent(runtime) as agent:
        prompt = "What is 2 + 3? Use the calculator."
        async for event in agent.stream(prompt):
            match event:
                case ApprovalRequest(tool_call=CodeAction(code=code)) as request:
                    printed.append(f"Code action:\n{code}")
                    request.approve(True)
                case ApprovalRequest(tool_call=ShellAction(command=cmd)) as request:
                    printed.append(f"Shell command: {cmd}")
                    request.approve(True)
                case ApprovalRequest(tool_call=tool_call) as request:
                    printed.append(f"Tool: {tool_call.tool_name}")
                    request.approve(True)
                case Thoughts(content=content):
                    printed.append(f"Thinking: {content}")
                case CodeExecutionOutput(text=text):
                    printed.append(f"Code execution output: {text}")
                case ToolOutput(content=content):
                    printed.append(f"Tool call result: {content}")
                case Response(content=content):
                    printed.append(content)

    assert (working_dir / ".freeact" / "generated" / "mcptools" / "calc" / "add.py").is_file()
    assert printed[0] == "Thinking: use the tool"
    assert printed[1].startswith("Code action:\nfrom mcptools.calc import add")
    assert "Tool: calc_add" in printed  # the programmatic call, named as freeact names it
    assert "Code execution output: 5" in printed
    assert printed[-1] == "The sum is 5."


@pytest.mark.kernel
async def test_sdk_names_and_behaviours_as_in_freeact(tmp_path: Path) -> None:
    import freeact_tui

    working_dir = workspace_with_servers(tmp_path)
    cfg = config.init(working_dir)
    assert cfg.terminal.collapse_tool_outputs is True and cfg.terminal.expand_all_toggle_key == "ctrl+o"
    for name in ("FILESYSTEM", "BASIC_SEARCH", "HYBRID_SEARCH", "GOOGLE_SEARCH", "FETCH"):
        assert "args" in getattr(config, f"{name}_MCP_SERVER_CONFIG")
    runtime = config.resolve(cfg, working_dir)
    names = sorted(skill.name for skill in runtime.skills_metadata)
    assert names == ["output-parsers", "saving-codeacts", "task-planning"]  # init copied freeact's three
    assert all(isinstance(skill, config.SkillMetadata) for skill in runtime.skills_metadata)
    assert (
        config.load_skills_metadata(
            skills_dir=runtime.workspace.skills_dir, project_skills_dir=runtime.workspace.project_skills_dir
        )
        == runtime.skills_metadata
    )
    system = runtime.system_prompt
    assert "task-planning" in system and str(Path(freeact_tui.__file__).parent) not in system
    sub = runtime.for_subagent()
    assert (sub.enable_subagents, sub.subagent_mode, runtime.subagent_mode) == (False, True, False)

    s = script([Code("print('x')")], ["not reached"])
    model = s.model()
    agent = Agent(dataclasses.replace(runtime, model=model))
    assert agent.model is model
    assert agent.model_settings == runtime.model_settings
    async with agent:
        tools = agent.tool_names
        assert {"ipybox_execute_ipython_cell", "ipybox_reset", "subagent_task", "jcalc_add"} <= set(tools)
        assert "jcalc" not in tools and "pytools_list_tools" in tools
        events = []
        async for event in agent.stream("print x"):
            events.append(event)
            if isinstance(event, ApprovalRequest):
                event.approve(False)
    responses = [e.content for e in events if isinstance(e, Response)]
    assert responses == ["Tool call rejected"]  # as freeact ends a turn with a rejected call


async def test_agent_without_an_api_key_fails_at_the_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    runtime = config.resolve(config.init(tmp_path), tmp_path)  # freeact's default Gemini model
    agent = Agent(runtime)  # as in freeact: no error yet
    assert agent.model == config.DEFAULT_MODEL_NAME
    async with agent:
        with pytest.raises(AgentTurnError, match="GEMINI_API_KEY"):
            async for _ in agent.stream("hi"):
                pass


async def test_the_basic_search_server_config_serves_discovery(tmp_path: Path) -> None:
    from freeact_tui.mcp.json_tools import McpJsonTools
    from freeact_tui.project.config import McpServerConfig

    (tmp_path / "mcptools" / "calc").mkdir(parents=True)
    (tmp_path / "mcptools" / "calc" / "add.py").write_text("")
    params = dict(config.BASIC_SEARCH_MCP_SERVER_CONFIG)
    params["env"] = {"PYTOOLS_DIR": str(tmp_path)}
    async with McpJsonTools({"pytools": McpServerConfig(mode="json", **params)}) as tools:
        assert tools.errors == []
        text, is_error = await tools.call("pytools_list_categories", {})
    assert not is_error and json.loads(text) == {"gentools": [], "mcptools": ["calc"]}
