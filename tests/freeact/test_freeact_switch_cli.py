"""The `freeact` command takes freeact 0.11's commands and options (its ``cli.py``: ``run``/``init``,
``--sandbox``, ``--sandbox-config``, ``--log-level``, ``--session-id``, ``--skip-permissions``): each
works, or says plainly what to use instead."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freeact_tui.cli import app
from tests.freeact_peer import find_freeact

runner = CliRunner()


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir() or p.suffix in (".toml", ".md")}


def test_init_makes_the_project_freeact_init_makes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ours = tmp_path / "ours"
    ours.mkdir()
    monkeypatch.chdir(ours)
    result = runner.invoke(app, ["init", "--log-level", "debug"])
    assert result.exit_code == 0, result.output
    made = tree(ours)
    assert {
        ".freeact/config.toml",
        ".freeact/permissions.toml",
        ".freeact/plans",
        ".freeact/sessions",
    } <= made
    assert {
        f".freeact/skills/{n}/SKILL.md" for n in ("output-parsers", "saving-codeacts", "task-planning")
    } <= made
    # Run again: nothing is overwritten.
    (ours / ".freeact" / "config.toml").write_text('[agent]\nmodel = "openai:gpt-4o"\n')
    assert runner.invoke(app, ["init"]).exit_code == 0
    assert (ours / ".freeact" / "config.toml").read_text() == '[agent]\nmodel = "openai:gpt-4o"\n'

    python, _ = find_freeact()
    if python is not None:  # real `freeact init` makes the same files
        theirs = tmp_path / "theirs"
        theirs.mkdir()
        done = subprocess.run(
            [python, "-c", "import sys; from freeact.cli import main; sys.argv = ['freeact', 'init']; main()"],
            cwd=theirs, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert tree(theirs) == made


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sandbox-config", "srt.json"], "--sandbox-config is freeact's sandbox-runtime settings file"),
        (["run", "--sandbox-config", "srt.json", "hi"], "Use --sandbox (or --execution sandbox) without it"),
        (["--sandbox", "--execution", "docker"], "--sandbox and --execution docker contradict"),
        (["--log-level", "verbose"], "verbose"),
    ],
)
def test_what_has_no_counterpart_is_said_plainly(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code in (1, 2) and message in result.output and "Traceback" not in result.output


def test_freeacts_options_are_known(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--help"])
    for option in ("--sandbox", "--sandbox-config", "--log-level", "--session-id", "--skip-permissions"):
        assert option in result.output
    assert "init" in result.output and "run" in result.output


def test_log_level_sets_the_log_files_level(tmp_path: Path) -> None:
    import logging

    from freeact_tui.cli.main import LogLevel, _log_to_file

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        log_file = _log_to_file(LogLevel.debug)
        logging.getLogger("freeact_tui.test").debug("a debug line")
        root.handlers[0].flush()
        assert "a debug line" in log_file.read_text()
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:], root.level = handlers, level
