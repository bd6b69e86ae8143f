"""A hostile repository against the execution layer: planted modules, other users' requests,
sandbox escapes, readable stores (issue 28, the execution parts). Real gateways and kernels."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import psutil
import pytest
import pytest_asyncio

from freeact_tui.execution.kernel.executor import KernelExecutor
from tests.executor_checks import run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]

# Modules a cloned repository may plant in the working dir: Python started there with the working
# dir first on sys.path (`python -c`, `python -m`) runs them before anything else.
PLANTED = {
    "threading.py": "threading",
    "ipykernel_launcher.py": "ipykernel_launcher",
    "jupyter_client.py": "jupyter_client",
}


def plant(work: Path) -> None:
    for name, module in PLANTED.items():
        (work / name).write_text(
            f"import pathlib\npathlib.Path({str(work / ('PWNED-' + module))!r}).write_text('ran')\n"
            "raise SystemExit('planted module')\n"
        )


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hostile(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[KernelExecutor, Path]]:
    root = tmp_path_factory.mktemp("hostile")
    work = root / "work"
    work.mkdir()
    plant(work)
    (work / "helper.py").write_text("VALUE = 41 + 1\n")
    executor = KernelExecutor(working_dir=work, images_dir=root / "images")
    await executor.start()
    yield executor, work
    await executor.stop()


async def test_planted_modules_do_not_run_in_the_gateway_or_the_kernel(
    hostile: tuple[KernelExecutor, Path],
) -> None:
    ex, work = hostile
    _, result = await run(ex, "import threading, sys\nprint(threading.__file__)")
    assert not result.is_error, result.text
    assert str(work) not in result.text
    assert sorted(p.name for p in work.glob("PWNED-*")) == []


async def test_the_working_dirs_own_modules_still_import_after_the_installed_ones(
    hostile: tuple[KernelExecutor, Path],
) -> None:
    ex, work = hostile
    (work / "json.py").write_text("raise SystemExit('shadowed the standard library')\n")
    _, result = await run(ex, "import helper, json\nprint(helper.VALUE, json.__name__)")
    assert result.text == "42 json", result.text
    # A script the user runs from the kernel behaves as usual (its own dir first on its sys.path).
    (work / "script.py").write_text("import helper\nprint('script', helper.VALUE)\n")
    _, result = await run(ex, "!python script.py")
    assert "script 42" in result.text, result.text


async def test_the_gateway_refuses_requests_without_its_token(hostile: tuple[KernelExecutor, Path]) -> None:
    ex, _ = hostile
    gateway = ex._gateway
    assert gateway is not None
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{gateway.base_url}/api/kernels", json={}) as resp:
            assert resp.status in (401, 403)
        async with session.get(f"{gateway.base_url}/api/kernels") as resp:
            assert resp.status in (401, 403)
        bad = {"Authorization": "token not-the-token"}
        async with session.post(f"{gateway.base_url}/api/kernels", json={}, headers=bad) as resp:
            assert resp.status in (401, 403)
    # The token is on no command line (any user can read those).
    assert gateway.pid is not None
    cmdline = " ".join(psutil.Process(gateway.pid).cmdline())
    assert gateway.token not in cmdline
    # ... nor in the kernel's environment.
    _, result = await run(ex, "import os\nprint(sorted(k for k in os.environ if 'TOKEN' in k))")
    assert result.text == "[]", result.text


async def test_the_tool_server_refuses_requests_without_its_token(
    hostile: tuple[KernelExecutor, Path],
) -> None:
    ex, _ = hostile
    server = ex._tool.server
    assert server is not None
    base = f"http://127.0.0.1:{server.port}"
    query = {"server_name": "ipybox", "tool_name": "shell", "tool_args": {"cmd": "touch x"}}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
        async with session.post(f"{base}/approve", json=query) as resp:
            assert resp.status == 401
        async with session.put(f"{base}/reset") as resp:
            assert resp.status == 401
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(f"ws://127.0.0.1:{server.port}/approval")
        assert refused.value.status == 403
        auth = {"Authorization": aiohttp.encode_basic_auth("freeact", "wrong")}
        async with session.post(f"{base}/approve", json=query, headers=auth) as resp:
            assert resp.status == 401
    # The app's own channel still works: a `!cmd` asks and runs.
    items, result = await asyncio.wait_for(run(ex, "!echo approved-and-ran"), 60)
    assert [type(i).__name__ for i in items if type(i).__name__ == "ExecApproval"] == ["ExecApproval"]
    assert "approved-and-ran" in result.text
    assert os.environ.get("FREEACT_GATEWAY_TOKEN") is None


def private_modes(root: Path) -> list[str]:
    """Entries under ``root`` (itself included) that anyone but the owner may read, write or enter."""
    loose = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not path.is_symlink() and mode & 0o077:
            loose.append(f"{oct(mode & 0o777)} {path.relative_to(root.parent)}")
    return loose


def files_containing(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


async def test_the_checkpoint_store_is_private(tmp_path: Path) -> None:
    from freeact_tui.checkpoints.engine import CheckpointStore

    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    (work / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    store_dir = tmp_path / "data" / "checkpoints"
    store = CheckpointStore(work, store_dir=store_dir)
    assert await store.checkpoint("first") is not None
    (work / ".env").write_text("OPENAI_API_KEY=sk-other\n")
    assert await store.checkpoint("second") is not None
    assert private_modes(store_dir) == []


async def test_a_store_made_before_is_closed_to_others(tmp_path: Path) -> None:
    from freeact_tui.checkpoints.engine import CheckpointStore

    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text("KEY=1\n")
    store_dir = tmp_path / "data" / "checkpoints"
    store = CheckpointStore(work, store_dir=store_dir)
    assert await store.checkpoint("first") is not None
    store_dir.chmod(0o755)
    store.git_dir.chmod(0o755)  # as stores were made before
    (work / ".env").write_text("KEY=2\n")
    await CheckpointStore(work, store_dir=store_dir).checkpoint("again")
    assert oct(store_dir.stat().st_mode & 0o777) == "0o700"
    assert oct(store.git_dir.stat().st_mode & 0o777) == "0o700"


async def test_mcp_server_logs_are_private(tmp_path: Path) -> None:
    from freeact_tui.execution.tools.mcp_session import McpSession

    server = tmp_path / "noisy.py"
    server.write_text(
        "import sys\nsys.stderr.write('token=abc\\n')\nsys.stderr.flush()\n"
        "from mcp.server.fastmcp import FastMCP\nFastMCP('noisy').run()\n"
    )
    logs = tmp_path / "data" / "logs"
    session = McpSession("noisy", {"command": sys.executable, "args": [str(server)]}, logs)
    try:
        await session.start(60)
    finally:
        await session.close()
    assert (logs / "mcp-noisy.log").read_text().startswith("token=abc")
    assert private_modes(logs) == []


async def test_agent_cells_are_not_kept_in_ipython_history(hostile: tuple[KernelExecutor, Path]) -> None:
    ex, _ = hostile
    marker = "history_probe_8d1f3c"
    _, result = await run(ex, f"{marker} = 1\nprint(get_ipython().history_manager.enabled)")
    assert result.text == "False", result.text
    assert files_containing(Path(os.environ["IPYTHONDIR"]), marker) == []


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def sandboxed(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[KernelExecutor, Path]]:
    from freeact_tui.execution.isolation.sandbox import SandboxExecutor

    if (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get("CI"):
        pytest.skip("bwrap or socat not installed (Debian packages: bubblewrap, socat)")
    root = tmp_path_factory.mktemp("sandboxed")
    work = root / "work"
    work.mkdir()
    (work / ".freeact-tui.toml").write_text('model = "demo"\n')
    (work / ".freeact").mkdir()
    (work / ".freeact" / "permissions.toml").write_text("")
    (work / ".env").write_text("KEY=1\n")
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text("[core]\n")
    ssh = Path.home() / ".ssh"
    ssh.mkdir(exist_ok=True)
    (ssh / "id_probe").write_text("PRIVATE KEY\n")
    executor = SandboxExecutor(
        working_dir=work, images_dir=root / "images", kernel_venv_dir=root / "kernel-env"
    )
    await executor.start()
    yield executor, work
    await executor.stop()


WRITE_ATTEMPT = """\
import os
for path in {paths!r}:
    try:
        with open(path, 'a') as f:
            f.write('\\n[mcp_servers.evil]\\ncommand = "touch"\\n')
        print('WROTE', path)
    except OSError as e:
        print('refused', path, type(e).__name__)
"""


async def test_sandboxed_code_cannot_change_the_projects_config_or_git(
    sandboxed: tuple[KernelExecutor, Path],
) -> None:
    ex, work = sandboxed
    targets = [
        str(work / n) for n in (".freeact-tui.toml", ".freeact/permissions.toml", ".env", ".git/config")
    ]
    targets.append(str(work / ".git" / "hooks-planted"))
    _, result = await run(ex, WRITE_ATTEMPT.format(paths=targets))
    assert "WROTE" not in result.text, result.text
    assert result.text.count("refused") == len(targets)
    assert (work / ".freeact-tui.toml").read_text() == 'model = "demo"\n'
    assert (work / ".git" / "config").read_text() == "[core]\n"
    # The working dir itself stays writable.
    _, result = await run(ex, "open('notes.txt', 'w').write('ok')\nprint(open('notes.txt').read())")
    assert result.text == "ok", result.text


async def test_sandboxed_code_sees_an_empty_home_and_no_host_sockets(
    sandboxed: tuple[KernelExecutor, Path],
) -> None:
    ex, _ = sandboxed
    key = Path.home() / ".ssh" / "id_probe"
    code = (
        "import os\n"
        f"for path in ({str(key)!r}, os.path.expanduser('~/.ssh/id_probe')):\n"
        "    print(os.path.exists(path))\n"
        "print(sorted(os.listdir(os.path.expanduser('~'))))\n"
        "print([d for d in ('/run', '/var/tmp') if os.path.isdir(d) and os.listdir(d)])"
    )
    _, result = await run(ex, code)
    assert result.text.splitlines() == ["False", "False", "[]", "[]"], result.text
