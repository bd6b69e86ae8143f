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
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution.remote import RemoteExecutor
from tests.executor_checks import approvals, run
from tests.tls_gateway import Gateway, tls_gateway

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600), pytest.mark.asyncio(loop_scope="module")]

TOKEN = "eg-docker-token-8c2a"  # noqa: S105 - a test token
IMAGE = "freeact-eg-kernel:pytest"
KERNEL = "freeact_docker"
# The kernel's working directory must exist in the container (as in a pod).
WORK = Path("/tmp")


def _daemon_problem() -> str | None:
    from tests.test_docker import DAEMON_PROBLEM

    return DAEMON_PROBLEM


def _kernel_containers() -> list[dict[str, str]]:
    done = subprocess.run(
        ["docker", "ps", "--all", "--filter", "label=app=enterprise-gateway", "--format", "{{json .}}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()]


def _bridge_gateway() -> str:
    """The host's address on Docker's default bridge: where kernels in containers reach EG."""
    done = subprocess.run(
        ["docker", "network", "inspect", "bridge", "--format", "{{(index .IPAM.Config 0).Gateway}}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    problem = _daemon_problem()
    if problem is not None and not os.environ.get("CI"):
        pytest.skip(f"Docker unavailable: {problem}")
    from tests.eg_kernel_image import build_kernel_image
    from tests.enterprise_gateway import enterprise_gateway_python, gateway_env, launchers, write_kernelspec

    build_kernel_image(IMAGE)
    directory = tmp_path_factory.mktemp("eg-docker")
    # EG's python_docker kernel spec, with DockerProcessProxy (not swarm) and our image.
    write_kernelspec(
        directory,
        KERNEL,
        {
            "display_name": "freeact (Docker)",
            "language": "python",
            "metadata": {
                "process_proxy": {
                    "class_name": "enterprise_gateway.services.processproxies.docker_swarm.DockerProcessProxy",
                    "config": {"image_name": IMAGE},
                }
            },
            "env": {},
            "argv": [str(enterprise_gateway_python()), str(launchers() / "docker" / "scripts" / "launch_docker.py"),
                     "--RemoteProcessProxy.kernel-id", "{kernel_id}",
                     "--RemoteProcessProxy.port-range", "{port_range}",
                     "--RemoteProcessProxy.response-address", "{response_address}",
                     "--RemoteProcessProxy.public-key", "{public_key}"],
        },
    )  # fmt: skip
    env = gateway_env(directory)
    env.update(
        EG_DOCKER_NETWORK="bridge",
        EG_RESPONSE_IP=_bridge_gateway(),  # the container's way back to EG
        EG_KERNEL_LAUNCH_TIMEOUT="120",
        EG_INHERITED_ENVS="PATH",  # launch_docker.py needs it (EG's Helm chart sets the same)
    )
    with tls_gateway(directory, TOKEN, kind="enterprise-gateway", env=env, kernel=KERNEL) as gw:
        yield gw
    # Kernels still running when EG stops are its to end; leave no container behind either way.
    for container in _kernel_containers():
        subprocess.run(["docker", "rm", "-f", container["ID"]], capture_output=True)


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
    [container] = [c for c in _kernel_containers() if ex.kernel_id and ex.kernel_id in c["Names"]]
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
    server = Path(__file__).parent / "mcp_servers" / "calc.py"
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
        results = await asyncio.gather(*(run(e, "import socket; print(socket.gethostname())") for e in executors))
        hosts = [r.text for _, r in results]
        assert hosts == [f"{getpass.getuser()}-{i}" for i in ids]
    finally:
        await asyncio.gather(*(e.stop() for e in executors))
    left = [c["Names"] for c in _kernel_containers() if any(i and i in c["Names"] for i in ids)]
    assert left == [] and not set(ids) & set(gateway.kernel_ids())
