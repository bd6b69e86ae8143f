"""Whole-process start-up figures, measured as a user meets them (not in-process).

- launch → each start-up stage: the real ``freeact-tui`` started in a tmux pane with
  ``FREEACT_TUI_TIMELINE`` set, so the app appends ``<stage> <monotonic time>`` lines (see
  ``freeact_tui/timeline.py``); each stage is given in seconds since the bench spawned the pane.
  What the user sees is clocked from the pane (polled every 10 ms): the prompt accepting keys (a
  key typed into the pane shows in the prompt), the prompt's placeholder ("Ask anything") drawn,
  and ``kernel: ready`` in the status bar. The local kernel is launched right after the trust
  decision (``kernel_launch:*``, the backend's imports ``backend_import:*`` within it), before the
  agent's imports (``agent_import:*``); the tool server (``tool_server:*``) may come up after
  ``kernel:ready`` (a cell's request waits for it).
- A user's first launch is measured once, apart (its config was never seen valid, so it is validated
  before the first frame, see ``cli.launch.load_for_app``; the kernel spec is written): the medians
  are of the launches after it, as a user starts the app day to day.
- The same for a bare Textual app whose only widget is a prompt with that placeholder (the floor the
  app's first screen is held to), measured in the same run: others share the machine, so the ratio
  says more than either figure.
- ``freeact-tui --version`` and ``python -c 'import textual'`` (the reference it is held to).
- ``freeact-tui sessions list`` over 1,000 stored sessions (held to the same reference).

The checkout is byte-compiled first, as installing it does (``PYTHONDONTWRITEBYTECODE`` would
otherwise have every run compile the app's modules). Each figure is the median of ``--runs`` runs.
Needs tmux. ``--timeline-only`` skips the rest.
"""

from __future__ import annotations

import argparse
import compileall
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
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CLI = [sys.executable, "-c", "from freeact_tui.cli import main; main()"]
# A bare Textual app with a prompt: the floor of "launch -> placeholder drawn".
BARE_APP = """
from textual.app import App
from textual.widgets import TextArea

class Bare(App[None]):
    def compose(self):
        prompt = TextArea(id="prompt")
        prompt.placeholder = "Ask anything"
        yield prompt

Bare().run()
"""
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


SEEN = {  # what the pane shows -> the stage it marks (the user's view, not the app's)
    "screen:prompt_accepts_keys": MARK,
    "screen:placeholder_drawn": "Ask anything",
    "screen:kernel_ready": "kernel: ready",
}


def _spawn_pane(session: str, command: str, cwd: Path, env: dict[str, str]) -> float:
    start = time.monotonic()
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "34", "-c", str(cwd), command],
        check=True,
        env=env,
    )
    return start


def _end_pane(session: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", session, "C-q"], capture_output=True)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        alive = subprocess.run(["tmux", "has-session", "-t", session], capture_output=True)
        if alive.returncode != 0:
            break
        time.sleep(0.1)
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def bare_once(script: Path, cwd: Path, env: dict[str, str], timeout: float = 60.0) -> float:
    """Seconds from spawning the bare Textual app (``BARE_APP`` in ``script``) in a tmux pane to its
    placeholder drawn."""
    session = f"bench-bare-{uuid.uuid4().hex[:8]}"
    start = _spawn_pane(session, f"{sys.executable!r} {str(script)!r}", cwd, env)
    try:
        while "Ask anything" not in _pane(session):
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"the bare app did not start within {timeout:g} s")
            time.sleep(0.01)
        return time.monotonic() - start
    finally:
        _end_pane(session)


def launch_once(home: Path, cwd: Path, timeout: float = 60.0) -> dict[str, float]:
    """Seconds from spawning the app in a tmux pane to each stage (the app's timeline and the pane's)."""
    session = f"bench-launch-{uuid.uuid4().hex[:8]}"
    timeline = home.parent / f"timeline-{session}.txt"
    env = {**_env(home), "FREEACT_TUI_TIMELINE": str(timeline)}
    command = " ".join(
        [
            *(
                f"{k}={v!r}"
                for k, v in env.items()
                if k in ("FREEACT_TUI_HOME", "PYTHONPATH", "FREEACT_TUI_TIMELINE")
            ),
            *(repr(a) for a in CLI),
            "--model",
            "test",
        ]
    )
    seen: dict[str, float] = {}
    start = _spawn_pane(session, command, cwd, env)
    try:
        typed = False
        while len(seen) < len(SEEN):
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"the app did not start within {timeout:g} s:\n{_pane(session)}")
            screen = _pane(session)
            now = time.monotonic() - start
            if not typed and "╭" in screen:  # the prompt box is drawn
                subprocess.run(["tmux", "send-keys", "-t", session, "-l", MARK], check=True)
                typed = True
            for stage, text in SEEN.items():
                if stage not in seen and (typed or text != MARK) and text in screen:
                    seen[stage] = now
                    if text == MARK:  # erased: the placeholder shows only in an empty prompt
                        subprocess.run(["tmux", "send-keys", "-t", session, "BSpace", "BSpace"], check=True)
            time.sleep(0.01)
    finally:
        _end_pane(session)
    stages: dict[str, float] = {}
    lines = timeline.read_text().splitlines() if timeline.exists() else []  # a checkout without marks
    for line in lines:
        stage, _, at = line.rpartition(" ")
        stages.setdefault(stage, float(at) - start)  # the first time: a restart later is not start-up
    return {**stages, **seen}


def _stage_table(runs: list[dict[str, float]]) -> dict[str, float]:
    """The median of each stage over the runs that reached it, in the order the stages happen."""
    names = {name for run in runs for name in run}
    medians = {name: statistics.median([run[name] for run in runs if name in run]) for name in names}
    return {name: round(medians[name], 3) for name in sorted(medians, key=medians.__getitem__)}


def make_sessions(root: Path, count: int) -> None:
    from freeact_tui.store.envelope import encode_envelope, utc_now_ts

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
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--timeline-only", action="store_true", help="only the launch timeline")
    parser.add_argument("--root", type=Path, help="the checkout to measure (default: this one)")
    args = parser.parse_args()
    if args.root is not None:
        global ROOT
        ROOT = args.root.resolve()
    if shutil.which("tmux") is None:
        sys.exit("bench/launch.py needs tmux")

    compileall.compile_dir(ROOT / "freeact_tui", quiet=1)
    figures: dict[str, object] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        env = _env(home)
        if not args.timeline_only:
            textual = [_timed([sys.executable, "-c", "import textual"], env, cwd) for _ in range(args.runs)]
            version = [_timed([*CLI, "--version"], env, cwd) for _ in range(args.runs)]
            make_sessions(home / "data" / "sessions", 1000)
            _timed([*CLI, "sessions", "list"], env, cwd)  # the first listing writes the index
            listing = [_timed([*CLI, "sessions", "list"], env, cwd) for _ in range(args.runs)]
            figures |= {
                "version_s": round(statistics.median(version), 3),
                "import_textual_s": round(statistics.median(textual), 3),
                "version_vs_textual": round(statistics.median(version) / statistics.median(textual), 2),
                "sessions_list_1000_s": round(statistics.median(listing), 3),
                "sessions_list_vs_textual": round(statistics.median(listing) / statistics.median(textual), 2),
            }
        bare_app = Path(tmp) / "bare_app.py"
        bare_app.write_text(BARE_APP)
        # A user's first launch (the config never seen valid, so validated before the first frame; the
        # kernel spec not yet written): once, apart. The medians are of the launches after it.
        first = launch_once(home, cwd)
        launch, bare = [], []
        for _ in range(args.runs):  # interleaved: both see the same load
            bare.append(bare_once(bare_app, cwd, env))
            launch.append(launch_once(home, cwd))

    figures = {
        "launch_to_prompt_accepting_keys_s": round(
            statistics.median(r["screen:prompt_accepts_keys"] for r in launch), 3
        ),
        "launch_to_placeholder_drawn_s": round(
            statistics.median(r["screen:placeholder_drawn"] for r in launch), 3
        ),
        "bare_textual_placeholder_drawn_s": round(statistics.median(bare), 3),
        "placeholder_vs_bare": round(
            statistics.median(r["screen:placeholder_drawn"] for r in launch) / statistics.median(bare), 2
        ),
        "first_launch_placeholder_drawn_s": round(first["screen:placeholder_drawn"], 3),
        "first_launch_kernel_ready_s": round(first["screen:kernel_ready"], 3),
        "launch_to_kernel_ready_s": round(statistics.median(r["screen:kernel_ready"] for r in launch), 3),
        "launch_kernel_ready_runs_s": [round(r["screen:kernel_ready"], 3) for r in launch],
        **figures,
        "timeline_s": _stage_table(launch),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],  # before, after
    }
    if args.json:
        print(json.dumps(figures))
        return
    width = max(map(len, figures)) + 2
    for key, value in figures.items():
        if key != "timeline_s":
            print(f"{key:{width}} {value}")
    print("timeline (median s since spawn, 'app' = the app's own marks, 'screen:' = seen in the pane):")
    timeline = cast(dict[str, float], figures["timeline_s"])
    for stage, at in timeline.items():
        print(f"  {at:7.3f}  {stage}")


if __name__ == "__main__":
    main()
