"""``freeact-tui sessions list`` is answered without typer, pydantic-ai or textual, and prints exactly what
the typer command prints (which still answers everything the quick path does not take apart)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from freeact_tui.cli.entry import ListArgs, quick_list_args
from freeact_tui.store.envelope import encode_envelope, utc_now_ts

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ["typer", "click", "pydantic_ai", "textual", "mcp", "ipybox", "aiohttp"]


def _make_sessions(root: Path, count: int) -> None:
    for i in range(count):
        directory = root / str(uuid.uuid4())
        directory.mkdir(parents=True)
        request = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": f"task {i}\x1b[31m"}]}
        response = {"kind": "response", "parts": [{"part_kind": "text", "content": "done"}]}
        ts = utc_now_ts()
        (directory / "main.jsonl").write_bytes(encode_envelope(request, ts) + encode_envelope(response, ts))


def _run(code: str, argv: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FREEACT_TUI_HOME": str(home), "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    probe = f"import sys\nsys.argv = ['freeact-tui', *{argv!r}]\n{code}"
    return subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


QUICK = "from freeact_tui.cli import main\nmain()"
TYPER = "from freeact_tui.cli.main import main\nmain()"  # the typer app, as before the quick path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    _make_sessions(home / "data" / "sessions", 25)
    (tmp_path / "work").mkdir()
    return home


def test_sessions_list_imports_no_heavy_module(home: Path) -> None:
    code = f"{QUICK}\nimport json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = _run(code, ["sessions", "list"], home, home.parent / "work")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == []
    assert "older sessions not shown" in out.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions", "list"],
        ["sessions", "list", "-n", "3"],
        ["sessions", "list", "--limit=2", "--full-ids"],
        ["sessions", "list", "--all", "-a"],  # repeated: typer's answer
        ["sessions", "list", "-n", "0"],  # out of range: typer's error
        ["sessions", "list", "--limit", "x"],
        ["sessions", "list", "--config", "missing.toml"],  # a config error: typer's message and code
        ["sessions", "list", "--sessions-dir"],
        ["sessions", "list", "--bogus"],
        ["sessions", "list", "--help"],
    ],
)
def test_the_quick_path_prints_what_typer_prints(home: Path, argv: list[str]) -> None:
    cwd = home.parent / "work"
    quick, typer = _run(QUICK, argv, home, cwd), _run(TYPER, argv, home, cwd)
    assert (quick.returncode, quick.stdout, quick.stderr) == (typer.returncode, typer.stdout, typer.stderr)


def test_an_other_sessions_dir_and_an_empty_one(home: Path, tmp_path: Path) -> None:
    cwd = home.parent / "work"
    for where in (home / "data" / "sessions", tmp_path / "none"):
        argv = ["sessions", "list", "--all", "--sessions-dir", str(where)]
        quick, typer = _run(QUICK, argv, home, cwd), _run(TYPER, argv, home, cwd)
        assert quick.returncode == 0, quick.stderr
        assert (quick.stdout, quick.stderr) == (typer.stdout, typer.stderr)
    assert quick.stdout == f"No sessions in {tmp_path / 'none'}\n"


def test_what_the_quick_path_takes_apart() -> None:
    assert quick_list_args(["sessions", "list"]) == ListArgs()
    assert quick_list_args(["sessions", "list", "-n", "5", "-a", "--config=c.toml"]) == ListArgs(
        limit=5, show_all=True, config=Path("c.toml")
    )
    for argv in (
        ["--config", "c.toml", "sessions", "list"],  # an app option before the subcommand
        ["sessions", "show", "x"],
        ["sessions", "list", "-n=5"],
        ["sessions", "list", "-n5"],
        ["sessions", "list", "-an", "5"],
        ["sessions", "list", "--limit", "+5"],
        ["sessions", "list", "--config", "--all"],
        ["sessions", "list", "--"],
    ):
        assert quick_list_args(argv) is None, argv
