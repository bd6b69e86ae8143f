"""KernelExecutor against a real ipybox kernel (gateway subprocess, in-process tool server)."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest
import pytest_asyncio

from freeact_tui.execution.base import ExecApproval, ExecChunk, ExecResult, Executor, ExecutorError
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.tools.server import bind_socket
from tests.executor_checks import approvals, descendants, new_descendants, no_new_descendants, run, until
from tests.user_dirs import REAL_HOME, IsolatedDirs

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

MCP_SERVER = """\
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("calc")

@mcp.tool()
def add(a: int, b: int) -> int:
    return a + b

mcp.run()
"""


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    root = tmp_path_factory.mktemp("kernel")
    (root / "work").mkdir()
    executor = KernelExecutor(working_dir=root / "work", images_dir=root / "images")
    await executor.start()
    yield executor
    await executor.stop()


async def test_is_an_executor(ex: KernelExecutor) -> None:
    assert isinstance(ex, Executor)
    assert ex.state in ("ready", "busy")


async def test_state_persists_across_cells(ex: KernelExecutor) -> None:
    await run(ex, "counter = 40")
    _, result = await run(ex, "counter += 2\nprint(counter)")
    assert result.text == "42"
    assert not result.is_error


async def test_chunks_stream_before_the_result(ex: KernelExecutor) -> None:
    code = "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.3)"
    arrivals: list[tuple[float, object]] = []
    async for item in ex.stream(code):
        arrivals.append((time.monotonic(), item))
    chunks = [(t, i) for t, i in arrivals if isinstance(i, ExecChunk)]
    end_time, result = arrivals[-1]
    assert isinstance(result, ExecResult) and result.text == "0\n1\n2"
    assert "".join(i.text for _, i in chunks) == "0\n1\n2\n"
    # The first line arrives while the cell still sleeps, not with the result.
    assert end_time - chunks[0][0] > 0.4


async def test_200_back_to_back_cells_lose_no_output(ex: KernelExecutor) -> None:
    lost = []
    for i in range(200):
        _, result = await run(ex, f"print('value-{i}')")
        if result.text != f"value-{i}":
            lost.append((i, result.text))
    assert lost == []


async def test_error_gives_traceback_and_is_error(ex: KernelExecutor) -> None:
    items, result = await run(ex, "print('partial')\n1/0")
    assert result.is_error
    assert result.text.startswith("partial")
    assert "ZeroDivisionError" in result.text and "1/0" in result.text
    assert any("ZeroDivisionError" in i.text for i in items if isinstance(i, ExecChunk))
    _, after = await run(ex, "print('still fine')")
    assert after.text == "still fine" and not after.is_error


async def test_matplotlib_figure_saved_as_png(ex: KernelExecutor, tmp_path: Path) -> None:
    _, result = await run(ex, "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
    assert not result.is_error, result.text
    assert len(result.images) == 1
    png = result.images[0]
    assert png.suffix == ".png" and png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


async def test_shell_command_needs_approval_and_runs_when_accepted(ex: KernelExecutor) -> None:
    items, result = await run(ex, "!echo hi")
    [approval] = approvals(items)
    assert approval.kind == "shell" and approval.command == "echo hi"
    assert result.text == "hi" and not result.is_error


async def test_rejected_shell_command_is_an_error(ex: KernelExecutor) -> None:
    # The traceback quotes the source line; only a run command would print "ran-2".
    items, result = await run(ex, "!echo ran-$((1+1))", decide=False)
    assert len(approvals(items)) == 1
    assert result.is_error
    assert "ApprovalRejectedError" in result.text and "ran-2" not in result.text


async def test_bash_cell_is_a_script_approval(ex: KernelExecutor) -> None:
    items, result = await run(ex, "%%bash\necho one\necho two")
    [approval] = approvals(items)
    assert approval.kind == "script" and approval.command.strip() == "echo one\necho two"
    assert result.text == "one\ntwo"


async def test_python_variables_are_expanded_in_the_approved_command(ex: KernelExecutor) -> None:
    items, result = await run(ex, "name = 'world'\n!echo hello {name}")
    assert approvals(items)[0].command == "echo hello world"
    assert result.text == "hello world"


async def test_output_before_a_command_comes_before_its_approval(ex: KernelExecutor) -> None:
    for i in range(5):
        items, _ = await run(ex, f"print('before-{i}')\n!echo after-{i}")
        first = next(n for n, x in enumerate(items) if isinstance(x, ExecApproval))
        # The kernel may send the printed line in more than one chunk.
        before = "".join(x.text for x in items[:first] if isinstance(x, ExecChunk))
        assert before == f"before-{i}\n", items


@pytest.mark.parametrize("code", ["import subprocess\nsubprocess.run(['ls'])", "import os\nos.system('ls')"])
async def test_direct_process_creation_is_refused(ex: KernelExecutor, code: str) -> None:
    items, result = await run(ex, code)
    assert approvals(items) == []
    assert result.is_error and "not allowed" in result.text


async def test_time_waiting_for_approval_does_not_count(ex: KernelExecutor) -> None:
    items, result = await run(ex, "!echo approved-late", limit=1.5, delay=2.0)
    assert len(approvals(items)) == 1
    assert not result.timed_out and not result.is_error
    assert result.text == "approved-late"


async def test_timeout_interrupts_a_slow_cell(ex: KernelExecutor) -> None:
    started = time.monotonic()
    _, result = await run(ex, "import time\nprint('started', flush=True)\ntime.sleep(5)", limit=1)
    assert time.monotonic() - started < 3
    assert result.timed_out and result.is_error
    assert result.text.startswith("started") and "timed out after 1s" in result.text
    _, after = await run(ex, "print('next')")
    assert after.text == "next"


async def test_interrupt_ends_the_cell_keeping_partial_output(ex: KernelExecutor) -> None:
    got: list[object] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for item in ex.stream("import time\nprint('partial', flush=True)\ntime.sleep(30)"):
            got.append(item)
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 10)
    started = time.monotonic()
    await ex.interrupt()
    await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 2
    result = got[-1]
    assert isinstance(result, ExecResult) and result.cancelled
    assert result.text.startswith("partial")
    _, after = await run(ex, "print('usable')")
    assert after.text == "usable"


async def test_cancelling_the_consumer_interrupts_the_kernel(ex: KernelExecutor) -> None:
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in ex.stream("import time\nprint('x', flush=True)\ntime.sleep(30)\nprint('not reached')"):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    started = time.monotonic()
    _, after = await run(ex, "print('after cancel')")
    assert after.text == "after cancel"
    # The sleeping cell was interrupted, not waited for.
    assert time.monotonic() - started < 5


async def test_cancel_while_approval_pending(ex: KernelExecutor) -> None:
    seen = asyncio.Event()

    async def consume() -> None:
        async for item in ex.stream("!echo never"):
            if isinstance(item, ExecApproval):
                seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    _, after = await run(ex, "print('free again')")
    assert after.text == "free again"


async def test_programmatic_mcp_call_needs_approval(
    ex: KernelExecutor, tmp_path: Path, user_dirs: IsolatedDirs
) -> None:
    server = tmp_path / "calc_server.py"
    server.write_text(MCP_SERVER)
    params = {"command": sys.executable, "args": [str(server)]}
    ex.set_mcp_servers({"calc": params})
    code = (
        "import os\nfrom mcpygen.tool_exec.client import ToolRunner\n"
        f"runner = ToolRunner('calc', {params!r},"
        " host=os.environ['TOOL_SERVER_HOST'], port=int(os.environ['TOOL_SERVER_PORT']))\n"
        "print(runner.run_sync('add', {'a': 2, 'b': 3}))"
    )
    try:
        items, result = await run(ex, code)
        [approval] = approvals(items)
        assert (approval.kind, approval.server, approval.tool, approval.args) == (
            "mcp",
            "calc",
            "add",
            {"a": 2, "b": 3},
        )
        assert not result.is_error, result.text
        assert "5" in result.text
        # The server's stderr log lands in the test session's directories, never the user's.
        assert (ex.log_dir / "mcp-calc.log").is_file() and ex.log_dir.is_relative_to(user_dirs.root)
        items, result = await run(ex, "runner.run_sync('add', {'a': 1, 'b': 1})", decide=False)
        assert result.is_error and "rejected" in result.text
    finally:
        ex.set_mcp_servers(None)


async def test_kernel_files_stay_in_the_test_dirs(ex: KernelExecutor, user_dirs: IsolatedDirs) -> None:
    code = (
        "import ipykernel.connect, os\n"
        "print(ipykernel.connect.get_connection_file())\n"
        "print(get_ipython().profile_dir.location)\n"
        "print(os.path.expanduser('~'))"
    )
    _, result = await run(ex, code)
    connection_file, profile_dir, home = map(Path, result.text.splitlines())
    assert connection_file.is_file(), result.text
    for path in (connection_file, profile_dir, home):
        assert path.is_relative_to(user_dirs.root) and not path.is_relative_to(REAL_HOME), path


async def test_start_error_names_the_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        executor = KernelExecutor(working_dir=tmp_path, tool_server_port=port)
        states: list[str] = []
        executor.add_state_listener(lambda state, detail: states.append(state))
        with pytest.raises(ExecutorError, match=f"127.0.0.1:{port}"):
            await executor.start()
        assert states == ["starting", "failed"]


async def test_a_fixed_port_can_be_bound_again_right_after_its_connections_closed() -> None:
    # The server side closing first leaves a TIME_WAIT on the port: without SO_REUSEADDR the
    # next bind would fail for ~60 s.
    first = bind_socket("127.0.0.1", 0, "tool server")
    port = first.getsockname()[1]
    first.listen()
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = first.accept()
    accepted.close()
    client.recv(1)
    client.close()
    first.close()
    again = bind_socket("127.0.0.1", port, "tool server")
    assert again.getsockname()[1] == port
    again.close()


async def test_executor_with_fixed_tool_server_port_restarts_at_once(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for attempt in range(2):
        executor = KernelExecutor(working_dir=tmp_path, tool_server_port=port)
        started = time.monotonic()
        await executor.start()
        try:
            _, result = await run(executor, f"print({attempt} + 1)")
            assert result.text == str(attempt + 1)
        finally:
            await executor.stop()
        assert time.monotonic() - started < 60


async def test_missing_working_dir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ExecutorError, match="Working directory does not exist"):
        await KernelExecutor(working_dir=tmp_path / "nope").start()


async def test_kernel_death_restart_and_stop_without_orphans(tmp_path: Path) -> None:
    before = descendants()
    executor = KernelExecutor(working_dir=tmp_path)
    try:
        await _death_restart_and_stop(executor, before)
    finally:
        await executor.stop()


async def _death_restart_and_stop(executor: KernelExecutor, before: set[int]) -> None:
    states: list[tuple[str, str]] = []
    restarting = asyncio.Event()

    def on_state(state: str, detail: str) -> None:
        states.append((state, detail))
        if state == "restarting":
            restarting.set()

    executor.add_state_listener(on_state)
    await executor.start()
    assert [s for s, _ in states] == ["starting", "ready"]
    # Submitted right away: queues behind the warm-up instead of failing.
    items, result = await run(executor, "!echo warm")
    assert result.text == "warm" and len(approvals(items)) == 1

    for code in ("import os\nos._exit(1)", "import ctypes\nctypes.string_at(0)"):
        await run(executor, "x = 1\nprint('before death', flush=True)\nimport time\ntime.sleep(0.3)")
        old_pid = executor.kernel_pid
        states.clear()
        _, died = await run(executor, "print('dying', flush=True)\nimport time\ntime.sleep(0.3)\n" + code)
        assert died.kernel_died and died.is_error
        assert died.text.startswith("dying") and "kernel died" in died.text
        _, after = await run(executor, "print('x' in dir())")
        assert after.text == "False" and not after.is_error
        assert executor.kernel_pid not in (None, old_pid)
        assert old_pid is not None and not psutil.pid_exists(old_pid)
        assert [s for s, _ in states][:3] == ["busy", "restarting", "ready"]

    # A kernel killed from outside while idle is replaced too.
    victim = executor.kernel_pid
    assert victim is not None
    restarting.clear()
    psutil.Process(victim).kill()
    await asyncio.wait_for(restarting.wait(), 5)
    _, after = await run(executor, "print('back')")
    assert after.text == "back" and executor.kernel_pid != victim

    # A running `!sleep` grandchild must not outlive stop().
    async def sleeper() -> None:
        await run(executor, "!sleep 60")

    task = asyncio.create_task(sleeper())
    await until(lambda: "sleep" in new_descendants(before).values(), "the approved `sleep` runs")
    assert len(new_descendants(before)) >= 3  # gateway, kernel, sleep (+ shell)
    await executor.stop()
    await asyncio.wait_for(task, 5)
    assert executor.state == "stopped"
    await no_new_descendants(before)
    with pytest.raises(ExecutorError):
        await run(executor, "print(1)")


async def test_reset_loses_state(ex: KernelExecutor) -> None:
    await run(ex, "kept = 1")
    await ex.reset()
    _, result = await run(ex, "print('kept' in dir())")
    assert result.text == "False"
    items, result = await run(ex, "!echo after-reset")
    assert result.text == "after-reset" and len(approvals(items)) == 1
