"""The spare kernel gateway spawned at launch (``execution/kernel/spare_gateway.py``): taken by the first local
kernel, locked down as the gateway itself, and never left behind, whenever the app ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import psutil
import pytest

from freeact_tui.cli.entry import starts_local_app
from freeact_tui.execution.base import ExecResult
from freeact_tui.execution.kernel import spare_gateway
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.kernel.spare_gateway import INHERITED_ENV
from freeact_tui.execution.orphans import OWNER_ENV
from tests.helpers import ORPHAN_LIMIT

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def spare() -> Iterator[spare_gateway.SpareGateway]:
    """A spare spawned by this process, as the command line spawns it; discarded after the test."""
    spare_gateway.spawn()
    taken = spare_gateway._spare
    assert taken is not None
    yield taken
    spare_gateway.discard()


async def _run(ex: KernelExecutor, code: str) -> ExecResult:
    results = [item async for item in ex.stream(code) if isinstance(item, ExecResult)]
    assert len(results) == 1
    return results[0]


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().partition("=")[::2] for item in raw if item)


def _gone(pid: int, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], True),
        (["--model", "test"], True),
        (["-m", "openai:gpt-4o", "--trust", "--resume"], True),
        (["--execution", "local", "--model=test"], True),
        (["--execution=docker"], False),
        (["-e", "sandbox"], False),
        (["--sandbox"], False),
        (["--version"], False),
        (["--help"], False),
        (["sessions", "list"], False),
        (["--model", "test", "run", "hello"], False),
        (["acp"], False),
        (["--unknown-option"], False),
    ],
)
def test_only_a_command_line_that_starts_the_app_locally_spawns_a_spare(
    argv: list[str], expected: bool
) -> None:
    assert starts_local_app(argv) is expected


async def test_the_first_local_kernel_takes_the_spare(
    spare: spare_gateway.SpareGateway, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    pid = spare.process.pid
    # Parked: nothing of the working dir or of the user's variables, no token, no project.
    env = _environ(pid)
    assert set(env) <= {*INHERITED_ENV, "PYTHONSAFEPATH", "PYDEVD_DISABLE_FILE_VALIDATION", OWNER_ENV}, env
    assert env["PYTHONSAFEPATH"] == "1"
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    assert "-P" in psutil.Process(pid).cmdline()
    ex = KernelExecutor(
        working_dir=work,
        images_dir=work / "images",
        kernel_env={"FREEACT_SPARE_PROBE": "given"},
        warm_up=False,
    )
    try:
        await ex.start()
        assert ex.gateway_pid == pid, "the executor spawned a gateway of its own"
        assert spare_gateway.take() is None, "a spare is taken once"
        code = (
            "import os, sys\n"
            "print(os.environ.get('FREEACT_SPARE_PROBE'), os.getcwd())\n"
            "print(sorted(k for k in os.environ if 'TOKEN' in k))\n"
        )
        probe, tokens = (await _run(ex, code)).text.strip().splitlines()
        assert probe == f"given {work.resolve()}"
        assert tokens == "[]", "the gateway's token reached the kernel"
        # The gateway took the token from the pipe: a request without it is refused.
        assert ex._gateway is not None
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{ex._gateway.base_url}/api/kernels") as resp,
        ):
            assert resp.status in (401, 403)
        assert "auth_token" not in " ".join(psutil.Process(pid).cmdline())
    finally:
        await ex.stop()
    assert _gone(pid, ORPHAN_LIMIT)
    assert not spare.log_path.exists()


async def test_a_spare_that_died_is_replaced_by_a_new_gateway(
    spare: spare_gateway.SpareGateway, tmp_path: Path
) -> None:
    spare.process.kill()
    spare.process.wait()
    ex = KernelExecutor(working_dir=tmp_path, images_dir=tmp_path / "images", warm_up=False)
    try:
        await ex.start()
        assert ex.gateway_pid not in (None, spare.process.pid)
        assert (await _run(ex, "print(6 * 7)")).text.strip() == "42"
    finally:
        await ex.stop()


def test_discard_ends_a_spare_nobody_took(spare: spare_gateway.SpareGateway) -> None:
    pid = spare.process.pid
    spare_gateway.discard()
    assert _gone(pid, 1.0)
    assert not spare.log_path.exists()


# A launcher that spawns a spare as the command line does, says its pid, then waits to be killed.
_LAUNCHER = textwrap.dedent(
    """
    import sys, time
    from freeact_tui.execution.kernel import spare_gateway
    spare_gateway.spawn()
    print(spare_gateway._spare.process.pid, flush=True)
    time.sleep(float(sys.argv[1]))
    print("waited", flush=True)
    time.sleep(600)
    """
)


@pytest.mark.parametrize("after", [0.0, 3.0], ids=["while-importing", "parked"])
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_a_spare_ends_when_the_app_is_killed(after: float, signum: signal.Signals) -> None:
    launcher = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(after)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert launcher.stdout is not None
        pid = int(launcher.stdout.readline())
        if after:
            assert launcher.stdout.readline().strip() == "waited"
        launcher.send_signal(signum)
        launcher.wait(10)
        assert _gone(pid, ORPHAN_LIMIT), "the spare outlived the app"
    finally:
        launcher.kill()
        launcher.wait()
