"""A freeact 0.11 user switches with nothing lost: tools where freeact keeps them, freeact's tool
names, its skills, and nothing of the installation's paths sent to the model.

Tests that need real freeact run it in a subprocess (``FREEACT_PYTHON``, as in
``test_freeact_interop``) and skip without it.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

import freeact_tui
from freeact_tui.agent.agent import Agent
from freeact_tui.agent.prompts import build_system_prompt
from freeact_tui.events import AgentEvent, ApprovalRequest, CodeExecutionOutput
from freeact_tui.mcp.gentools import gentools_root
from freeact_tui.mcp.ptc import generate_ptc_sources
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project import paths
from freeact_tui.project.config import Config, McpServerConfig, load_config
from freeact_tui.project.skills import available_skills
from tests.freeact_peer import find_freeact
from tests.scripted import Code, script

SERVERS = Path(__file__).parents[1] / "mcp_servers"
INSTALL_DIR = Path(freeact_tui.__file__).resolve().parent

SAVED_TOOL = '''
def run(n: int) -> int:
    """Twice n."""
    return 2 * n
'''


def calc_ptc() -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[str(SERVERS / "calc.py")], mode="ptc")


def freeact_project(root: Path) -> Path:
    """A project as ``freeact init`` leaves it, with a tool saved the way freeact's skill saves one
    (``gentools/<category>/<tool>/api.py``, empty ``__init__.py`` files)."""
    (root / ".freeact" / "generated").mkdir(parents=True)
    tool = root / ".freeact" / "generated" / "gentools" / "mathx" / "double"
    tool.mkdir(parents=True)
    (tool.parent / "__init__.py").write_text("")
    (tool / "__init__.py").write_text("")
    (tool / "api.py").write_text(SAVED_TOOL)
    return root


ASKED: list[ApprovalRequest] = []  # the requests of the last ``run_turn`` no rule had decided


async def run_turn(agent: Agent, prompt: str) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    ASKED.clear()
    async with agent:
        async for event in agent.stream(prompt):
            events.append(event)
            if isinstance(event, ApprovalRequest) and not event.decided:
                ASKED.append(event)
                event.approve(True)
    return events


@pytest.mark.kernel
async def test_a_projects_saved_and_edited_tools_are_used_and_nothing_of_ours_shadows_them(
    tmp_path: Path,
) -> None:
    # A run outside any project made our data dir's gentools package (this shadowed the project's).
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert (gentools_root(outside) / "gentools" / "__init__.py").is_file()
    project = freeact_project(tmp_path / "proj")
    generated = project / ".freeact" / "generated"
    # The project's API of its ptc server, edited by hand (freeact's tool authoring).
    first = await generate_ptc_sources({"calc": calc_ptc()}, generated)
    assert first.errors == []
    add_py = generated / "mcptools" / "calc" / "add.py"
    add_py.write_text(add_py.read_text() + "\n\ndef edited() -> str:\n    return 'kept'\n")

    code = (
        "from gentools.mathx.double.api import run\nprint(run(21))\n"
        "from mcptools.calc import add\nprint(add.edited(), add.run(add.Params(a=2, b=3)).result)"
    )
    s = script([Code(code)], ["done"])
    agent = Agent(
        s.model(),
        working_dir=project,
        sessions_dir=tmp_path / "sessions",
        mcp_servers={"calc": calc_ptc()},
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
    )
    events = await run_turn(agent, "use the tools")
    assert [e.text for e in events if isinstance(e, CodeExecutionOutput)] == ["42\nkept 5"]
    assert "def edited()" in add_py.read_text()  # not regenerated over the user's edit
    assert not (paths.data_dir() / "generated" / "mcptools").exists()  # ours stayed out of it
    system = str(s.requests[0][0].parts[0].content)  # type: ignore[union-attr]
    assert "`gentools.mathx.double.api.run(n: int)`: Twice n." in system
    assert "mcptools.calc" in system


@pytest.mark.kernel
async def test_every_saved_tool_the_prompt_lists_imports_in_the_kernel(tmp_path: Path) -> None:
    project = freeact_project(tmp_path)
    gentools = project / ".freeact" / "generated" / "gentools"
    bad = gentools / "my-tools" / "thing"  # no import statement can name `my-tools`
    bad.mkdir(parents=True)
    (bad / "api.py").write_text(SAVED_TOOL)
    ours = gentools / "text" / "shout"  # our skill's layout: `run` exported from the package too
    ours.mkdir(parents=True)
    (ours / "__init__.py").write_text("from .api import run\n")
    (ours / "api.py").write_text('def run(s: str) -> str:\n    """Upper case."""\n    return s.upper()\n')

    listing = script(["nothing to do"])
    agent = Agent(listing.model(), working_dir=project, sessions_dir=tmp_path / "s", enable_subagents=False)
    await run_turn(agent, "hi")
    system = str(listing.requests[0][0].parts[0].content)  # type: ignore[union-attr]
    listed = [line.split("`")[1] for line in system.splitlines() if line.startswith("- `gentools.")]
    assert [entry.split(".run(")[0] for entry in listed] == [
        "gentools.mathx.double.api",
        "gentools.text.shout.api",
    ]
    imports = "\n".join(f"import {entry.split('.run(')[0]}" for entry in listed) + "\nprint('ok')"
    s = script([Code(imports)], ["done"])
    agent = Agent(
        s.model(),
        working_dir=project,
        sessions_dir=tmp_path / "s",
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
    )
    events = await run_turn(agent, "import them")
    assert [e.text for e in events if isinstance(e, CodeExecutionOutput)] == ["ok"]


@pytest.mark.kernel
async def test_a_package_generated_by_real_freeact_is_kept_and_called(tmp_path: Path) -> None:
    python, why = find_freeact()
    if python is None:
        pytest.skip(why)
    project = freeact_project(tmp_path)
    generated = project / ".freeact" / "generated"
    params = {"command": sys.executable, "args": [str(SERVERS / "calc.py")]}
    generate = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from freeact.tools.pytools.apigen import generate_mcp_sources
        asyncio.run(generate_mcp_sources({{"calc": {params!r}}}, Path({str(generated)!r})))
        """
    )
    done = await asyncio.to_thread(
        subprocess.run, [python, "-c", generate], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    made_by_freeact = (generated / "mcptools" / "calc" / "add.py").read_text()

    apis = await generate_ptc_sources({"calc": calc_ptc()}, generated)
    assert apis.errors == [] and apis.regenerated == [] and apis.kept == ["calc"]
    assert (generated / "mcptools" / "calc" / "add.py").read_text() == made_by_freeact
    s = script([Code("from mcptools.calc import add\nprint(add.run(add.Params(a=40, b=2)).result)")], ["42"])
    agent = Agent(
        s.model(),
        working_dir=project,
        sessions_dir=tmp_path / "s",
        mcp_servers={"calc": calc_ptc()},
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
    )
    events = await run_turn(agent, "add")
    assert [e.text for e in events if isinstance(e, CodeExecutionOutput)] == ["42"]


def test_the_bundled_skills_are_copied_as_freeact_copies_them_and_nothing_names_the_install_dir(
    tmp_path: Path,
) -> None:
    # In a freeact project: filled in relative to the project as freeact's are, but copied into our
    # data dir, never into the project (a copy there changed what the user trusted).
    project = tmp_path / "proj"
    (project / ".freeact").mkdir(parents=True)
    names = sorted(s.name for s in available_skills(project))
    assert names == ["output-parsers", "saving-codeacts", "task-planning"]
    assert list((project / ".freeact").iterdir()) == []
    planning = next(s for s in available_skills(project) if s.name == "task-planning").path.read_text()
    assert "`.freeact/plans/<task-name>.md`" in planning and "{plans_rel_dir}" not in planning
    # The project's own skill of the same name wins over the bundled one.
    (project / ".freeact" / "skills" / "task-planning").mkdir(parents=True)
    (project / ".freeact" / "skills" / "task-planning" / "SKILL.md").write_text(
        "---\nname: task-planning\ndescription: mine\n---\n"
    )
    assert {s.name: s.description for s in available_skills(project)}["task-planning"] == "mine"

    for working_dir in (project, tmp_path / "plain"):
        working_dir.mkdir(exist_ok=True)
        prompt = build_system_prompt(working_dir, gentools=None)
        assert str(INSTALL_DIR) not in prompt and "site-packages" not in prompt
        assert "saving-codeacts" in prompt


# -- session ids ---------------------------------------------------------------------------------


def test_a_session_id_freeact_accepts_is_listed_shown_and_resolved(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from freeact_tui.cli.sessions import sessions_app
    from freeact_tui.store import SessionStore

    store = SessionStore(tmp_path)
    store.session("countries-session").append(
        [
            ModelRequest(parts=[UserPromptPart("Which is the largest country?")]),
            ModelResponse([TextPart("Russia.")]),
        ]
    )
    assert store.resolve("countries-session") == "countries-session"
    assert store.resolve("countries") == "countries-session"  # a unique prefix, as for UUIDs
    runner = CliRunner()
    listed = runner.invoke(sessions_app, ["list", "--sessions-dir", str(tmp_path)])
    assert listed.exit_code == 0 and "countries-session" in listed.stdout
    shown = runner.invoke(sessions_app, ["show", "countries-session", "--sessions-dir", str(tmp_path)])
    assert shown.exit_code == 0 and "Russia." in shown.stdout


@pytest.mark.parametrize("bad", ["..", "../x", "a/b", "/etc/passwd", "a\0b", ".hidden", ""])
def test_ids_that_would_leave_the_store_are_refused_clearly(tmp_path: Path, bad: str) -> None:
    from typer.testing import CliRunner

    from freeact_tui.cli.sessions import sessions_app
    from freeact_tui.store import InvalidSessionId, SessionStore

    with pytest.raises(InvalidSessionId, match="Invalid session id"):
        SessionStore(tmp_path / "store").session(bad)
    assert not (tmp_path / "store").exists()
    if bad and "\0" not in bad:  # a NUL cannot be passed on a command line
        shown = CliRunner().invoke(sessions_app, ["show", bad, "--sessions-dir", str(tmp_path / "store")])
        assert (
            shown.exit_code == 2 and "Invalid session id" in shown.stderr and "Traceback" not in shown.stderr
        )


def test_a_session_real_freeact_wrote_under_a_name_is_listed_and_resumable_here(tmp_path: Path) -> None:
    python, why = find_freeact()
    if python is None:
        pytest.skip(why)
    from freeact_tui.store import SessionStore

    done = subprocess.run(
        [
            python,
            str(Path(__file__).parents[1] / "freeact_probe.py"),
            "write",
            str(tmp_path),
            "countries-session",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    store = SessionStore(tmp_path)
    assert [info.id for info in store.list()] == ["countries-session"]
    assert store.session(store.resolve("countries-session")).load().messages


@pytest.mark.kernel
async def test_the_sdk_takes_a_named_session_id_and_resumes_it(tmp_path: Path) -> None:
    import dataclasses

    from freeact_tui.freeact import Agent as FreeactAgent
    from freeact_tui.freeact import Response, config

    runtime = config.resolve(config.init(tmp_path), tmp_path)
    first = dataclasses.replace(runtime, model=script(["Noted: blue."]).model())
    async with FreeactAgent(first, session_id="tui-sess-1") as agent:
        assert agent.session_id == "tui-sess-1"
        said = [e.content async for e in agent.stream("My colour is blue.") if isinstance(e, Response)]
    assert said == ["Noted: blue."]
    later = script(["Blue."])
    async with FreeactAgent(
        dataclasses.replace(runtime, model=later.model()), session_id="tui-sess-1"
    ) as agent:
        said = [e.content async for e in agent.stream("What is my colour?") if isinstance(e, Response)]
    assert said == ["Blue."]
    assert "My colour is blue." in str(later.requests[0])  # the history came back
    assert (tmp_path / ".freeact" / "sessions" / "tui-sess-1" / "main.jsonl").is_file()


# -- tool discovery ------------------------------------------------------------------------------


@pytest.mark.kernel
async def test_tool_discovery_answers_as_freeacts_basic_server_and_is_on_by_default(tmp_path: Path) -> None:
    import json

    from freeact_tui.events import AgentError, ToolOutput
    from tests.scripted import Call

    project = freeact_project(tmp_path / "proj")
    s = script(
        [Call("pytools_list_categories", {}, call_id="c1")],
        [Call("pytools_list_tools", {"categories": ["calc", "mathx"]}, call_id="c2")],
        ["found them"],
    )
    agent = Agent(
        s.model(),
        working_dir=project,
        sessions_dir=tmp_path / "s",
        mcp_servers={"calc": calc_ptc()},
        enable_subagents=False,  # default permissions: discovery is allowed without asking, as in freeact
    )
    events = await run_turn(agent, "what tools are there?")
    assert [e for e in events if isinstance(e, AgentError)] == []
    requests = [e for e in events if isinstance(e, ApprovalRequest)]
    assert len(requests) == 2 and ASKED == []  # allowed without asking
    outputs = [json.loads(e.content) for e in events if isinstance(e, ToolOutput)]
    assert outputs[0] == {"gentools": ["mathx"], "mcptools": ["calc"]}
    assert outputs[1]["mathx"] == {
        "gentools": [".freeact/generated/gentools/mathx/double/api.py"],
        "mcptools": [],
    }
    assert ".freeact/generated/mcptools/calc/add.py" in outputs[1]["calc"]["mcptools"]
    assert {"pytools_list_categories", "pytools_list_tools"} <= {t.name for t in s.infos[0].function_tools}

    python, _ = find_freeact()
    if python is not None:  # real freeact's basic server functions, on the same directory
        probe = (
            "import json, os\nos.chdir(os.environ['P'])\nfrom freeact.tools.pytools import basic\n"
            "print(json.dumps([basic.list_categories().model_dump(), "
            "{k: v.model_dump() for k, v in basic.list_tools(['calc', 'mathx']).items()}]))"
        )
        done = await asyncio.to_thread(
            subprocess.run, [python, "-c", probe], capture_output=True, text=True, timeout=120,
            env={"P": str(project), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        categories, tools = json.loads(done.stdout)
        assert {k: sorted(v) for k, v in categories.items()} == outputs[0]
        assert {c: {k: sorted(v) for k, v in t.items()} for c, t in tools.items()} == outputs[1]


@pytest.mark.kernel
async def test_hybrid_discovery_without_its_extra_says_so_and_basic_is_used(tmp_path: Path) -> None:
    from freeact_tui.events import AgentError

    s = script(["ok"])
    config = Config(
        working_dir=tmp_path, sessions_dir=tmp_path / "s", tool_discovery="hybrid", enable_subagents=False
    )
    agent = Agent.from_config(config, model=s.model())
    events = await run_turn(agent, "hi")
    notices = [e.message for e in events if isinstance(e, AgentError)]
    assert (
        len(notices) == 1 and 'discovery = "hybrid" needs' in notices[0] and "freeact[search]" in notices[0]
    )
    assert agent.mcp.discovery is not None  # basic discovery (offered once there is something to find)

    off = script(["ok"])
    (tmp_path / ".freeact").mkdir()
    (tmp_path / ".freeact" / "config.toml").write_text('[agent.tools]\ndiscovery = "off"\n')
    config = load_config(cwd=tmp_path, trust_project=True)
    assert config.tool_discovery == "off"
    agent = Agent.from_config(config, model=off.model(), working_dir=tmp_path, sessions_dir=tmp_path / "s2")
    await run_turn(agent, "hi")
    assert not {t.name for t in off.infos[0].function_tools} & {
        "pytools_list_categories",
        "pytools_list_tools",
    }


@pytest.mark.kernel
async def test_a_freeact_rule_for_a_json_tool_matches_its_name_here(tmp_path: Path) -> None:
    from freeact_tui.events import ToolOutput
    from tests.scripted import Call

    project = tmp_path / "proj"
    (project / ".freeact").mkdir(parents=True)
    calc = f'command = "{sys.executable}"\nargs = ["{SERVERS / "calc.py"}"]\n'
    (project / ".freeact" / "config.toml").write_text(f"[agent.mcp_servers.jcalc]\n{calc}")
    # The rule freeact writes when its user chooses "always" for this call.
    (project / ".freeact" / "permissions.toml").write_text(
        'ask = []\n[[allow]]\ntype = "GenericCall"\ntool_name = "jcalc_add"\n'
    )
    s = script([Call("jcalc_add", {"a": 2, "b": 40}, call_id="c1")], ["42"])
    agent = Agent.from_config(
        load_config(cwd=project, trust_project=True),
        model=s.model(),
        working_dir=project,
        sessions_dir=tmp_path / "s",
    )
    events = await run_turn(agent, "add")
    requests = [e for e in events if isinstance(e, ApprovalRequest)]
    assert len(requests) == 1 and ASKED == []  # allowed by freeact's rule: never asked
    assert [e.content for e in events if isinstance(e, ToolOutput)] == ["42"]


def test_discovery_tools_are_offered_only_with_something_to_discover(tmp_path: Path) -> None:
    from freeact_tui.mcp.discovery import LIST_CATEGORIES, ToolDiscovery

    discovery = ToolDiscovery(tmp_path / "generated", tmp_path)
    assert discovery.tool_definitions() == []  # nothing generated or saved yet
    assert discovery.owns(LIST_CATEGORIES)  # an older session's call is still answered
    (tmp_path / "generated" / "gentools" / "mathx").mkdir(parents=True)
    assert LIST_CATEGORIES in {d.name for d in discovery.tool_definitions()}
