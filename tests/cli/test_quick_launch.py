"""The quick launch path: ``freeact-tui [app options]`` starts the app without typer, and typer stays
the one definition of the options. The quick parser's table is checked against typer's command, both
parse the same command lines to the same values, errors read the same on both paths, and the real
command line reaches its first frame without importing typer."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from freeact_tui.cli.app_options import APP_OPTIONS, quick_app_params
from freeact_tui.cli.entry import app_params
from freeact_tui.cli.main import app
from tests.tui import test_first_paint
from tests.tui.test_first_paint import at_first_frame

ROOT = Path(__file__).resolve().parents[2]
COMMAND = typer.main.get_command(app)
SAMPLE = {str: "anthropic:claude-sonnet-4-5", Path: "some/config.toml"}


def _typer_params(argv: list[str]) -> dict[str, Any]:
    """What typer passes the app callback for ``argv`` (parsed and converted, not run)."""
    ctx = COMMAND.make_context("freeact-tui", list(argv))
    assert ctx.invoked_subcommand is None and not ctx.args and not getattr(ctx, "protected_args", None)
    return {name: value for name, value in ctx.params.items() if name != "version"}


def _typed(params: dict[str, Any]) -> dict[str, tuple[type, Any]]:
    return {name: (type(value), value) for name, value in params.items()}


def test_the_table_is_typer_s_options() -> None:
    typer_options = {
        p.name: (tuple(p.opts) + tuple(p.secondary_opts), p.is_flag, p.multiple, p.envvar)
        for p in COMMAND.params
        if p.name != "version"
    }
    table = {o.name: (o.flags, o.is_flag, False, None) for o in APP_OPTIONS}
    assert table == typer_options


def _command_lines() -> list[list[str]]:
    """Every option in every plain form (each choice of a choice option), then some together."""
    lines: list[list[str]] = [[]]
    for option in APP_OPTIONS:
        if option.is_flag:
            lines += [[flag] for flag in option.flags]
            continue
        values = (
            [c.value for c in option.kind] if hasattr(option.kind, "__members__") else [SAMPLE[option.kind]]
        )
        for flag, value in itertools.product(option.flags, values):
            lines.append([flag, value])
            if flag.startswith("--"):
                lines.append([f"{flag}={value}"])
    lines += [
        ["--model", "test", "--trust", "-e", "local", "--log-level", "debug", "-r"],
        ["-m", "a", "--model=b", "-m", "c"],  # given again: the last wins
        ["--trust", "--trust", "--skip-permissions", "--remote-insecure", "--sandbox"],
        ["--base-url", "http://127.0.0.1:8000/v1", "--action-protocol", "text", "-s", "abcd", "-c", "x.toml"],
        ["--model", "a=b"],  # an = inside a value
    ]
    return lines


@pytest.mark.parametrize("argv", _command_lines(), ids=" ".join)
def test_the_quick_path_parses_as_typer_does(argv: list[str]) -> None:
    quick = quick_app_params(argv)
    assert quick is not None, argv
    assert _typed(quick) == _typed(_typer_params(argv))


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["--version"],
        ["sessions", "list"],
        ["--model", "test", "run", "hello"],
        ["acp"],
        ["init"],
        ["--unknown"],
        ["--execution", "bogus"],  # typer names the choices
        ["--log-level=loud"],
        ["--model"],  # no value
        ["--model", "--trust"],  # a value that looks like an option
        ["-m=test"],
        ["-mtest"],
        ["-rm", "test"],
        ["--trust=yes"],
        ["--model", ""],
        ["--", "--model", "x"],
    ],
    ids=" ".join,
)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert quick_app_params(argv) is None
    assert app_params(argv) is None  # what the entry point asks (without the import for a subcommand)


def test_the_entry_point_takes_what_the_quick_parser_takes() -> None:
    for argv in _command_lines():
        assert app_params(argv) == quick_app_params(argv), argv


QUICK = "from freeact_tui.cli import main\nmain()"
TYPER = "from freeact_tui.cli.main import main\nmain()"  # the typer app, as before the quick path


def _run(code: str, argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FREEACT_TUI_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--session-id", "abcd", "--resume"],
        ["--session-id", "../../etc"],
        ["--session-id", "abcd1234"],
        ["--session-id", "3f2a1c4e-0000-4000-8000-000000000001"],
        ["--config", "missing.toml"],
        ["--sandbox-config", "srt.json"],
        ["--sandbox", "--execution", "docker"],
    ],
    ids=" ".join,
)
def test_errors_read_the_same_without_typer(tmp_path: Path, argv: list[str]) -> None:
    assert quick_app_params(argv) is not None  # this command line takes the quick path
    quick, typed = _run(QUICK, argv, tmp_path), _run(TYPER, argv, tmp_path)
    assert quick.returncode == 2 and quick.stderr.startswith("freeact-tui: ")
    assert "Traceback" not in quick.stderr
    assert (quick.returncode, quick.stdout, quick.stderr) == (typed.returncode, typed.stdout, typed.stderr)


def test_a_broken_config_file_is_the_same_clear_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("execution_timeout = 'soon'\n")
    argv = ["--config", str(bad), "--model", "test"]
    quick, typed = _run(QUICK, argv, tmp_path), _run(TYPER, argv, tmp_path)
    assert quick.returncode == 2 and "execution_timeout" in quick.stderr
    assert (quick.returncode, quick.stdout, quick.stderr) == (typed.returncode, typed.stdout, typed.stderr)


# Imported where first used, not for the first frame: typer and the typer app, past turns, approval
# dialogs, the file picker, the pager, the session store.
LATER = (
    "typer",
    "freeact_tui.cli.main",
    "freeact_tui.tui.replay",
    "freeact_tui.tui.screens.approval",
    "freeact_tui.tui.screens.file_picker",
    "freeact_tui.tui.screens.pager",
    "freeact_tui.store",
)

# test_first_paint's hook, writing a second after the placeholder's frame instead of at it, with the
# garbage collector's state at that frame and after it.
WRITE_AT_FRAME = 'with open(out + ".part", "w") as f:'
GC_HOOK = test_first_paint.HOOK.replace(
    f"    {WRITE_AT_FRAME}\n        json.dump(",
    "    import gc\n"
    "    at_frame = gc.isenabled()\n"
    "    def write():\n"
    "        if os.path.exists(out):\n"
    "            return  # written by the timer of the first such frame\n"
    "        later = {'gc_at_frame': at_frame, 'gc_later': gc.isenabled(), 'frozen': gc.get_freeze_count()}\n"
    f"        {WRITE_AT_FRAME}\n"
    "            json.dump(later | ",
).replace(
    '    os.replace(out + ".part", out)',
    '        os.replace(out + ".part", out)\n    self.set_timer(1.0, write)',
)


@pytest.mark.timeout(120)
def test_the_first_frame_comes_without_typer_nor_what_is_used_later(tmp_path: Path) -> None:
    modules = at_first_frame(tmp_path)["modules"]
    assert "freeact_tui.tui.screens.main" in modules, "the hook did not see the app's main screen"
    assert [m for m in modules if any(m == p or m.startswith(p + ".") for p in LATER)] == []


@pytest.mark.timeout(120)
def test_garbage_is_collected_again_once_the_first_frame_is_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert GC_HOOK.count("set_timer") == 1 and "gc_at_frame" in GC_HOOK, "test_first_paint's hook changed"
    monkeypatch.setattr(test_first_paint, "HOOK", GC_HOOK)
    seen: dict[str, Any] = at_first_frame(tmp_path)
    assert "freeact_tui.tui.screens.main" in seen["modules"]
    assert seen["gc_at_frame"] is False  # start-up ran without collections
    assert seen["gc_later"] is True and seen["frozen"] == 0  # on again; start-up's garbage is freed too
