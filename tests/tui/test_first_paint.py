"""The first frame comes before the heavy stack: the real command line, started in a pseudo-terminal,
draws its prompt with the placeholder before pydantic-ai, ipybox, MCP or the agent are imported (they
load after that frame, in the background), before Markdown and its syntax highlighter, which only the
conversation's blocks need; the spare kernel gateway, spawned just before the first frame so that its
imports run beside it, knows nothing of the project yet. A hook in the process notes ``sys.modules``
and the child processes at the first frame that shows the placeholder."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The console script with one hook: at the first frame written to the terminal that shows the prompt's
# placeholder, the loaded modules go to a file. Everything else is the real command line.
HOOK = r"""
import json, os, re, sys
import textual.app

_display = textual.app.App._display

def display(self, screen, renderable):
    _display(self, screen, renderable)
    if renderable is None or os.path.exists(out) or type(screen).__name__ != "MainScreen":
        return
    if not hasattr(renderable, "render_segments"):
        return
    # The text as the terminal shows it (the cursor's style splits the placeholder's first letter off).
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", renderable.render_segments(self.console))
    if "Ask anything" not in text:
        return  # a frame before the prompt is drawn
    children = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            if int(stat[stat.rindex(b")") + 2:].split()[1]) == os.getpid():
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    command = f.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{pid}/environ", "rb") as f:
                    environ = f.read().decode(errors="replace").split("\0")
                children.append({"command": command, "cwd": os.readlink(f"/proc/{pid}/cwd"), "environ": environ})
        except (OSError, ValueError):
            pass
    with open(out + ".part", "w") as f:
        json.dump({"modules": sorted(sys.modules), "children": children}, f)
    os.replace(out + ".part", out)

textual.app.App._display = display
out = sys.argv[1]
sys.argv = ["freeact-tui", "--model", "test"]
from freeact_tui.cli.entry import main
main()
"""

# What the first frame must not wait for (each takes tenths of a second to import).
HEAVY = (
    "pydantic_ai",
    "ipybox",
    "mcp",
    "fastmcp",
    "httpx",
    "openai",
    "jupyter_client",
    "freeact_tui.agent",
    "freeact_tui.execution.kernel.executor",
    "markdown_it",
    "pygments",
    "IPython",  # the effects reading's input transformers: imported at the first reading
)


def at_first_frame(tmp_path: Path, limit: float = 90.0, home: Path | None = None) -> dict[str, Any]:
    """The real command line (``--model test``) at its first frame with the placeholder: its loaded
    ``modules`` and its ``children`` (their command lines, working dirs and environments). ``home``:
    the user's home (default: in ``tmp_path``; given, it may be an earlier launch's)."""
    work, home = tmp_path / "work", home or tmp_path / "home"
    work.mkdir(parents=True)
    out = tmp_path / "modules.json"
    hook = tmp_path / "hook.py"
    hook.write_text(HOOK)
    env = {
        **os.environ,
        "HOME": str(home),
        "FREEACT_TUI_HOME": str(home / "app"),
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
    }
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    app = subprocess.Popen(
        [sys.executable, str(hook), str(out)],
        stdin=slave, stdout=slave, stderr=slave, cwd=work, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    shown: list[bytes] = []

    def drain() -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(master, 65536):
                shown.append(chunk)

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + limit
        while not out.exists():
            screen = b"".join(shown).decode(errors="replace")[-2000:]
            assert app.poll() is None, f"the app ended ({app.returncode}):\n{screen}"
            assert time.monotonic() < deadline, f"no frame with the placeholder:\n{screen}"
            time.sleep(0.02)
        seen: dict[str, list[str]] = json.loads(out.read_text())
        return seen
    finally:
        group = os.getpgid(app.pid) if app.poll() is None else None
        app.send_signal(signal.SIGTERM)  # quits as Ctrl+Q does
        try:
            app.wait(30)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
        if group is not None:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)
        os.close(master)


def heavy_among(modules: list[str]) -> list[str]:
    """The entries of ``HEAVY`` of which a module is loaded."""
    return [h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in modules)]


@pytest.mark.timeout(120)
def test_the_first_frame_comes_before_the_agent_stack_and_markdown_beside_a_blind_spare_gateway(
    tmp_path: Path,
) -> None:
    seen = at_first_frame(tmp_path)
    assert "freeact_tui.tui.screens.main" in seen["modules"], "the hook did not see the app's main screen"
    assert heavy_among(seen["modules"]) == []
    # The only process started yet is the spare kernel gateway (its imports run on the other core while
    # the first frame is drawn), and it knows nothing of the working dir: that comes after the trust
    # decision, through its stdin.
    children = seen["children"]
    assert len(children) == 1, children
    for child in children:
        assert "spare_gateway:imported" in child["command"], child["command"][:300]
        assert child["cwd"] == "/"
        assert not [v for v in child["environ"] if str(tmp_path / "work") in v], child["environ"]
