"""Children that end on their own when the app that started them dies, even by SIGKILL.

Three guards, for three kinds of child:

- ``OWNER_WATCH``: Python source a long-lived Python child (the kernel gateway) runs first. A
  thread polls the parent pid; when the parent is gone it SIGKILLs every descendant (the kernels
  and what they started, each in its own session) and exits. The kernels need nothing more: a
  kernel started by the gateway also exits by itself when the gateway is gone (ipykernel's parent
  poller, through ``JPY_PARENT_PID``).
- ``OwnerLock``: the app holds an exclusive ``flock`` on a file for as long as a child runs; a child
  that cannot watch our pid (a container in its own PID namespace, the file bind-mounted into it)
  polls the lock with ``LOCK_NB`` and ends when it can take it. The kernel releases the lock of a
  dead process, whatever killed it.
- ``die_with_parent``: a command line wrapped so that the process gets SIGTERM when its parent
  (the thread that spawned it) dies (``prctl(PR_SET_PDEATHSIG)``, kept across ``exec``), for
  children that run foreign code (MCP servers).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
from pathlib import Path

# The pid the gateway's watchdog compares ``getppid()`` with (unset: no watchdog).
OWNER_ENV = "FREEACT_TUI_OWNER_PID"

# Polls 4 times a second: an orphaned gateway and its kernels are gone well within a second.
OWNER_WATCH = r"""
def _freeact_watch_owner():
    import os, signal, threading, time
    owner = int(os.environ.pop("FREEACT_TUI_OWNER_PID", "0") or 0)
    if not owner:  # in a sandbox or container: the parent is its init, whose end ends us all
        return

    def descendants():
        children = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open("/proc/" + name + "/stat", "rb") as f:
                        stat = f.read()
                    ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                children.setdefault(ppid, []).append(int(name))
        found, todo = [], [os.getpid()]
        while todo:
            for pid in children.get(todo.pop(), []):
                found.append(pid)
                todo.append(pid)
        return found

    def connection_file(pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            return None
        name = args[args.index(b"-f") + 1] if b"-f" in args[:-1] else b""
        base = os.path.basename(name)
        return name if base.startswith(b"kernel-") and base.endswith(b".json") else None

    def end():
        files = []
        for _ in range(3):
            below = descendants()
            files += [f for f in map(connection_file, below) if f]
            for pid in below:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if not below:
                break
            time.sleep(0.05)
        for name in files:  # the kernels' connection files, as a clean shutdown removes them
            try:
                os.unlink(name)
            except OSError:
                pass
        os._exit(1)

    def watch():
        while os.getppid() == owner:
            time.sleep(0.25)
        end()

    if os.getppid() != owner:
        end()
    threading.Thread(target=watch, name="freeact-owner-watch", daemon=True).start()


_freeact_watch_owner()
"""

# prctl(PR_SET_PDEATHSIG, SIGTERM), then make sure the parent is still the one that spawned us
# (it may have died before the call), then become the real command.
_DIE_WITH_PARENT = """\
import ctypes, os, signal, sys
parent = int(sys.argv[1])
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
if os.getppid() != parent:
    sys.exit(1)
os.execvp(sys.argv[2], sys.argv[2:])
"""


def die_with_parent(command: str, args: list[str]) -> tuple[str, list[str]]:
    """``command args`` wrapped so that it gets SIGTERM when this process dies (Linux).

    The signal is tied to the spawning thread: spawn from the thread that owns the child (the
    event loop's). Elsewhere the command is returned unchanged.

    Returns:
        The command and arguments to spawn instead.
    """
    if not sys.platform.startswith("linux") or shutil.which(command) is None:
        return command, args  # a missing command fails to spawn as it would unwrapped
    return sys.executable, ["-I", "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), command, *args]


def _start_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def owner_label() -> str:
    """This process as ``pid:start-time`` (a pid alone may be reused), for labels of what it starts."""
    return f"{os.getpid()}:{_start_ticks(os.getpid())}"


def owner_dead(label: str) -> bool:
    """Whether ``label`` is an ``owner_label()`` whose process is gone (False for anything else)."""
    pid, _, ticks = label.partition(":")
    return pid.isdigit() and ticks.isdigit() and _start_ticks(int(pid)) != int(ticks)


class OwnerLock:
    """An exclusive ``flock`` on ``path``, held by this process until ``release()``.

    A child sees the owner alive while ``owner_gone(path)`` is False.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


# For a child: the same test as ``owner_gone`` in source form (no import of this package needed).
OWNER_LOCK_WATCH = """\
def _freeact_owner_gone(path):
    import fcntl, os
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
"""


def owner_gone(path: Path) -> bool:
    """True when no process holds ``OwnerLock(path)`` (or the file is gone)."""
    scope: dict[str, object] = {}
    exec(OWNER_LOCK_WATCH, scope)  # the very code a child runs
    gone = scope["_freeact_owner_gone"]
    assert callable(gone)
    return bool(gone(str(path)))
