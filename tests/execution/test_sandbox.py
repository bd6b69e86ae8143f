"""SandboxExecutor against real bubblewrap, socat and an ipybox kernel: it works as the local one, confined."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest
import pytest_asyncio

from freeact_tui.agent.agent import Agent
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput
from freeact_tui.execution import create_executor
from freeact_tui.execution.base import ExecChunk, ExecResult, Executor, ExecutorError
from freeact_tui.execution.isolation.sandbox import SandboxExecutor
from tests.executor_checks import (
    approvals,
    check_interrupt_and_timeout,
    descendants,
    new_descendants,
    no_new_descendants,
    record_socket_dirs,
    run,
    until,
)
from tests.scripted import Code, script
from tests.user_dirs import REAL_HOME

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

# CI installs both (see .ci/run): there a missing tool must fail, never skip.
TOOLS_MISSING = (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get("CI")
needs_tools = pytest.mark.skipif(
    TOOLS_MISSING,
    reason="bwrap or socat not installed (Debian packages: bubblewrap, socat)",
)

CALC = {
    "command": sys.executable,
    "args": [str(Path(__file__).parents[1] / "mcp_servers" / "calc.py")],
    "env": {},
}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SandboxExecutor]:
    if TOOLS_MISSING:
        pytest.skip("bwrap or socat not installed (Debian packages: bubblewrap, socat)")
    root = tmp_path_factory.mktemp("sandbox")
    (root / "work").mkdir()
    executor = SandboxExecutor(working_dir=root / "work", images_dir=root / "images")
    await executor.start()
    yield executor
    await executor.stop()


def _on_host(path: Path) -> bool:
    return path.exists()


async def test_code_runs_and_keeps_state(ex: SandboxExecutor) -> None:
    assert isinstance(ex, Executor)
    await run(ex, "counter = 40")
    _, result = await run(ex, "counter += 2\nimport os\nprint(counter, os.getcwd())")
    assert result.text == f"42 {ex.working_dir}" and not result.is_error


async def test_output_streams_before_the_result(ex: SandboxExecutor) -> None:
    code = "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.3)"
    arrivals: list[tuple[float, object]] = []
    async for item in ex.stream(code):
        arrivals.append((time.monotonic(), item))
    chunks = [t for t, i in arrivals if isinstance(i, ExecChunk)]
    end, result = arrivals[-1]
    assert isinstance(result, ExecResult) and result.text == "0\n1\n2"
    assert end - chunks[0] > 0.4


async def test_shell_commands_need_approval(ex: SandboxExecutor) -> None:
    items, result = await run(ex, "!echo hi from $(pwd)")
    [approval] = approvals(items)
    assert approval.kind == "shell" and approval.command == "echo hi from $(pwd)"
    assert result.text == f"hi from {ex.working_dir}" and not result.is_error
    items, result = await run(ex, "%%bash\necho one", decide=False)
    assert approvals(items)[0].kind == "script"
    assert result.is_error and "ApprovalRejectedError" in result.text
    assert "one" not in result.text.splitlines()


async def test_writes_only_reach_the_working_dir(ex: SandboxExecutor) -> None:
    # The user's real home (tests run with a temporary HOME, which the sandbox does not see).
    home_file = REAL_HOME / f"sandbox-escape-{os.getpid()}"
    outside = ex.working_dir.parent / "escape.txt"
    for target in ("/root/x", str(home_file), "/usr/escape.txt"):
        _, result = await run(ex, f"open({target!r}, 'w')")
        assert result.is_error and "Read-only file system" in result.text, (target, result.text)
    assert not home_file.exists()
    # The working dir's parent and /tmp exist inside, but on a private tmpfs: nothing reaches the host.
    _, result = await run(ex, f"open({str(outside)!r}, 'w').write('x')\nopen('/tmp/private', 'w').write('x')")
    assert not result.is_error, result.text
    assert not _on_host(outside) and not _on_host(Path("/tmp/private"))
    _, result = await run(ex, "open('inside.txt', 'w').write('kept')\nprint(open('inside.txt').read())")
    assert result.text == "kept"
    assert (ex.working_dir / "inside.txt").read_text() == "kept"


async def test_network_is_unreachable(ex: SandboxExecutor) -> None:
    accepted: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        # The server is reachable from the host...
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
        await asyncio.sleep(0.1)
        assert accepted == [1]
        # ...but not from the sandbox, and neither is the outside world.
        code = (
            "import socket, urllib.request\n"
            f"for address in [('127.0.0.1', {port}), ('1.1.1.1', 80)]:\n"
            "    try:\n"
            "        socket.create_connection(address, timeout=3).close()\n"
            "        print('connected', address)\n"
            "    except OSError as e:\n"
            "        print('refused', type(e).__name__)\n"
            "try:\n"
            "    urllib.request.urlopen('http://example.com', timeout=3)\n"
            "except OSError as e:\n"
            "    print('refused', type(e).__name__)\n"
        )
        _, result = await run(ex, code)
        lines = result.text.splitlines()
        assert [line.split()[0] for line in lines] == ["refused"] * 3, result.text
        assert accepted == [1]
    finally:
        server.close()
        await server.wait_closed()


async def test_host_processes_are_invisible(ex: SandboxExecutor) -> None:
    marker = f"{os.getpid()}.5"
    host_process = await asyncio.create_subprocess_exec("sleep", marker)
    code = (
        "import os\ncmds = []\n"
        "for p in filter(str.isdigit, os.listdir('/proc')):\n"
        "    try:\n"
        "        cmds.append(open(f'/proc/{p}/cmdline', 'rb').read())\n"
        "    except OSError:\n"
        "        pass\n"
        f"print(os.getpid(), any({marker.encode()!r} in c for c in cmds), len(cmds) < 20)"
    )
    try:
        _, result = await run(ex, code)
    finally:
        host_process.kill()
        await host_process.wait()
    inner_pid, sees_host_process, few = result.text.split()
    assert (sees_host_process, few) == ("False", "True"), result.text
    # The executor watches the kernel by its host pid, not the one it reports inside.
    assert ex.kernel_pid is not None and ex.kernel_pid != int(inner_pid)
    assert "ipykernel" in " ".join(psutil.Process(ex.kernel_pid).cmdline())


async def test_image_is_saved(ex: SandboxExecutor) -> None:
    _, result = await run(ex, "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
    assert not result.is_error, result.text
    [png] = result.images
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


async def test_programmatic_mcp_call_crosses_the_bridge(ex: SandboxExecutor) -> None:
    ex.set_mcp_servers({"calc": CALC})
    code = (
        "import os\nfrom mcpygen.tool_exec.client import ToolRunner\n"
        f"runner = ToolRunner('calc', {CALC!r},"
        " host=os.environ['TOOL_SERVER_HOST'], port=int(os.environ['TOOL_SERVER_PORT']))\n"
        "print(runner.run_sync('add', {'a': 2, 'b': 3}))"
    )
    try:
        items, result = await run(ex, code)
        [approval] = approvals(items)
        assert (approval.kind, approval.server, approval.tool) == ("mcp", "calc", "add")
        assert not result.is_error and "5" in result.text, result.text
    finally:
        ex.set_mcp_servers(None)


@needs_tools
async def test_kernel_death_restart_and_stop_leave_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = descendants()
    socket_dirs = record_socket_dirs(monkeypatch)
    executor = SandboxExecutor(working_dir=tmp_path, images_dir=tmp_path / "images")
    try:
        await executor.start()
        await run(executor, "x = 1")
        old_pid = executor.kernel_pid
        _, died = await run(
            executor, "print('dying', flush=True)\nimport time\ntime.sleep(0.3)\nimport os\nos._exit(1)"
        )
        assert died.kernel_died and died.text.startswith("dying")
        _, after = await run(executor, "print('x' in dir())")
        assert after.text == "False"
        assert executor.kernel_pid not in (None, old_pid)

        # Killed from the host while idle: noticed through the mapped pid and replaced.
        restarting = asyncio.Event()
        executor.add_state_listener(lambda state, _: restarting.set() if state == "restarting" else None)
        victim = executor.kernel_pid
        assert victim is not None
        psutil.Process(victim).kill()
        await asyncio.wait_for(restarting.wait(), 5)
        _, after = await run(executor, "print('back')")
        assert after.text == "back"

        # Killing the gateway from inside ends the whole sandbox; the next cell gets a new one.
        old_gateway = executor.gateway_pid
        _, died = await run(
            executor, "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(5)"
        )
        assert died.kernel_died
        items, after = await run(executor, "!echo new sandbox")
        assert after.text == "new sandbox" and len(approvals(items)) == 1
        assert executor.gateway_pid != old_gateway and not psutil.pid_exists(old_gateway or 0)

        sleeper = asyncio.create_task(run(executor, "!sleep 60"))
        await until(
            lambda: {"bwrap", "socat", "sleep"} <= set(new_descendants(before).values()),
            "bwrap, socat and the approved `sleep` run below the test",
        )
    finally:
        await executor.stop()
    await asyncio.wait_for(sleeper, 5)
    await no_new_descendants(before)
    assert len(socket_dirs) == 2 and [d for d in socket_dirs if d.exists()] == []  # two sandboxes ran


@pytest.mark.parametrize(("kept", "named"), [((), "`bwrap` and `socat` are"), (("socat",), "`bwrap` is")])
async def test_missing_tool_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: tuple[str, ...], named: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in kept:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} not installed")
        (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    before = descendants()
    executor = create_executor("sandbox", working_dir=tmp_path)
    assert isinstance(executor, SandboxExecutor)
    states: list[str] = []
    executor.add_state_listener(lambda state, _: states.append(state))
    with pytest.raises(ExecutorError) as info:
        await executor.start()
    message = str(info.value)
    assert named in message and "apt-get install bubblewrap socat" in message
    assert states == ["starting", "failed"]
    # Never a silent fallback: no kernel was started.
    assert new_descendants(before) == {}


NO_NAMESPACES = """\
import asyncio, sys
from pathlib import Path
from freeact_tui.execution.isolation.sandbox import SandboxExecutor
from tests.scripted import Code, script

async def main() -> None:
    executor = SandboxExecutor(working_dir=Path(sys.argv[1]))
    try:
        await executor.start()
        print('started')
    except Exception as e:
        print(type(e).__name__, executor.state, e)
    finally:
        await executor.stop()

asyncio.run(main())
"""


@needs_tools
async def test_no_namespaces_is_a_clear_error(tmp_path: Path) -> None:
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    probe = await asyncio.create_subprocess_exec(bwrap, "--help", stdout=asyncio.subprocess.PIPE)
    if b"--disable-userns" not in (await probe.communicate())[0]:
        pytest.skip("this bwrap cannot forbid nested namespaces (needs bubblewrap >= 0.8)")
    # The executor runs in an outer sandbox that forbids new namespaces, as some containers do.
    outer = [bwrap, "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--unshare-user"]
    process = await asyncio.create_subprocess_exec(
        *outer,
        "--disable-userns",
        "--",
        sys.executable,
        "-c",
        NO_NAMESPACES,
        str(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output = (await asyncio.wait_for(process.communicate(), 60))[0].decode()
    assert output.startswith("ExecutorError failed bubblewrap cannot create a sandbox here (bwrap: "), output
    assert "user namespaces are not available" in output and "--execution local" in output


@needs_tools
async def test_agent_runs_code_actions_in_the_sandbox(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside.txt"
    code = f"open('made.txt', 'w').write('ok')\nopen({str(outside)!r}, 'w').write('x')\nopen('/root/escape.txt', 'w')"
    s = script([Code(code)], ["Done."])
    outputs: list[CodeExecutionOutput] = []
    async with Agent(
        s.model(),
        execution="sandbox",
        working_dir=work,
        sessions_dir=tmp_path / "sessions",
        enable_subagents=False,
    ) as agent:
        async for event in agent.stream("write two files"):
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(True)
            elif isinstance(event, CodeExecutionOutput):
                outputs.append(event)
    [output] = outputs
    assert output.is_error and "Read-only file system: '/root/escape.txt'" in (output.text or "")
    assert (work / "made.txt").read_text() == "ok" and not outside.exists()
    assert "Read-only file system" in s.last_tool_return()


async def test_interrupt_and_timeout(ex: SandboxExecutor) -> None:
    await check_interrupt_and_timeout(ex)
