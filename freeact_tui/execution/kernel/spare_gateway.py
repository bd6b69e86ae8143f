"""A kernel gateway process spawned at launch, before the app's own imports, and taken by its first kernel.

Booting the gateway (importing jupyter_server, tornado, kernel_gateway) takes seconds, and so do the
app's imports before its first kernel is asked for; run one after the other they were most of the time
to ``kernel: ready``. The command line therefore spawns a spare at once (``spawn``): it imports the
gateway's modules and then waits, knowing nothing yet, for one line of settings on its stdin. The first
local executor takes it (``take``) and writes that line (``SpareGateway.configure``): the working dir,
the whole environment and the command-line settings of ``KernelGatewayProcess``, token included. Only
then does the gateway listen and start kernels.

Locked down as the gateway itself: ``python -P`` with ``PYTHONSAFEPATH``, started in ``/`` with only
the few inherited variables (so nothing of the working dir or of a project can reach it before the
trust prompt has been answered and the executor has started), its token sent through the pipe (never
on a command line or in an environment another process could read), in its own process group. It
never outlives the app: its watchdog (``OWNER_WATCH``) ends it within a quarter of a second of the
app's death, it exits when its stdin closes without settings (the app ended or dropped it), and the
app kills it at exit if it was never taken (``discard``).

This module imports only the standard library: the command line imports it before anything else.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from freeact_tui import timeline
from freeact_tui.execution.deferred_imports import GATEWAY_SOURCE
from freeact_tui.execution.orphans import OWNER_ENV, OWNER_WATCH

# Variables of the parent environment a kernel needs to behave normally; nothing secret.
INHERITED_ENV = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")

# The gateway's kernel websocket leaves Nagle's algorithm on: with delayed ACKs every cell then takes
# ~45 ms instead of ~5 ms. Both ways of running the gateway set TCP_NODELAY on that websocket.
NODELAY_PATCH = """\
try:
    import jupyter_server.services.kernels.websocket as _ws
    _open = _ws.KernelWebsocketHandler.open
    async def _open_nodelay(self, *args, **kwargs):
        self.set_nodelay(True)
        return await _open(self, *args, **kwargs)
    _ws.KernelWebsocketHandler.open = _open_nodelay
except Exception:
    pass
"""

# The watchdog first (orphaned at any moment, it exits), then the slow imports (what the gateway never
# uses deferred), then the settings.
_SPARE_MAIN = (
    OWNER_WATCH
    + GATEWAY_SOURCE
    + NODELAY_PATCH
    + """\
import json as _json, os as _os, sys as _sys, time as _time
from kernel_gateway.gatewayapp import launch_instance
if _os.environ.get("FREEACT_TUI_TIMELINE"):  # a measurement: see freeact_tui/timeline.py
    with open(_os.environ["FREEACT_TUI_TIMELINE"], "a") as _f:
        _f.write("spare_gateway:imported %f\\n" % _time.monotonic())
_line = _sys.stdin.readline()
if not _line.strip():
    _os._exit(0)  # the app ended, or does not need us
_settings = _json.loads(_line)
_null = _os.open(_os.devnull, _os.O_RDONLY)
_os.dup2(_null, 0)
_os.close(_null)
_os.chdir(_settings["cwd"])
_os.environ.clear()
_os.environ.update(_settings["env"])
_sys.argv[1:] = _settings["argv"]
del _line, _settings, _null
launch_instance()
"""
)


class SpareGateway:
    """A spawned gateway process waiting for its settings.

    Args:
        process: The process (its stdin a pipe, its output going to ``log_path``).
        log_path: Where it writes.
    """

    def __init__(self, process: subprocess.Popen[bytes], log_path: Path) -> None:
        self.process = process
        self.log_path = log_path

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def configure(self, *, cwd: Path, env: dict[str, str], argv: list[str]) -> bool:
        """Send the settings: the process becomes a gateway as ``KernelGatewayProcess.command`` starts one.

        Args:
            cwd: Its working directory (and so its kernels').
            env: Its whole environment (nothing inherited is kept).
            argv: Its command-line settings (the token among them).

        Returns:
            False when the spare is gone (the caller then spawns a gateway of its own).
        """
        stdin = self.process.stdin
        if stdin is None or not self.alive:
            return False
        try:
            stdin.write(json.dumps({"cwd": str(cwd), "env": env, "argv": argv}).encode() + b"\n")
            stdin.close()
        except OSError:
            return False
        return True

    def kill(self) -> None:
        """End it (and anything in its process group) and reap it; remove its log."""
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, 9)
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.wait(5)
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        self.log_path.unlink(missing_ok=True)


class AdoptedProcess:
    """A taken spare as ``KernelGatewayProcess`` holds its process (the interface of asyncio's)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    def kill(self) -> None:
        if self._process.poll() is None:
            self._process.kill()

    async def wait(self) -> int:
        import asyncio  # here: the command line imports this module before anything else

        return await asyncio.to_thread(self._process.wait)


# The spare of this process: one per process by nature (spawned at launch, taken once), so module state.
_spare: SpareGateway | None = None


def spawn() -> None:
    """Spawn the spare (once per process; an error only means no spare: the gateway then starts as before)."""
    global _spare
    if _spare is not None:
        return
    env = {k: os.environ[k] for k in INHERITED_ENV if k in os.environ}
    env |= {"PYTHONSAFEPATH": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1", OWNER_ENV: str(os.getpid())}
    if timeline.enabled():
        env[timeline.ENV] = os.environ[timeline.ENV]
        timeline.mark("spare_gateway:spawn")
    try:
        fd, log_name = tempfile.mkstemp(prefix="freeact-tui-gateway-", suffix=".log")
    except OSError:
        return
    try:
        process = subprocess.Popen(
            [sys.executable, "-P", "-c", _SPARE_MAIN],
            cwd="/",
            env=env,
            stdin=subprocess.PIPE,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
        )
    except OSError:
        Path(log_name).unlink(missing_ok=True)
        return
    finally:
        os.close(fd)
    _spare = SpareGateway(process, Path(log_name))


def take() -> SpareGateway | None:
    """The spare, for the caller to configure or kill (None: none was spawned, or it is taken or gone)."""
    global _spare
    spare, _spare = _spare, None
    if spare is not None and not spare.alive:
        spare.kill()
        return None
    return spare


def discard() -> None:
    """Kill the spare if nothing took it."""
    spare = take()
    if spare is not None:
        spare.kill()


__all__ = ["INHERITED_ENV", "NODELAY_PATCH", "AdoptedProcess", "SpareGateway", "discard", "spawn", "take"]
