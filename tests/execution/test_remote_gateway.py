"""RemoteExecutor against real Jupyter gateways over https, with a token and a base path.

The tests make a CA and a server certificate for 127.0.0.1 (``cryptography``), start the gateway
with them, an auth token and a base path, and run kernels in it. The tests of what a gateway does
run against both a stock `jupyter kernelgateway` (``/kg/``) and a stock `jupyter enterprisegateway`
3.3.0 (``/eg/``, kernels as local processes, see ``tests/enterprise_gateway.py``); those of the
client alone (the CLI, the app) against the kernel gateway only.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import logging
import os
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution import create_executor
from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.gateway.endpoint import resolve_endpoint
from freeact_tui.execution.gateway.remote import RemoteExecutor
from tests.executor_checks import approvals, run
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import CLI, fake_args
from tests.tls_gateway import Gateway, free_port, tls_gateway

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]

TOKEN = "s3cret-gateway-token-5d1f"  # noqa: S105 - a test token


GATEWAYS = ["kernel-gateway", "enterprise-gateway"]
# Tests of the client alone: one gateway is enough.
kernel_gateway_only = pytest.mark.parametrize("gateway", ["kernel-gateway"], indirect=True)


@pytest.fixture(scope="module", params=GATEWAYS)
def gateway(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway with TLS, a token and a base path, as an operator would run it."""
    kind = request.param
    with tls_gateway(tmp_path_factory.mktemp(kind), TOKEN, kind=kind) as gw:
        yield gw


@pytest.fixture
def gateway_env(gateway: Gateway, monkeypatch: pytest.MonkeyPatch) -> Gateway:
    """The environment a user of the TLS gateway sets: the token and the CA bundle."""
    monkeypatch.setenv("JUPYTER_GATEWAY_AUTH_TOKEN", TOKEN)
    monkeypatch.setenv("JUPYTER_GATEWAY_CA_CERTS", str(gateway.ca))
    for name in ("JUPYTER_GATEWAY_URL", "JUPYTER_GATEWAY_VALIDATE_CERT", "JUPYTER_GATEWAY_AUTH_SCHEME"):
        monkeypatch.delenv(name, raising=False)
    return gateway


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(gateway: Gateway, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RemoteExecutor]:
    root = tmp_path_factory.mktemp("remote-tls")
    (root / "work").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_GATEWAY_AUTH_TOKEN", TOKEN)
        mp.setenv("JUPYTER_GATEWAY_CA_CERTS", str(gateway.ca))
        executor = RemoteExecutor(
            remote_url=gateway.url, working_dir=root / "work", images_dir=root / "images",
            kernel_env={"GREETING": "hi"},
        )  # fmt: skip
    await executor.start()
    yield executor
    await executor.stop()


async def test_code_runs_over_https_with_token_and_base_path(ex: RemoteExecutor, gateway: Gateway) -> None:
    assert (
        ex.endpoint.tls
        and ex.endpoint.base_path == gateway.base_path
        and ex.kernel_id in gateway.kernel_ids()
    )
    code = "x = 41\nimport os\nprint(os.getcwd(), os.environ['GREETING'], *(os.environ.get(f'KERNEL_{n}') for n in ('USERNAME', 'LAUNCH_TIMEOUT')))"
    _, result = await run(ex, code)
    # KERNEL_USERNAME and KERNEL_LAUNCH_TIMEOUT are sent as Jupyter's gateway client does (EG names
    # pods after the user and gives up a launch the client no longer waits for).
    assert result.text == f"{ex.working_dir} hi {getpass.getuser()} 120" and not result.is_error
    _, result = await run(ex, "print(x + 1)")
    assert result.text == "42"


async def test_approvals_travel_in_band(ex: RemoteExecutor) -> None:
    # The kernel is given no address of ours: the tool server's variables are not set, and
    # ipybox's handlers name an unroutable host. Approvals still arrive, in output order.
    _, result = await run(
        ex, "import os\nprint(os.environ.get('TOOL_SERVER_HOST'), os.environ.get('TOOL_SERVER_PORT'))"
    )
    assert result.text == "None None"
    items, result = await run(ex, "print('before', flush=True)\n!echo hello over tls\nprint('after')")
    [approval] = approvals(items)
    assert (approval.kind, approval.command) == ("shell", "echo hello over tls")
    assert result.text == "before\nhello over tls\nafter"
    assert items.index(approval) > 0  # "before" was shown first
    items, result = await run(ex, "!touch refused.txt", decide=False)
    assert len(approvals(items)) == 1 and "rejected" in result.text
    assert not (ex.working_dir / "refused.txt").exists()
    # User code's input() still has no stdin (only our requests use the channel).
    _, result = await run(ex, "input('name? ')")
    assert result.is_error and "StdinNotImplementedError" in result.text


async def test_unknown_tool_server_call_is_refused_in_band(ex: RemoteExecutor) -> None:
    # A generated MCP API's call goes in-band too; a server not in the allow-list is refused
    # by the local tool server before any approval.
    code = (
        "from mcpygen.tool_exec.client import ToolRunner\n"
        "try:\n"
        "    ToolRunner('nosuch', {'command': 'true'}).run_sync('t', {})\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)"
    )
    items, result = await run(ex, code)
    assert approvals(items) == []
    assert result.text.startswith("ToolRunnerError MCP server `nosuch` is not configured")


async def test_programmatic_tool_call_runs_in_band_after_approval(ex: RemoteExecutor) -> None:
    # As a generated MCP API calls it: ToolRunner with the default address (nothing listens there).
    server = Path(__file__).parents[1] / "mcp_servers" / "calc.py"
    params = {"command": sys.executable, "args": [str(server)]}
    ex.set_mcp_servers({"calc": params})
    code = (
        "from mcpygen.tool_exec.client import ToolRunner\n"
        f"runner = ToolRunner('calc', {params!r})\n"
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
        assert not result.is_error and "5" in result.text, result.text
        _, result = await run(ex, "runner.run_sync('add', {'a': 1, 'b': 1})", decide=False)
        assert result.is_error and "ApprovalRejectedError" in result.text and "rejected" in result.text
    finally:
        ex.set_mcp_servers(None)


async def test_wrong_or_missing_token_is_a_clear_error(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_GATEWAY_AUTH_TOKEN", "wrong-token")
    executor = RemoteExecutor(remote_url=gateway_env.url, working_dir=tmp_path)
    with pytest.raises(ExecutorError, match=r"refused the token in JUPYTER_GATEWAY_AUTH_TOKEN") as info:
        await executor.start()
    assert "wrong-token" not in str(info.value) and executor.state == "failed"
    monkeypatch.delenv("JUPYTER_GATEWAY_AUTH_TOKEN")
    executor = RemoteExecutor(remote_url=gateway_env.url, working_dir=tmp_path)
    with pytest.raises(ExecutorError, match=r"needs a token: set JUPYTER_GATEWAY_AUTH_TOKEN"):
        await executor.start()


@pytest.mark.parametrize("gateway", ["enterprise-gateway"], indirect=True)
async def test_user_refused_by_enterprise_gateway_is_a_clear_error(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.enterprise_gateway import REFUSED_USER

    monkeypatch.setenv("KERNEL_USERNAME", REFUSED_USER)  # in EG's unauthorized_users (root is, by default)
    before = gateway_env.kernel_ids()
    executor = RemoteExecutor(remote_url=gateway_env.url, working_dir=tmp_path)
    with pytest.raises(
        ExecutorError,
        match=rf"does not let this user start a kernel: User '{REFUSED_USER}' is not authorized .*"
        r"sent as KERNEL_USERNAME; set it in the environment",
    ):
        await executor.start()
    assert executor.state == "failed" and gateway_env.kernel_ids() == before


async def test_untrusted_certificate_is_a_clear_error(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUPYTER_GATEWAY_CA_CERTS")
    executor = RemoteExecutor(remote_url=gateway_env.url, working_dir=tmp_path)
    with pytest.raises(
        ExecutorError,
        match=rf"certificate of the gateway at https://127\.0\.0\.1:\d+{gateway_env.base_path} is not trusted .*"
        r"Set JUPYTER_GATEWAY_CA_CERTS .*--remote-insecure",
    ):
        await executor.start()
    assert executor.state == "failed"


async def test_plain_http_to_a_tls_gateway_is_a_clear_error(gateway_env: Gateway, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{gateway_env.port}{gateway_env.base_path}/"
    executor = RemoteExecutor(remote_url=url, working_dir=tmp_path)
    with pytest.raises(ExecutorError, match=rf"http://127\.0\.0\.1:\d+{gateway_env.base_path}"):
        await executor.start()


async def test_insecure_switch_skips_verification_with_a_warning(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("JUPYTER_GATEWAY_CA_CERTS")
    with caplog.at_level(logging.WARNING):
        executor = RemoteExecutor(remote_url=gateway_env.url, remote_insecure=True, working_dir=tmp_path)
    assert "verification is OFF" in caplog.text
    try:
        await executor.start()
        _, result = await run(executor, "print(6 * 7)")
        assert result.text == "42"
    finally:
        await executor.stop()
    # Jupyter's own switch does the same.
    monkeypatch.setenv("JUPYTER_GATEWAY_VALIDATE_CERT", "false")
    assert resolve_endpoint(gateway_env.url).insecure


async def test_wrong_base_path_is_a_clear_error(gateway_env: Gateway, tmp_path: Path) -> None:
    url = gateway_env.url.replace(gateway_env.base_path + "/", "/nope/")
    executor = RemoteExecutor(remote_url=url, working_dir=tmp_path)
    with pytest.raises(ExecutorError, match=r"404 .*check the base path in remote_url"):
        await executor.start()


async def test_unreachable_gateway_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUPYTER_GATEWAY_URL", raising=False)
    executor = RemoteExecutor(remote_url=f"https://127.0.0.1:{free_port()}/", working_dir=tmp_path)
    with pytest.raises(
        ExecutorError,
        match=r"Cannot reach the Jupyter gateway at https://127\.0\.0\.1:\d+ .*JUPYTER_GATEWAY_URL",
    ):
        await executor.start()
    assert executor.state == "failed"


async def test_gateway_url_from_the_environment(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_GATEWAY_URL", gateway_env.url)
    executor = create_executor("remote", working_dir=tmp_path)
    assert isinstance(executor, RemoteExecutor) and executor.remote_url == gateway_env.url.rstrip("/")
    monkeypatch.delenv("JUPYTER_GATEWAY_URL")
    with pytest.raises(ExecutorError, match="set remote_url in the config or JUPYTER_GATEWAY_URL"):
        create_executor("remote", working_dir=tmp_path)


async def test_token_over_plain_http_to_another_host_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    from freeact_tui.execution.gateway.endpoint import config_warning

    monkeypatch.setenv("JUPYTER_GATEWAY_AUTH_TOKEN", TOKEN)
    monkeypatch.delenv("JUPYTER_GATEWAY_VALIDATE_CERT", raising=False)
    warning = config_warning("remote", "http://10.1.2.3:8888/", False)
    assert warning is not None and "UNENCRYPTED to http://10.1.2.3:8888" in warning and TOKEN not in warning
    assert config_warning("remote", "http://127.0.0.1:8888", False) is None  # stays on this machine
    assert config_warning("remote", "https://10.1.2.3:8888", False) is None
    assert config_warning("local", "http://10.1.2.3:8888/", False) is None
    monkeypatch.delenv("JUPYTER_GATEWAY_AUTH_TOKEN")
    assert config_warning("remote", "http://10.1.2.3:8888/", False) is None  # nothing secret to send


@pytest.mark.parametrize(
    "url", ["ftp://gw:8888", "gw:8888", "http://:80", "http://h:x", "https://u:p@h/", "http://h/?a=1"]
)
async def test_bad_url_is_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(ExecutorError, match=r"remote_url must look like http\(s\)://HOST\[:PORT\]"):
        RemoteExecutor(remote_url=url, working_dir=tmp_path)


async def test_subagent_kernels_run_in_parallel_and_are_shut_down(
    gateway_env: Gateway, tmp_path: Path
) -> None:
    executors = [RemoteExecutor(remote_url=gateway_env.url, working_dir=tmp_path) for _ in range(3)]
    try:
        await asyncio.gather(*(e.start() for e in executors))
        ids = [e.kernel_id for e in executors]
        assert len(set(ids)) == 3 and set(ids) <= set(gateway_env.kernel_ids())
        started = time.monotonic()
        results = await asyncio.gather(
            *(run(e, f"import time\ntime.sleep(1.5)\nprint({i})") for i, e in enumerate(executors))
        )
        assert [r.text for _, r in results] == ["0", "1", "2"]
        assert time.monotonic() - started < 4.0  # in parallel, not 4.5 s one after the other
    finally:
        await asyncio.gather(*(e.stop() for e in executors))
    assert not set(ids) & set(gateway_env.kernel_ids())


class _Proxy:
    """A TCP proxy in front of the gateway whose connections the test can cut (a network drop)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        for writer in self._writers:
            transport = writer.transport
            transport.abort()
        self._writers.clear()

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()


async def test_dropped_connection_mid_cell_is_reported_and_reattached(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_GATEWAY_RETRY_INTERVAL", "0.2")
    proxy = _Proxy(gateway_env.port)
    await proxy.start()
    url = f"https://127.0.0.1:{proxy.port}{gateway_env.base_path}/"
    executor = RemoteExecutor(remote_url=url, working_dir=tmp_path)
    try:
        await executor.start()
        first = executor.kernel_id
        await run(executor, "state = 'kept'")

        async def cut_soon() -> None:
            await asyncio.sleep(0.8)
            proxy.cut()

        cutter = asyncio.create_task(cut_soon())
        _, result = await run(
            executor,
            "import time\nfor i in range(4):\n    print(i, flush=True)\n    time.sleep(0.5)\nprint(state)",
        )
        await cutter
        assert not result.kernel_died and not result.is_error
        assert "re-attaching to the kernel" in result.text and "re-attached" in result.text
        # Nothing lost: the gateway buffered what the kernel printed while we were away.
        numbers = [line for line in result.text.splitlines() if line in ("0", "1", "2", "3")]
        assert numbers == ["0", "1", "2", "3"] and result.text.endswith("kept")
        assert executor.kernel_id == first
    finally:
        await executor.stop()
        await proxy.stop()


async def test_lost_gateway_mid_cell_is_reported_and_the_kernel_restarted(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_GATEWAY_RETRY_INTERVAL", "0.1")
    monkeypatch.setenv("JUPYTER_GATEWAY_RETRY_MAX", "2")
    executor = RemoteExecutor(remote_url=gateway_env.url, working_dir=tmp_path)
    try:
        await executor.start()
        first = executor.kernel_id
        # The kernel is deleted behind our back (an operator, a culler): re-attaching cannot work.
        request = urllib.request.Request(
            f"{gateway_env.url}api/kernels/{first}",
            method="DELETE",
            headers={"Authorization": f"token {TOKEN}"},
        )
        context = ssl.create_default_context(cafile=str(gateway_env.ca))

        async def delete_soon() -> None:
            await asyncio.sleep(0.5)
            await asyncio.to_thread(urllib.request.urlopen, request, timeout=10, context=context)

        deleter = asyncio.create_task(delete_soon())
        _, result = await run(executor, "import time\nprint('start', flush=True)\ntime.sleep(5)")
        await deleter
        # Enterprise Gateway interrupts a kernel before it shuts it down; an ipykernel 6 kernel (EG's
        # recommended) answers the interrupt before it goes, the cell then ends as interrupted.
        assert result.text.startswith("start")
        assert result.kernel_died or (
            gateway_env.kind == "enterprise-gateway" and "KeyboardInterrupt" in result.text
        )
        _, after = await run(executor, "print('fresh')")
        if not result.kernel_died:  # then the next cell is told, and nothing of it runs in the old kernel
            assert after.text.startswith("The kernel died (the kernel is gone from the remote gateway)")
            _, after = await run(executor, "print('fresh')")
        assert after.text == "fresh" and executor.kernel_id not in (None, first)
    finally:
        await executor.stop()


async def test_token_is_not_in_repr_or_kernel_env(ex: RemoteExecutor) -> None:
    assert ex.endpoint.token == TOKEN and TOKEN not in repr(ex.endpoint)
    _, result = await run(ex, "import os\nprint(any('s3cret' in v for v in os.environ.values()))")
    assert result.text == "False"


async def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        subprocess.run, args, cwd=cwd, capture_output=True, text=True, timeout=150, env=os.environ.copy()
    )


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink() and needle in path.read_bytes():
                found.append(path)
    return found


@kernel_gateway_only
async def test_headless_run_over_tls_writes_the_token_nowhere(
    gateway_env: Gateway, fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real CLI in remote mode: code and an approved `!cmd` run; the token is in no file it wrote."""
    monkeypatch.setenv("JUPYTER_GATEWAY_URL", gateway_env.url)
    code = "print('remote says', 6 * 7)\n!echo shell over tls"
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": code}, call_id="c1")]),
        lambda request: Reply(f"Done: {request.tool_results()[-1].strip()}"),
    )
    done = await _cli(
        [*CLI, "run", "-e", "remote", "--skip-permissions",
         *fake_args(fake_openai), "-o", "json", "go"],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["status"] == "answered", answer
    assert "remote says 42" in answer["answer"] and "shell over tls" in answer["answer"]
    home = Path(os.environ["FREEACT_TUI_HOME"])
    assert _files_containing(home, b"remote says 42"), "the session was saved"
    assert _files_containing(home, TOKEN.encode()) == []
    assert _files_containing(tmp_path, TOKEN.encode()) == []
    assert TOKEN not in done.stdout + done.stderr


@kernel_gateway_only
async def test_cli_insecure_switch_warns_and_works(
    gateway_env: Gateway, fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_GATEWAY_URL", gateway_env.url)
    monkeypatch.delenv("JUPYTER_GATEWAY_CA_CERTS")
    fake_openai.script(
        Reply(
            tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": "print(7 * 6)"}, call_id="c1")]
        ),
        lambda request: Reply(f"Got {request.tool_results()[-1].strip()}"),
    )
    args = [*CLI, "run", "-e", "remote", *fake_args(fake_openai), "--allow", "code:*", "go"]  # fmt: skip
    done = await _cli([*args[:4], "--remote-insecure", *args[4:]], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Got 42" in done.stdout and "are NOT verified" in done.stderr
    # Without the switch: the untrusted certificate is the error, naming what to set.
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": "print(1)"}, call_id="c2")]),
        Reply("never"),
    )
    done = await _cli(args, tmp_path)
    output = done.stdout + done.stderr
    assert "is not trusted" in output and "JUPYTER_GATEWAY_CA_CERTS" in output, output
    assert "NOT verified" not in output, output
    assert done.returncode == 1  # no fallback to local execution: the run fails


async def test_subagents_each_get_a_kernel_from_the_gateway(gateway_env: Gateway, tmp_path: Path) -> None:
    """A parent agent in remote mode delegates two tasks: two subagent kernels, in parallel, deleted after."""
    from freeact_tui.agent.agent import Agent
    from freeact_tui.permissions.rules import PermissionRules
    from tests.helpers import collect, routed_model, statuses

    tasks = {"task A": "ca", "task B": "cb"}
    code = "import os, time; time.sleep(1.0); print(os.environ['KERNEL_GATEWAY'], os.getpid())"
    model = routed_model(tasks, lambda p: code)
    before = set(gateway_env.kernel_ids())
    seen: set[str] = set()

    def watch(event: object) -> None:
        seen.update(set(gateway_env.kernel_ids()) - before)
        if getattr(event, "decided", True) is False:
            event.approve(True)  # type: ignore[attr-defined]

    agent = Agent(
        model, sessions_dir=tmp_path / "sessions", working_dir=tmp_path, execution="remote",
        remote_url=gateway_env.url, permissions=PermissionRules(None, defaults=False),
        subagent_pool_size=0, max_subagents=2,
    )  # fmt: skip
    async with agent as parent:
        events = await collect(parent, "delegate", on_event=watch)
    seq = statuses(events)
    # Both ran at once: the second started before the first was done.
    first_done = min(seq.index((t, "done")) for t in tasks)
    assert all(seq.index((t, "running")) < first_done for t in tasks), seq
    outputs = [str(e.content) for e in events if type(e).__name__ == "ToolOutput" and e.agent_id == "main"]  # type: ignore[attr-defined]
    pids = {line.rsplit(" ", 1)[1] for line in outputs}
    assert len(outputs) == 2 and all(": 1 " in line for line in outputs), outputs  # KERNEL_GATEWAY=1
    assert len(pids) == 2  # two kernels, not one shared
    assert len(seen) >= 3  # the gateway listed them (and the parent's) while they ran
    assert not set(gateway_env.kernel_ids()) - before  # every kernel, the parent's too, was deleted


@kernel_gateway_only
async def test_app_says_certificates_are_not_verified(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TUI shows the insecure warning (stderr is hidden behind the app's screen)."""
    from freeact_tui.project.config import Config
    from freeact_tui.tui.app import FreeactApp
    from tests.scripted import script

    monkeypatch.delenv("JUPYTER_GATEWAY_CA_CERTS")
    config = Config(
        sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0,
        execution="remote", remote_url=gateway_env.url, remote_insecure=True,
    )  # fmt: skip
    app = FreeactApp(config, model=script(["unused"]).model())
    async with app.run_test(size=(110, 34)) as pilot:
        deadline = time.monotonic() + 60
        while not app.agent_ready:
            assert time.monotonic() < deadline, "the agent did not get ready"
            await pilot.pause(0.05)
        messages = [n.message for n in app._notifications]
        assert any("are NOT verified" in m and gateway_env.url.rstrip("/") in m for m in messages), messages


async def test_quick_quit_deletes_the_gateway_kernels(
    gateway_env: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line's app quits without stopping kernels (they end by their watchdogs); a
    gateway's kernels have none, so quitting deletes them: the agent's and the warm subagent pool's."""
    import weakref

    from freeact_tui.execution.gateway.remote import GATEWAY_KERNELS
    from freeact_tui.project.config import Config
    from freeact_tui.tui.app import FreeactApp
    from tests.scripted import script

    # The quick quit deletes every gateway kernel of the process (it ends next); here the process
    # goes on and holds other tests' kernels (the module's executor): keep those out of its reach.
    monkeypatch.setattr(GATEWAY_KERNELS, "live", weakref.WeakSet())
    before = set(gateway_env.kernel_ids())
    config = Config(
        sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=1,
        execution="remote", remote_url=gateway_env.url,
    )  # fmt: skip
    app = FreeactApp(config, model=script(["unused"]).model(), fast_exit=True)
    async with app.run_test(size=(110, 34)) as pilot:
        deadline = time.monotonic() + 90
        while len(started := set(gateway_env.kernel_ids()) - before) < 2:  # the agent's and the pool's
            assert time.monotonic() < deadline, "the kernels did not start"
            await pilot.pause(0.1)
        await pilot.press("ctrl+q")
        await pilot.pause(0.1)
    # The deletes were sent at quit; a loaded gateway (EG shuts each kernel down before it answers,
    # and CI once still listed one right after) may finish them a moment later.
    for _ in range(75):  # 15 s
        if not started & set(gateway_env.kernel_ids()):
            break
        await asyncio.sleep(0.2)
    assert not started & set(gateway_env.kernel_ids())
