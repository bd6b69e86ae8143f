"""The kernel's tool server: only allowed MCP servers run, calls are bounded, stderr goes to a log file.

Calls are made from code in a real kernel (mcpygen's ``ToolRunner``, as generated APIs do) to real
MCP servers over stdio and streamable HTTP.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import pytest_asyncio

from freeact_tui.execution.base import ExecApproval, ExecChunk, ExecResult
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.tools.server import parse_mcp_servers
from tests.helpers import port_open

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

SERVERS = Path(__file__).parents[1] / "mcp_servers"
CALC = {"command": sys.executable, "args": [str(SERVERS / "calc.py")], "env": {}}
STUCK = {"command": sys.executable, "args": [str(SERVERS / "stuck.py")]}
BROKEN = {"command": sys.executable, "args": [str(SERVERS / "broken.py")]}
MISSING = {"command": "/nonexistent/mcp-server"}

NOISY_SERVER = """\
import sys
from mcp.server.fastmcp import FastMCP

print("NOISE-AT-START from the noisy server", file=sys.stderr, flush=True)
server = FastMCP("noisy", log_level="WARNING")

@server.tool()
def shout(text: str) -> str:
    print(f"NOISE-IN-CALL {text}", file=sys.stderr, flush=True)
    return text.upper()

server.run("stdio")
"""


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    script = tmp_path_factory.mktemp("noisy") / "noisy.py"
    script.write_text(NOISY_SERVER)
    return {"command": sys.executable, "args": [str(script)]}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("logs")


def allow_list(noisy: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        "calc": CALC,
        "stuck": {**STUCK, "timeout": 1},
        "noisy": noisy,
        "broken": BROKEN,
        "missing": MISSING,
    }


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(
    tmp_path_factory: pytest.TempPathFactory, noisy: dict[str, Any], logs: Path
) -> AsyncIterator[KernelExecutor]:
    root = tmp_path_factory.mktemp("kernel")
    (root / "work").mkdir()
    executor = KernelExecutor(
        working_dir=root / "work", images_dir=root / "images", mcp_servers=allow_list(noisy), log_dir=logs
    )
    await executor.start()
    yield executor
    await executor.stop()


@pytest.fixture(autouse=True)
def restore_allow_list(ex: KernelExecutor, noisy: dict[str, Any]) -> Iterator[None]:
    yield
    ex.set_mcp_servers(allow_list(noisy))


def call(server: str, params: dict[str, Any], tool: str, args: dict[str, Any] | None = None) -> str:
    """Kernel code that calls ``server.tool`` through the tool server, as a generated API does."""
    return (
        "import os\nfrom mcpygen.tool_exec.client import ToolRunner\n"
        f"_runner = ToolRunner({server!r}, {params!r}, host=os.environ['TOOL_SERVER_HOST'],"
        " port=int(os.environ['TOOL_SERVER_PORT']))\n"
        f"print(_runner.run_sync({tool!r}, {args or {}!r}))"
    )


async def run(executor: KernelExecutor, code: str) -> tuple[list[ExecApproval], ExecResult]:
    """Run a cell, accepting every approval."""
    asked: list[ExecApproval] = []
    async for item in executor.stream(code, timeout=60):
        match item:
            case ExecApproval():
                asked.append(item)
                await item.accept()
            case ExecChunk():
                pass
            case ExecResult():
                return asked, item
    raise AssertionError("stream ended without an ExecResult")


def processes_running(needle: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and any(needle in part for part in proc.cmdline()):
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


# -- the allow-list ------------------------------------------------------------------------------


async def test_configured_server_runs_after_approval(ex: KernelExecutor) -> None:
    asked, result = await run(ex, call("calc", CALC, "add", {"a": 2, "b": 3}))
    assert [(a.kind, a.server, a.tool, a.args) for a in asked] == [("mcp", "calc", "add", {"a": 2, "b": 3})]
    assert not result.is_error, result.text
    assert "'result': 5" in result.text


async def test_forged_parameters_are_refused_and_nothing_runs(ex: KernelExecutor, tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    forged = {"command": "touch", "args": [str(pwned)]}
    for server in ("calc", "evil"):
        asked, result = await run(ex, call(server, forged, "add", {"a": 1, "b": 1}))
        assert asked == [], "a refused call must not even ask for approval"
        assert result.is_error
        assert "ToolRunnerError" in result.text
        if server == "calc":
            assert "differ from the configured ones" in result.text
        else:
            assert "MCP server `evil` is not configured" in result.text
    await asyncio.sleep(0.5)  # a started `touch` would have created the file by now
    assert not pwned.exists()


async def test_nothing_is_allowed_without_an_allow_list(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    executor = KernelExecutor(working_dir=tmp_path / "work", warm_up=False, log_dir=tmp_path / "logs")
    await executor.start()
    try:
        asked, result = await run(executor, call("calc", CALC, "add", {"a": 1, "b": 2}))
        assert asked == [] and result.is_error
        assert "MCP server `calc` is not configured (configured: none)" in result.text
        executor.set_mcp_servers({"calc": CALC})  # generation finished after the kernel started
        asked, result = await run(executor, call("calc", CALC, "add", {"a": 1, "b": 2}))
        assert len(asked) == 1 and not result.is_error, result.text
        assert "'result': 3" in result.text
    finally:
        await executor.stop()


async def test_changed_parameters_stop_the_running_server(ex: KernelExecutor) -> None:
    _, result = await run(ex, call("calc", CALC, "add", {"a": 1, "b": 1}))
    assert not result.is_error, result.text
    assert processes_running("calc.py")
    changed = {**CALC, "env": {"CALC_VARIANT": "2"}}
    ex.set_mcp_servers({"calc": changed})
    for _ in range(50):
        if not processes_running("calc.py"):
            break
        await asyncio.sleep(0.1)
    assert not processes_running("calc.py"), "the server started with the old parameters still runs"
    _, old = await run(ex, call("calc", CALC, "add", {"a": 1, "b": 1}))
    assert old.is_error and "differ from the configured ones" in old.text
    _, new = await run(ex, call("calc", changed, "add", {"a": 1, "b": 1}))
    assert not new.is_error and "'result': 2" in new.text


async def test_reset_stops_started_servers(ex: KernelExecutor) -> None:
    _, result = await run(ex, call("calc", CALC, "add", {"a": 1, "b": 1}))
    assert not result.is_error, result.text
    assert processes_running("calc.py")
    await ex.reset()
    assert not processes_running("calc.py")
    _, again = await run(ex, call("calc", CALC, "add", {"a": 2, "b": 2}))
    assert not again.is_error and "'result': 4" in again.text


async def test_malformed_allow_list_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="`x`: connection parameters need a `command` or a `url`"):
        parse_mcp_servers({"x": {"args": ["a"]}})
    with pytest.raises(ValueError, match="`x`: timeout must be a positive number"):
        parse_mcp_servers({"x": {"command": "a", "timeout": 0}})
    with pytest.raises(ValueError, match="must be a mapping"):
        parse_mcp_servers({"x": "python server.py"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="need a `command`"):
        KernelExecutor(working_dir=tmp_path, mcp_servers={"x": {}})
    entries = parse_mcp_servers({"a": {"command": "a", "timeout": 2}, "b": {"url": "http://h/mcp"}}, 7)
    assert (entries["a"].params, entries["a"].timeout) == ({"command": "a"}, 2.0)
    assert entries["b"].timeout == 7.0


# -- bounded calls -------------------------------------------------------------------------------


async def test_hung_tool_is_abandoned_after_the_server_timeout(ex: KernelExecutor) -> None:
    began = time.monotonic()
    _, result = await run(ex, call("stuck", STUCK, "wait_forever"))
    assert time.monotonic() - began < 10
    assert result.is_error and not result.timed_out
    assert "MCP server `stuck`: tool `wait_forever` did not answer within 1 s" in result.text
    _, after = await run(ex, call("stuck", STUCK, "ping"))
    assert not after.is_error and "pong" in after.text


async def test_server_dying_mid_call_is_started_again(ex: KernelExecutor) -> None:
    _, died = await run(ex, call("stuck", STUCK, "die"))
    assert died.is_error and "MCP server `stuck` stopped during the call of `die`" in died.text
    _, after = await run(ex, call("stuck", STUCK, "ping"))
    assert not after.is_error and "pong" in after.text


async def test_tool_error_reaches_the_cell(ex: KernelExecutor) -> None:
    _, result = await run(ex, call("calc", CALC, "fail", {"message": "kaputt"}))
    assert result.is_error and "ToolRunnerError: Error executing tool fail: kaputt" in result.text
    _, after = await run(ex, call("calc", CALC, "add", {"a": 1, "b": 1}))
    assert not after.is_error, after.text


@pytest.mark.parametrize(
    ("server", "params", "why"),
    [
        ("missing", MISSING, "command not found: /nonexistent/mcp-server"),
        ("broken", BROKEN, "Its last words:\nbroken: cannot open the database"),
    ],
)
async def test_server_that_cannot_start_is_a_clear_error(
    ex: KernelExecutor, logs: Path, server: str, params: dict[str, Any], why: str
) -> None:
    _, result = await run(ex, call(server, params, "anything"))
    assert result.is_error and f"MCP server `{server}` could not be started" in result.text
    assert why in result.text
    assert f"Its stderr is in {logs / f'mcp-{server}.log'}" in result.text


# -- stderr and warnings -------------------------------------------------------------------------


async def test_server_stderr_goes_to_its_log_file_not_the_terminal(
    ex: KernelExecutor, noisy: dict[str, Any], logs: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    _, result = await run(ex, call("noisy", noisy, "shout", {"text": "hi"}))
    assert not result.is_error and "HI" in result.text
    log = (logs / "mcp-noisy.log").read_text()
    assert "NOISE-AT-START" in log and "NOISE-IN-CALL hi" in log
    _, err = capfd.readouterr()
    assert "NOISE" not in err


async def test_http_server_without_deprecation_warning(
    ex: KernelExecutor, recwarn: pytest.WarningsRecorder
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVERS / "calc.py"),
        "--http",
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await port_open(port, proc)
        params = {"url": f"http://127.0.0.1:{port}/rpc", "headers": {}, "type": "streamable_http"}
        ex.set_mcp_servers({"calc_http": params})
        asked, result = await run(ex, call("calc_http", params, "add", {"a": 20, "b": 22}))
        assert len(asked) == 1 and not result.is_error, result.text
        assert "'result': 42" in result.text
        deprecations = [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
        assert not [w for w in deprecations if "streamable" in str(w.message)]
    finally:
        ex.set_mcp_servers(None)  # closes the HTTP session (in the background) before the server goes
        await asyncio.sleep(0.5)
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)
