"""Whole-process start-up figures, measured as a user meets them (not in-process).

- launch → prompt accepting keys: the real ``freeact-tui`` started in a tmux pane; the clock stops
  when a key typed into the pane shows in the prompt (the screen is polled every 10 ms).
- ``freeact-tui --version`` and ``python -c 'import textual'`` (the reference it is held to).
- ``freeact-tui sessions list`` over 1,000 stored sessions.

Each figure is the median of ``--runs`` runs. Needs tmux.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CLI = [sys.executable, "-c", "from freeact_tui.cli import main; main()"]
MARK = "zq"  # typed into the prompt once it is up; its echo proves the prompt accepts keys


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "FREEACT_TUI_HOME": str(home), "PYTHONPATH": str(ROOT)}


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def _pane(session: str) -> str:
    out = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True)
    return out.stdout


def launch_once(home: Path, cwd: Path, timeout: float = 60.0) -> float:
    """Seconds from spawning the app in a tmux pane to a typed key showing in its prompt."""
    session = f"bench-launch-{uuid.uuid4().hex[:8]}"
    env = _env(home)
    command = " ".join(
        [
            *(f"{k}={v!r}" for k, v in env.items() if k in ("FREEACT_TUI_HOME", "PYTHONPATH")),
            *(repr(a) for a in CLI),
            "--model",
            "test",
        ]
    )
    start = time.perf_counter()
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "34", "-c", str(cwd), command],
        check=True,
        env=env,
    )
    try:
        typed = False
        while time.perf_counter() - start < timeout:
            screen = _pane(session)
            if not typed and "╭" in screen:  # the prompt box is drawn
                subprocess.run(["tmux", "send-keys", "-t", session, "-l", MARK], check=True)
                typed = True
            elif typed and MARK in screen:
                return time.perf_counter() - start
            time.sleep(0.01)
        raise TimeoutError(f"the prompt did not accept keys within {timeout:g} s:\n{_pane(session)}")
    finally:
        subprocess.run(["tmux", "send-keys", "-t", session, "C-q"], capture_output=True)
        deadline = time.perf_counter() + 15
        while time.perf_counter() < deadline:
            alive = subprocess.run(["tmux", "has-session", "-t", session], capture_output=True)
            if alive.returncode != 0:
                break
            time.sleep(0.1)
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def make_sessions(root: Path, count: int) -> None:
    from freeact_tui.store.index import encode_envelope, utc_now_ts

    for _ in range(count):
        sid = str(uuid.uuid4())
        directory = root / sid
        directory.mkdir(parents=True)
        request = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": f"task {sid[:8]}"}]}
        response = {"kind": "response", "parts": [{"part_kind": "text", "content": "done"}]}
        ts = utc_now_ts()
        (directory / "main.jsonl").write_bytes(encode_envelope(request, ts) + encode_envelope(response, ts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("bench/launch.py needs tmux")

    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        env = _env(home)
        textual = [_timed([sys.executable, "-c", "import textual"], env, cwd) for _ in range(args.runs)]
        version = [_timed([*CLI, "--version"], env, cwd) for _ in range(args.runs)]
        make_sessions(home / "data" / "sessions", 1000)
        _timed([*CLI, "sessions", "list"], env, cwd)  # the first listing writes the index
        listing = [_timed([*CLI, "sessions", "list"], env, cwd) for _ in range(args.runs)]
        launch = [launch_once(home, cwd) for _ in range(args.runs)]

    figures = {
        "launch_to_prompt_accepting_keys_s": round(statistics.median(launch), 3),
        "launch_runs_s": [round(x, 3) for x in launch],
        "version_s": round(statistics.median(version), 3),
        "import_textual_s": round(statistics.median(textual), 3),
        "version_vs_textual": round(statistics.median(version) / statistics.median(textual), 2),
        "sessions_list_1000_s": round(statistics.median(listing), 3),
        "load_average": round(os.getloadavg()[0], 2),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        width = max(map(len, figures)) + 2
        for key, value in figures.items():
            print(f"{key:{width}} {value}")


if __name__ == "__main__":
    main()
