"""MCP servers over stdio (real test servers in tests/mcp_servers): generated Python APIs called from a
real kernel, and JSON tools with timeouts, failures and restarts."""

from __future__ import annotations

import asyncio
import shutil
import socket
import stat
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
import pytest_asyncio

from freeact_tui.execution.base import ExecApproval, ExecChunk, ExecResult
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.mcp.json_tools import McpJsonTools
from freeact_tui.mcp.ptc import PtcApis, generate_ptc_sources
from freeact_tui.mcp.servers import McpServerError, qualified_tool_name
from freeact_tui.project.config import McpServerConfig
from tests.helpers import port_open

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

SERVERS = Path(__file__).parents[1] / "mcp_servers"
HANG_TIMEOUT = 1.5


def stdio(script: str, *args: str, **settings: object) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[str(SERVERS / script), *args], **settings)  # type: ignore[arg-type]


def calc_ptc(**settings: object) -> dict[str, McpServerConfig]:
    return {"calc": stdio("calc.py", excluded_tools=["delete-everything"], **settings)}


def server_processes(script: str) -> list[psutil.Process]:
    """Live descendants of this test process running ``script``."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and any(script in part for part in proc.cmdline()):
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


# -- programmatic tool calling -------------------------------------------------------------------


@dataclass
class Ptc:
    apis: PtcApis
    executor: KernelExecutor
    logs: Path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ptc(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Ptc]:
    base = tmp_path_factory.mktemp("ptc")
    logs, root = base / "logs", base / "generated"
    (base / "work").mkdir()
    # The path must exist before the kernel starts: Python caches a missing sys.path entry as unusable.
    root.mkdir()
    executor = KernelExecutor(working_dir=base / "work", images_dir=base / "images", generated_root=root)
    apis, _ = await asyncio.gather(generate_ptc_sources(calc_ptc(), root, log_dir=logs), executor.start())
    executor.set_mcp_servers(apis.params)
    yield Ptc(apis, executor, logs)
    await executor.stop()


async def run_cell(
    executor: KernelExecutor, code: str, approve: bool
) -> tuple[list[ExecApproval], ExecResult]:
    approvals: list[ExecApproval] = []
    async for item in executor.stream(code, timeout=60):
        match item:
            case ExecApproval():
                approvals.append(item)
                await (item.accept() if approve else item.reject())
            case ExecChunk():
                pass
            case ExecResult():
                return approvals, item
    raise AssertionError("the stream ended without a result")


async def test_ptc_sources_are_generated_without_excluded_tools(ptc: Ptc) -> None:
    package = ptc.apis.root / "mcptools" / "calc"
    assert ptc.apis.errors == []
    assert ptc.apis.regenerated == ["calc"]
    assert sorted(p.name for p in package.glob("*.py")) == ["__init__.py", "add.py", "echo.py", "fail.py"]
    assert {(t.module, t.tool) for t in ptc.apis.tools} == {
        ("add", "add"),
        ("echo", "echo"),
        ("fail", "fail"),
    }
    assert ptc.apis.params == {
        "calc": {"command": sys.executable, "args": [str(SERVERS / "calc.py")], "env": {}}
    }
    # The init module embeds the server's env, which may hold tokens.
    assert stat.S_IMODE((package / "__init__.py").stat().st_mode) == 0o600


async def test_ptc_description_lists_signatures(ptc: Ptc) -> None:
    text = ptc.apis.description()
    assert "from mcptools.calc import add" in text
    assert "- `add.run(Params(a: int, b: int)) -> Result(result: int)`: Add two integers." in text
    assert "`echo.run(Params(text: str, times: Optional[int] = 1)) -> Result(result: str)`" in text
    assert "delete" not in text
    assert PtcApis(root=ptc.apis.root).description() == ""


async def test_ptc_call_from_kernel_accepted(ptc: Ptc) -> None:
    approvals, result = await run_cell(
        ptc.executor, "from mcptools.calc import add\nprint(add.run(add.Params(a=2, b=3)).result * 10)", True
    )
    assert [(a.kind, a.server, a.tool, a.args) for a in approvals] == [
        ("mcp", "calc", "add", {"a": 2, "b": 3})
    ]
    assert not result.is_error
    assert result.text.strip() == "50"


async def test_ptc_call_from_kernel_rejected(ptc: Ptc) -> None:
    approvals, result = await run_cell(
        ptc.executor, "from mcptools.calc import echo\nprint(echo.run(echo.Params(text='hi')).result)", False
    )
    assert [(a.server, a.tool, a.args) for a in approvals] == [("calc", "echo", {"text": "hi", "times": 1})]
    assert result.is_error
    # one line, never a traceback (what was rejected is the approval above)
    assert result.text.strip() == "rejected: the cell stopped here (ApprovalRejectedError)"


async def test_ptc_tool_error_reaches_the_cell(ptc: Ptc) -> None:
    # the message is assembled at run time, so "kaputt" in the output can only come from the tool's error
    approvals, result = await run_cell(
        ptc.executor, "from mcptools.calc import fail\nfail.run(fail.Params(message='kap' + 'utt'))", True
    )
    assert [(a.server, a.tool) for a in approvals] == [("calc", "fail")]
    assert result.is_error
    assert "ToolRunnerError" in result.text and "kaputt" in result.text


async def test_ptc_cache_is_reused_until_the_config_changes(ptc: Ptc, tmp_path: Path) -> None:
    add_py = ptc.apis.root / "mcptools" / "calc" / "add.py"
    before = add_py.stat().st_mtime_ns
    started = time.monotonic()
    again = await generate_ptc_sources(calc_ptc(), ptc.apis.root, log_dir=ptc.logs)
    assert time.monotonic() - started < 1.0  # no server start
    assert again.regenerated == [] and again.errors == []
    assert again.description() == ptc.apis.description()
    assert add_py.stat().st_mtime_ns == before

    copy = tmp_path / "generated"
    shutil.copytree(ptc.apis.root, copy)
    changed = await generate_ptc_sources(
        {"calc": stdio("calc.py", excluded_tools=["delete-everything", "fail"])}, copy, log_dir=ptc.logs
    )
    assert changed.regenerated == ["calc"]
    assert sorted(t.module for t in changed.tools) == ["add", "echo"]
    assert not (copy / "mcptools" / "calc" / "fail.py").exists()


async def test_ptc_failing_server_is_reported_and_others_still_generated(ptc: Ptc) -> None:
    servers = {**calc_ptc(), "broken": stdio("broken.py"), "json_only": stdio("calc.py", mode="json")}
    apis = await generate_ptc_sources(servers, ptc.apis.root, log_dir=ptc.logs)
    assert [e.server for e in apis.errors] == ["broken"]
    assert "failed to start" in str(apis.errors[0]) and "cannot open the database" in str(apis.errors[0])
    assert "MCP server `broken`" in str(apis.errors[0])
    assert {t.server for t in apis.tools} == {"calc"}
    assert not (ptc.apis.root / "mcptools" / "broken").exists()
    assert not (ptc.apis.root / "mcptools" / "json_only").exists()


async def test_ptc_names_and_stale_packages(tmp_path: Path) -> None:
    stale = tmp_path / "mcptools" / "old_server"
    stale.mkdir(parents=True)
    (stale / ".freeact-tui-digest").write_text("x")
    (stale / "tool.py").write_text("def run(params): ...\n")
    servers = {"1bad": stdio("calc.py"), "class": stdio("calc.py")}
    apis = await generate_ptc_sources(servers, tmp_path)
    assert sorted(e.server for e in apis.errors) == ["1bad", "class"]
    assert all("Python package name" in str(e) for e in apis.errors)
    assert not stale.exists()  # its server is no longer configured
    assert apis.tools == []


async def test_ptc_unwritable_root_is_an_error_not_a_crash(tmp_path: Path) -> None:
    root = tmp_path / "not-a-dir"
    root.write_text("a file where the directory should be")
    apis = await generate_ptc_sources(calc_ptc(), root)
    assert [e.server for e in apis.errors] == ["calc"]
    assert "cannot write its Python API" in str(apis.errors[0])
    assert root.read_text() == "a file where the directory should be"


# -- streamable HTTP --------------------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http_url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (tmp_path_factory.mktemp("http") / "server.log").open("w")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SERVERS / "calc.py"), "--http", str(port), stdout=log, stderr=log
    )
    try:
        await port_open(port, proc)
        yield f"http://127.0.0.1:{port}/rpc"
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)
        log.close()


async def test_http_server_json_tools_and_ptc(http_url: str, ptc: Ptc, tmp_path: Path) -> None:
    config = McpServerConfig(url=http_url, mode="json", excluded_tools=["fail"])
    async with McpJsonTools({"remote": config}) as tools:
        assert tools.errors == []
        assert sorted(d.name for d in tools.tool_definitions()) == [
            "remote_add",
            "remote_delete-everything",
            "remote_echo",
        ]
        assert await tools.call("remote_add", {"a": 5, "b": 6}) == ("11", False)

    servers = {**calc_ptc(), "remote": config.model_copy(update={"mode": "ptc"})}
    apis = await generate_ptc_sources(servers, ptc.apis.root, log_dir=ptc.logs)
    assert apis.errors == [] and apis.regenerated == ["remote"]
    ptc.executor.set_mcp_servers(apis.params)
    code = "from mcptools.remote import add as radd\nprint(radd.run(radd.Params(a=5, b=7)).result)"
    approvals, result = await run_cell(ptc.executor, code, True)
    assert [(a.server, a.tool) for a in approvals] == [("remote", "add")]
    assert (result.is_error, result.text.strip()) == (False, "12")


# -- JSON tools ----------------------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def json_tools(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpJsonTools]:
    servers = {
        "calc": stdio("calc.py", mode="json", excluded_tools=["delete-everything"]),
        "stuck": stdio("stuck.py", mode="json", timeout=HANG_TIMEOUT),
        "broken": stdio("broken.py", mode="json"),
        "missing": McpServerConfig(command="/nonexistent/mcp-server", mode="json"),
        "ptc_only": stdio("calc.py"),
        "disabled": stdio("calc.py", mode="json", enabled=False),
    }
    tools = McpJsonTools(servers, log_dir=tmp_path_factory.mktemp("logs"))
    await tools.start()
    yield tools
    await tools.stop()


async def test_json_tools_listed_with_excluded_tools_left_out(json_tools: McpJsonTools) -> None:
    definitions = {d.name: d for d in json_tools.tool_definitions()}
    assert set(definitions) == {
        "calc_add",
        "calc_echo",
        "calc_fail",
        "stuck_wait_forever",
        "stuck_ping",
        "stuck_die",
    }
    assert sorted(json_tools.servers) == ["calc", "stuck"]
    add = definitions["calc_add"]
    assert add.description is not None and "Add two integers." in add.description
    assert set(add.parameters_json_schema["properties"]) == {"a", "b"}
    assert json_tools.owns("calc_add") and not json_tools.owns("calc_delete-everything")
    # A call recorded by an older session of ours (``server__tool``) still reaches its tool.
    assert json_tools.owns("calc__add") and json_tools.canonical_name("calc__add") == "calc_add"


async def test_json_failed_servers_are_named_and_do_not_stop_the_others(json_tools: McpJsonTools) -> None:
    errors = {e.server: e for e in json_tools.errors}
    assert set(errors) == {"broken", "missing"}
    assert all(isinstance(e, McpServerError) for e in errors.values())
    assert str(errors["broken"]).startswith("MCP server `broken`: failed to start")
    assert "cannot open the database" in str(errors["broken"])  # the server's stderr is quoted
    assert (
        str(errors["missing"])
        == "MCP server `missing`: failed to start: command not found: /nonexistent/mcp-server"
    )
    assert await json_tools.call("calc__add", {"a": 1, "b": 2}) == ("3", False)


async def test_json_calls(json_tools: McpJsonTools) -> None:
    assert await json_tools.call("calc_add", {"a": 2, "b": 40}) == ("42", False)
    assert await json_tools.call("calc__echo", {"text": "hi", "times": 3}) == ("hi hi hi", False)


async def test_json_call_errors_are_results(json_tools: McpJsonTools) -> None:
    text, is_error = await json_tools.call("calc__fail", {"message": "boom"})
    assert is_error and "boom" in text and "`fail`" in text
    text, is_error = await json_tools.call("calc__add", {"a": "not a number"})
    assert is_error and "valid integer" in text
    assert await json_tools.call("calc__delete-everything", {}) == (
        "Unknown MCP tool `calc__delete-everything`.",
        True,
    )


async def test_json_hanging_call_times_out_and_server_keeps_working(json_tools: McpJsonTools) -> None:
    started = time.monotonic()
    text, is_error = await json_tools.call("stuck__wait_forever", {})
    elapsed = time.monotonic() - started
    assert is_error
    assert (
        text
        == f"MCP server `stuck`: tool `wait_forever` did not answer within {HANG_TIMEOUT:g} s; the call was abandoned."
    )
    assert HANG_TIMEOUT * 0.9 <= elapsed < HANG_TIMEOUT + 1.0
    assert await json_tools.call("stuck__ping", {}) == ("pong", False)


async def test_json_server_that_dies_is_restarted(json_tools: McpJsonTools) -> None:
    text, is_error = await json_tools.call("stuck__die", {})
    assert is_error and "MCP server `stuck` stopped during the call of `die`" in text
    assert await json_tools.call("stuck__ping", {}) == ("pong", False)
    assert await json_tools.call("calc__add", {"a": 1, "b": 1}) == ("2", False)


async def test_json_server_hanging_at_start_times_out_and_is_killed(tmp_path: Path) -> None:
    before = {p.pid for p in server_processes("broken.py")}
    tools = McpJsonTools(
        {"sleepy": stdio("broken.py", "--hang", mode="json")}, log_dir=tmp_path, start_timeout=1
    )
    started = time.monotonic()
    errors = await tools.start()
    assert time.monotonic() - started < 1 + 6
    assert [str(e) for e in errors] == ["MCP server `sleepy`: failed to start: no answer within 1 s"]
    assert tools.tool_definitions() == []
    await tools.stop()
    assert {p.pid for p in server_processes("broken.py")} <= before


async def test_json_stop_ends_server_processes(tmp_path: Path) -> None:
    before = {p.pid for p in server_processes("calc.py")}
    tools = McpJsonTools({"calc": stdio("calc.py", mode="json")}, log_dir=tmp_path)
    async with tools:
        assert await tools.call(qualified_tool_name("calc", "add"), {"a": 1, "b": 2}) == ("3", False)
        ours = {p.pid for p in server_processes("calc.py")} - before
        assert ours
    assert not ours & {p.pid for p in server_processes("calc.py")}


def _trusted_freeact_project(folder: Path) -> Path:
    """``folder`` as a trusted freeact project; its generated root."""
    from freeact_tui.project import trust

    project = folder.resolve()
    (project / ".freeact" / "generated").mkdir(parents=True)
    (project / ".freeact" / "config.toml").write_text("")
    trust.trust(trust.check(project))
    return project / ".freeact" / "generated"


def _swap_docstring(module: Path) -> None:
    module.write_text(module.read_text().replace('"""', '"""SWAPPED ', 1))


async def test_ptc_generated_into_a_trusted_project_is_listed_and_a_later_swap_is_not(tmp_path: Path) -> None:
    """In a trusted freeact project the app's freshly generated APIs are its own (listed for the prompt at
    once); a module changed afterwards by anyone else is not read into the prompt (issue #39)."""
    root = await asyncio.to_thread(_trusted_freeact_project, tmp_path)
    apis = await generate_ptc_sources(calc_ptc(), root)
    assert not apis.errors and apis.tools, apis
    await asyncio.to_thread(_swap_docstring, root / "mcptools" / "calc" / f"{apis.tools[0].module}.py")
    again = await generate_ptc_sources(calc_ptc(), root)
    assert "SWAPPED" not in repr(again.tools)
