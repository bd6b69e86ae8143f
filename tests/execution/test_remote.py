"""RemoteExecutor against a real `jupyter kernelgateway` that the tests start as the "remote" side."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution import create_executor
from freeact_tui.execution.base import ExecChunk, ExecResult, ExecutorError
from freeact_tui.execution.gateway.remote import RemoteExecutor
from tests.executor_checks import approvals, check_interrupt_and_timeout, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.load(resp)


def _kernel_ids(url: str) -> list[str]:
    kernels = _get(f"{url}/api/kernels")
    assert isinstance(kernels, list)
    return [k["id"] for k in kernels]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A kernel gateway with its defaults (autorestart on), as someone else would run it."""
    port = _free_port()
    log = tmp_path_factory.mktemp("gateway") / "gateway.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "kernel_gateway", "--KernelGatewayApp.ip=127.0.0.1",
             f"--KernelGatewayApp.port={port}", "--JupyterWebsocketPersonality.list_kernels=True",
             "--KernelRestarter.time_to_dead=1"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            _get(f"{url}/api")
            break
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
    yield url
    process.terminate()
    process.wait(10)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(gateway: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RemoteExecutor]:
    root = tmp_path_factory.mktemp("remote")
    (root / "work").mkdir()
    executor = RemoteExecutor(
        remote_url=gateway,
        working_dir=root / "work",
        images_dir=root / "images",
        kernel_env={"GREETING": "hi there"},
    )
    await executor.start()
    yield executor
    await executor.stop()


async def test_code_runs_remotely_with_our_environment(ex: RemoteExecutor, gateway: str) -> None:
    assert ex.kernel_id in _kernel_ids(gateway) and ex.gateway_pid is None
    _, result = await run(
        ex, "x = 41\nimport os\nprint(os.getcwd(), os.environ['GREETING'], os.environ['KERNEL_GATEWAY'])"
    )
    assert result.text == f"{ex.working_dir} hi there 1" and not result.is_error
    _, result = await run(ex, "print(x + 1, os.environ.get('TOOL_SERVER_PORT'))")
    assert result.text == "42 None"  # approvals travel in-band: the kernel needs no address of ours


async def test_output_streams_before_the_result(ex: RemoteExecutor) -> None:
    seen: list[float] = []
    async for item in ex.stream(
        "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.4)"
    ):
        if isinstance(item, ExecChunk):
            seen.append(time.monotonic())
        elif isinstance(item, ExecResult):
            end = time.monotonic()
            assert item.text == "0\n1\n2"
    assert len(seen) >= 3 and end - seen[0] > 0.6


async def test_shell_commands_need_approval(ex: RemoteExecutor) -> None:
    items, result = await run(ex, "!echo hello remote")
    [approval] = approvals(items)
    assert (approval.kind, approval.command) == ("shell", "echo hello remote")
    assert result.text == "hello remote"
    items, result = await run(ex, "!touch refused.txt", decide=False)
    assert len(approvals(items)) == 1 and not _exists(ex.working_dir / "refused.txt")


async def test_kernel_death_restart_and_stop_delete_the_kernel(gateway: str, tmp_path: Path) -> None:
    executor = RemoteExecutor(remote_url=gateway, working_dir=tmp_path, images_dir=tmp_path / "images")
    try:
        await executor.start()
        first = executor.kernel_id
        await run(executor, "x = 1")
        _, died = await run(
            executor, "print('dying', flush=True)\nimport time\ntime.sleep(0.3)\nimport os\nos._exit(1)"
        )
        assert died.kernel_died and died.text.startswith("dying")
        # A fresh kernel with our init code: state gone, approvals work again.
        items, after = await run(executor, "print('x' in dir())\n!echo again")
        assert after.text == "False\nagain" and len(approvals(items)) == 1
        second = executor.kernel_id
        assert second not in (None, first)
        ids = _kernel_ids(gateway)
        assert second in ids and first not in ids
    finally:
        await executor.stop()
    assert executor.state == "stopped" and second not in _kernel_ids(gateway)


async def test_unreachable_gateway_is_a_clear_error(tmp_path: Path) -> None:
    executor = RemoteExecutor(remote_url=f"http://127.0.0.1:{_free_port()}", working_dir=tmp_path)
    with pytest.raises(
        ExecutorError,
        match=r"Cannot reach the Jupyter gateway at http://127\.0\.0\.1:\d+ .*remote_url",
    ):
        await executor.start()
    assert executor.state == "failed"


@pytest.mark.parametrize("url", ["ftp://gw:8888", "gw:8888", "http://:80", "http://h:x"])
async def test_bad_url_is_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(ExecutorError, match=r"remote_url must look like http\(s\)://HOST"):
        RemoteExecutor(remote_url=url, working_dir=tmp_path)
    with pytest.raises(ExecutorError, match="remote_url must look like"):
        create_executor("remote", working_dir=tmp_path, remote_url=url)


async def test_create_executor_needs_a_remote_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUPYTER_GATEWAY_URL", raising=False)
    with pytest.raises(ExecutorError, match="set remote_url in the config or JUPYTER_GATEWAY_URL"):
        create_executor("remote", working_dir=tmp_path)
    executor = create_executor("remote", working_dir=tmp_path, remote_url="http://127.0.0.1:8888")
    assert isinstance(executor, RemoteExecutor) and executor.remote_url == "http://127.0.0.1:8888"


def _exists(path: Path) -> bool:
    return path.exists()


async def test_interrupt_and_timeout(ex: RemoteExecutor) -> None:
    await check_interrupt_and_timeout(ex)
