"""DockerExecutor against a real Docker daemon, a locally built image and an ipybox kernel.

The daemon is not always there (it needs `apt-get install docker.io` and a running `dockerd`):
without one these tests skip, saying why, except under CI (``CI`` set), where they must run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest
import pytest_asyncio

from freeact_tui.execution import create_executor
from freeact_tui.execution.base import ExecChunk, ExecResult, ExecutorError
from freeact_tui.execution.isolation.docker import DockerExecutor, main
from freeact_tui.execution.isolation.docker_image import build_image
from tests.executor_checks import approvals, check_interrupt_and_timeout, record_socket_dirs, run
from tests.helpers import IMAGE, docker_problem

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

CALC = {
    "command": sys.executable,
    "args": [str(Path(__file__).parents[1] / "mcp_servers" / "calc.py")],
    "env": {},
}


DAEMON_PROBLEM = docker_problem()
needs_daemon = pytest.mark.skipif(
    DAEMON_PROBLEM is not None and not os.environ.get("CI"), reason=f"Docker unavailable: {DAEMON_PROBLEM}"
)


def _containers(name: str) -> list[str]:
    done = subprocess.run(
        ["docker", "ps", "--all", "--quiet", "--filter", f"name=^{name}$"], capture_output=True, text=True
    )
    return done.stdout.split()


def _limits(name: str) -> list[str]:
    fields = "{{.HostConfig.Memory}} {{.HostConfig.PidsLimit}} {{.HostConfig.NetworkMode}}"
    done = subprocess.run(["docker", "inspect", "--format", fields, name], capture_output=True, text=True)
    return done.stdout.split()


def _exists(path: Path) -> bool:
    return path.exists()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def image() -> str:
    if DAEMON_PROBLEM is not None and not os.environ.get("CI"):
        pytest.skip(f"Docker unavailable: {DAEMON_PROBLEM}")
    await build_image(IMAGE)
    return IMAGE


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(image: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DockerExecutor]:
    root = tmp_path_factory.mktemp("docker")
    (root / "work").mkdir()
    executor = DockerExecutor(working_dir=root / "work", images_dir=root / "images", image=image)
    await executor.start()
    yield executor
    await executor.stop()


async def test_code_runs_in_the_container_and_keeps_state(ex: DockerExecutor) -> None:
    _, result = await run(ex, "x = 41\nimport os\nprint(os.getcwd(), os.path.exists('/.dockerenv'))")
    assert result.text == f"{ex.working_dir} True" and not result.is_error
    _, result = await run(ex, "print(x + 1)")
    assert result.text == "42"
    assert _limits(str(ex.container_name)) == [str(4 << 30), "1024", "none"]


async def test_output_streams_before_the_result(ex: DockerExecutor) -> None:
    seen: list[tuple[float, str]] = []
    async for item in ex.stream(
        "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.4)"
    ):
        if isinstance(item, ExecChunk):
            seen.append((time.monotonic(), item.text))
        elif isinstance(item, ExecResult):
            end = time.monotonic()
            assert item.text == "0\n1\n2"
    assert len(seen) >= 3 and end - seen[0][0] > 0.6


async def test_shell_commands_need_approval(ex: DockerExecutor) -> None:
    items, result = await run(ex, "!echo hello from docker")
    [approval] = approvals(items)
    assert (approval.kind, approval.command) == ("shell", "echo hello from docker")
    assert result.text == "hello from docker"
    items, result = await run(ex, "!touch refused.txt", decide=False)
    assert len(approvals(items)) == 1 and not (ex.working_dir / "refused.txt").exists()


async def test_writes_only_reach_the_working_dir(ex: DockerExecutor) -> None:
    _, result = await run(ex, "open('made.txt', 'w').write('ok')\nopen('/etc/escape', 'w')")
    assert (ex.working_dir / "made.txt").read_text() == "ok"
    assert result.is_error and "Read-only file system: '/etc/escape'" in result.text
    _, result = await run(ex, f"open({sys.prefix + '/escape'!r}, 'w')")
    assert result.is_error and "Read-only file system" in result.text
    assert not _exists(Path(sys.prefix, "escape"))


async def test_network_is_unreachable(ex: DockerExecutor) -> None:
    _, result = await run(
        ex,
        "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\nexcept OSError as e:\n    print(e)",
    )
    assert "Network is unreachable" in result.text, result.text


async def test_programmatic_mcp_call_crosses_the_bridge(ex: DockerExecutor) -> None:
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


@needs_daemon
async def test_kernel_death_restart_and_stop_remove_the_container(
    image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    socket_dirs = record_socket_dirs(monkeypatch)
    executor = DockerExecutor(working_dir=tmp_path, images_dir=tmp_path / "images", image=image)
    names: list[str] = []
    try:
        await executor.start()
        assert executor.container_name is not None
        names.append(executor.container_name)
        await run(executor, "x = 1")
        old_pid = executor.kernel_pid
        _, died = await run(
            executor, "print('dying', flush=True)\nimport time\ntime.sleep(0.3)\nimport os\nos._exit(1)"
        )
        assert died.kernel_died and died.text.startswith("dying")
        _, after = await run(executor, "print('x' in dir())")
        assert after.text == "False" and executor.kernel_pid not in (None, old_pid)

        # Killed from the host while idle: noticed through the mapped pid and replaced.
        restarting = asyncio.Event()
        executor.add_state_listener(lambda state, _: restarting.set() if state == "restarting" else None)
        psutil.Process(executor.kernel_pid).kill()
        await asyncio.wait_for(restarting.wait(), 5)
        _, after = await run(executor, "print('back')")
        assert after.text == "back"

        # Killing the gateway from inside ends the container; the next cell gets a new one.
        _, died = await run(
            executor, "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(5)"
        )
        assert died.kernel_died
        items, after = await run(executor, "!echo new container")
        assert after.text == "new container" and len(approvals(items)) == 1
        assert executor.container_name not in (None, names[0]) and _containers(names[0]) == []
        names.append(str(executor.container_name))
        assert len(_containers(names[1])) == 1
    finally:
        await executor.stop()
    assert executor.state == "stopped" and executor.container_name is None
    assert [_containers(n) for n in names] == [[], []]
    assert len(socket_dirs) == 2 and [d for d in socket_dirs if d.exists()] == []  # two containers ran


@needs_daemon
async def test_missing_image_is_a_clear_error(tmp_path: Path) -> None:
    executor = DockerExecutor(working_dir=tmp_path, image="freeact-tui-no-such-image:never")
    with pytest.raises(
        ExecutorError,
        match="does not exist: build it with `python -m freeact_tui.execution.isolation.docker build-image`",
    ):
        await executor.start()
    assert executor.state == "failed" and executor.container_name is None


async def test_missing_docker_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    executor = DockerExecutor(working_dir=tmp_path)
    with pytest.raises(ExecutorError, match=r"needs the `docker` command.*apt-get install docker.io"):
        await executor.start()
    assert executor.state == "failed"
    assert main(["build-image"]) == 1


@pytest.mark.skipif(shutil.which("docker") is None, reason="the docker CLI is not installed")
async def test_unreachable_daemon_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    executor = DockerExecutor(working_dir=tmp_path)
    with pytest.raises(ExecutorError, match=r"Docker daemon is not reachable .*start the daemon"):
        await executor.start()
    assert executor.state == "failed"


async def test_create_executor_builds_a_docker_executor(tmp_path: Path) -> None:
    executor = create_executor("docker", working_dir=tmp_path, docker_image="my/kernel:1")
    assert isinstance(executor, DockerExecutor) and executor.image == "my/kernel:1"
    executor = create_executor("docker", working_dir=tmp_path)
    assert isinstance(executor, DockerExecutor) and executor.image == "freeact-tui-kernel:latest"


async def test_agent_runs_its_code_actions_in_docker(image: str, tmp_path: Path) -> None:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.events import ApprovalRequest, CodeExecutionOutput
    from freeact_tui.permissions.rules import PermissionRules
    from tests.scripted import Code, script

    s = script([Code("import os\nprint(os.path.exists('/.dockerenv'), os.getcwd())")], ["done"])
    agent = Agent(
        s.model(),
        working_dir=tmp_path,
        execution="docker",
        docker_image=image,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
    )
    outputs: list[str] = []
    async with agent:
        async for event in agent.stream("where am I?"):
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(True)
            if isinstance(event, CodeExecutionOutput):
                outputs.append(event.text or "")
    assert outputs == [f"True {tmp_path}"]


async def test_interrupt_and_timeout(ex: DockerExecutor) -> None:
    await check_interrupt_and_timeout(ex)


async def test_no_process_of_the_container_holds_the_gateway_token(ex: DockerExecutor) -> None:
    """The gateway's key goes on its stdin (#42): every process of the container can read the others'
    environments, and the kernels in it run code unasked in sandboxed-like modes."""
    code = (
        "import glob\n"
        "for p in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n"
        "        print(open(p, 'rb').read().decode(errors='replace'))\n"
        "    except OSError:\n"
        "        pass\n"
    )
    _, result = await run(ex, code)
    token = ex._gateway.token if ex._gateway is not None else ""  # noqa: SLF001
    assert token and token not in result.text
    assert "FREEACT_GATEWAY_TOKEN" not in result.text
