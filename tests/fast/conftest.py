"""The fast tier: no kernel, no process, no pty, so ``python -m pytest -q tests/fast`` answers in seconds.

An audit hook fails a test here that starts a process (a kernel, a CLI subprocess, git, a pty): such a
test belongs in its package's folder under ``tests/``, which the full run covers.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

_SPAWNS = frozenset(
    {"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.system", "os.exec", "os.spawn", "pty.spawn"}
)
_running: list[str] = []


def _no_process(event: str, args: tuple[object, ...]) -> None:
    if _running and event in _SPAWNS:
        raise RuntimeError(f"{_running[-1]} starts a process ({event}): move it out of tests/fast/")


sys.addaudithook(_no_process)


@pytest.fixture(autouse=True)
def no_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """Arm the guard for each fast test (setup, call and teardown of its function-scoped fixtures)."""
    _running.append(request.node.nodeid)
    try:
        yield
    finally:
        _running.pop()
