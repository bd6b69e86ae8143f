"""Enterprise Gateway starting each kernel in a container, as it starts pods on Kubernetes.

A stock `jupyter enterprisegateway` 3.3.0 (TLS, token, base path) with a kernel spec whose process
proxy is EG's ``DockerProcessProxy``: EG runs its ``launch_docker.py``, which starts a container from
a kernel image built here (``tests/eg_kernel_image.py``, no pulls); in the container EG's
``bootstrap-kernel.sh`` runs EG's ``launch_ipykernel.py``, which sends the kernel's connection info
back to EG's response address, and EG talks to the kernel over ZeroMQ at the container's address.
The app's remote mode is the client, unchanged.

Needs a Docker daemon (skips without one, except under CI) and the package index the first time
(EG's environment, its source distribution for the launchers, the kernel image's packages).
"""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.gateway.remote import RemoteExecutor
from tests.eg_kernel_image import kernel_containers as _kernel_containers
from tests.executor_checks import approvals, run
from tests.tls_gateway import Gateway

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600), pytest.mark.asyncio(loop_scope="module")]

TOKEN = "eg-docker-token-8c2a"  # noqa: S105 - a test token
IMAGE = "freeact-eg-kernel:pytest"
# The kernel's working directory must exist in the container (as in a pod).
WORK = Path("/tmp")


def _daemon_problem() -> str | None:
    from tests.helpers import docker_problem

    return docker_problem()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    problem = _daemon_problem()
    if problem is not None and not os.environ.get("CI"):
        pytest.skip(f"Docker unavailable: {problem}")
    from tests.eg_kernel_image import docker_enterprise_gateway

    with docker_enterprise_gateway(tmp_path_factory.mktemp("eg-docker"), TOKEN, IMAGE) as gw:
        yield gw


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(gateway: Gateway) -> AsyncIterator[RemoteExecutor]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_GATEWAY_AUTH_TOKEN", TOKEN)
        mp.setenv("JUPYTER_GATEWAY_CA_CERTS", str(gateway.ca))
        executor = RemoteExecutor(remote_url=gateway.url, working_dir=WORK, kernel_env={"GREETING": "hi"})
    executor.kernel_init_timeout = 180.0
    await executor.start()
    yield executor
    await executor.stop()


async def test_code_runs_in_a_kernel_container_started_by_eg(ex: RemoteExecutor, gateway: Gateway) -> None:
    assert ex.kernel_id in gateway.kernel_ids()
    [container] = [c for c in _kernel_containers(gateway) if ex.kernel_id and ex.kernel_id in c["Names"]]
    assert container["Image"] == IMAGE and container["State"] == "running"
    code = (
        "import os, socket, sys\n"
        "print(os.path.exists('/.dockerenv'), socket.gethostname(), os.getuid(), sys.version_info[:2] >= (3, 11))\n"
        "print(os.getcwd(), os.environ['GREETING'], os.environ['KERNEL_USERNAME'], os.environ['KERNEL_ID'])"
    )
    _, result = await run(ex, code)
    assert not result.is_error, result.text
    # In the container EG named <KERNEL_USERNAME>-<kernel id>, as uid 1000 (EG's default KERNEL_UID).
    user = getpass.getuser()
    assert result.text.splitlines() == [
        f"True {user}-{ex.kernel_id} 1000 True",
        f"{WORK} hi {user} {ex.kernel_id}",
    ]


async def test_shell_approval_and_tool_call_travel_in_band_from_the_container(ex: RemoteExecutor) -> None:
    items, result = await run(ex, "print('before', flush=True)\n!echo from the container; id -u")
    [approval] = approvals(items)
    assert approval.command == "echo from the container; id -u"
    assert result.text == "before\nfrom the container\n1000"
    _, result = await run(ex, "!touch /tmp/refused", decide=False)
    assert "rejected" in result.text
    _, result = await run(ex, "import os; print(os.path.exists('/tmp/refused'))")
    assert result.text == "False"
    # A programmatic MCP call: the server runs here, the kernel in the container asks in-band.
    server = Path(__file__).parents[1] / "mcp_servers" / "calc.py"
    params = {"command": sys.executable, "args": [str(server)]}
    ex.set_mcp_servers({"calc": params})
    try:
        code = (
            "from mcpygen.tool_exec.client import ToolRunner\n"
            f"print(ToolRunner('calc', {params!r}).run_sync('add', {{'a': 20, 'b': 22}}))"
        )
        items, result = await run(ex, code)
        [approval] = approvals(items)
        assert (approval.server, approval.tool) == ("calc", "add")
        assert not result.is_error and "42" in result.text, result.text
    finally:
        ex.set_mcp_servers(None)


async def test_parallel_kernels_get_their_own_containers_and_are_removed(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As for subagents: each executor gets its own kernel container; all are gone after stop."""
    monkeypatch.setenv("JUPYTER_GATEWAY_AUTH_TOKEN", TOKEN)
    monkeypatch.setenv("JUPYTER_GATEWAY_CA_CERTS", str(gateway.ca))
    executors = [RemoteExecutor(remote_url=gateway.url, working_dir=WORK) for _ in range(2)]
    for executor in executors:
        executor.kernel_init_timeout = 180.0
    ids: list[str | None] = []
    try:
        await asyncio.gather(*(e.start() for e in executors))
        ids = [e.kernel_id for e in executors]
        results = await asyncio.gather(
            *(run(e, "import socket; print(socket.gethostname())") for e in executors)
        )
        hosts = [r.text for _, r in results]
        assert hosts == [f"{getpass.getuser()}-{i}" for i in ids]
    finally:
        await asyncio.gather(*(e.stop() for e in executors))
    left = [c["Names"] for c in _kernel_containers(gateway) if any(i and i in c["Names"] for i in ids)]
    assert left == [] and not set(ids) & set(gateway.kernel_ids())


async def test_a_kernel_that_cannot_be_launched_is_a_clear_error(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    # KERNEL_* variables of this environment go with the request (as Jupyter's gateway client
    # sends them): EG takes KERNEL_IMAGE as the image, and there is no such image here.
    monkeypatch.setenv("KERNEL_IMAGE", "freeact-eg-kernel:absent")
    monkeypatch.setenv("JUPYTER_GATEWAY_AUTH_TOKEN", TOKEN)
    monkeypatch.setenv("JUPYTER_GATEWAY_CA_CERTS", str(gateway.ca))
    before = gateway.kernel_ids()
    executor = RemoteExecutor(remote_url=gateway.url, working_dir=WORK)
    with pytest.raises(
        ExecutorError,
        match=r"answered 500 while trying to start a kernel: Error occurred during launch of KernelID: .*"
        r"On Enterprise Gateway, check the kernel spec, its image and EG_KERNEL_LAUNCH_TIMEOUT",
    ):
        await executor.start()
    assert executor.state == "failed" and gateway.kernel_ids() == before


async def test_a_kernel_launch_that_takes_too_long_is_a_clear_error_and_given_up(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A container takes a second or more to launch and the kernel to start; the client waits 1 s and
    # tells EG (KERNEL_LAUNCH_TIMEOUT) to stop trying after as long. A kernel EG started all the same
    # is deleted once EG names it: none is left running for nobody.
    monkeypatch.setenv("JUPYTER_GATEWAY_REQUEST_TIMEOUT", "1")
    monkeypatch.setenv("JUPYTER_GATEWAY_AUTH_TOKEN", TOKEN)
    monkeypatch.setenv("JUPYTER_GATEWAY_CA_CERTS", str(gateway.ca))
    before, containers = gateway.kernel_ids(), {c["ID"] for c in _kernel_containers(gateway)}
    executor = RemoteExecutor(remote_url=gateway.url, working_dir=WORK)
    with pytest.raises(
        ExecutorError,
        match=r"did not start in the Jupyter gateway at https://127\.0\.0\.1:\d+/eg within 1s: "
        r"set JUPYTER_GATEWAY_REQUEST_TIMEOUT to wait longer .*EG_KERNEL_LAUNCH_TIMEOUT",
    ):
        await executor.start()
    await executor.stop()
    deadline = asyncio.get_running_loop().time() + 60
    while gateway.kernel_ids() != before or {c["ID"] for c in _kernel_containers(gateway)} - containers:
        assert asyncio.get_running_loop().time() < deadline, (
            gateway.kernel_ids(),
            _kernel_containers(gateway),
        )
        await asyncio.sleep(0.5)
