"""The command line: what a user sees before the app starts (version, bad config, bad session ids)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freeact_tui.cli import app, resolve_session_id
from freeact_tui.project.config import load_config
from tests.helpers import CLI, cli

runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("freeact-tui 0.")


def test_broken_config_is_one_clear_message_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("execution_timeout = 'soon'\n")
    result = runner.invoke(app, ["--config", str(bad)])
    assert result.exit_code == 2
    assert "Invalid configuration" in result.output and "execution_timeout" in result.output
    assert "Traceback" not in result.output


def test_session_id_that_is_not_a_uuid_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--session-id", "../../etc"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert not (tmp_path / "etc").exists()


def test_session_id_and_resume_are_exclusive() -> None:
    result = runner.invoke(app, ["--session-id", "abcd", "--resume"])
    assert result.exit_code == 2 and "either" in result.output


def test_unknown_prefix_and_unknown_full_id_are_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--session-id", "abcd1234"])
    assert result.exit_code == 2 and "no session matches" in result.output
    unknown = "3f2a1c4e-0000-4000-8000-000000000001"
    result = runner.invoke(app, ["--config", str(_sessions_config(tmp_path)), "--session-id", unknown])
    assert result.exit_code == 2 and f"no session {unknown} in {tmp_path}" in result.output
    assert ".freeact/sessions" in result.output and "sessions_dir" in result.output
    assert not any(tmp_path.iterdir())  # no empty session was made under that id


def _sessions_config(sessions_dir: Path) -> Path:
    path = sessions_dir.parent / f"{sessions_dir.name}.toml"
    path.write_text(f"sessions_dir = {str(sessions_dir)!r}\n")
    return path


def test_resume_without_sessions_starts_new(tmp_path: Path) -> None:
    config = load_config(overrides={"sessions_dir": tmp_path}, cwd=tmp_path)
    assert resolve_session_id(config, None, True) is None


def test_sessions_subcommand_is_mounted() -> None:
    result = runner.invoke(app, ["sessions", "list"])
    assert result.exit_code == 0


def test_python_dash_m_entry_point() -> None:
    out = subprocess.run(
        [*CLI, "--version"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0 and "freeact-tui" in out.stdout


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command line in a subprocess, with its own home (no user config is read)."""
    return cli(*args, cwd=tmp_path, env={"FREEACT_TUI_HOME": str(tmp_path / "home")})


def test_config_given_before_sessions_applies_to_it(tmp_path: Path) -> None:
    sessions = tmp_path / "elsewhere"
    sessions.mkdir()
    good = tmp_path / "good.toml"
    good.write_text(f"sessions_dir = {str(sessions)!r}\n")
    out = _cli(tmp_path, "--config", str(good), "sessions", "list")
    assert out.returncode == 0, out.stderr
    assert f"No sessions in {sessions}" in out.stdout
    # Without it, the default directory is listed.
    default = _cli(tmp_path, "sessions", "list")
    assert default.returncode == 0 and str(sessions) not in default.stdout


def test_broken_config_given_before_sessions_is_the_clear_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("execution_timeout = 'soon'\n")
    out = _cli(tmp_path, "--config", str(bad), "sessions", "list")
    assert out.returncode == 2
    assert "Invalid configuration" in out.stderr and "execution_timeout" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout


def test_app_options_that_do_not_apply_to_sessions_are_refused(tmp_path: Path) -> None:
    out = _cli(tmp_path, "--model", "test", "-e", "docker", "sessions", "list")
    assert out.returncode == 2
    assert "--model, --execution do not apply to `sessions`" in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_short_help_option() -> None:
    for args in (["-h"], ["run", "-h"], ["sessions", "-h"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Usage: freeact-tui" in result.output, args


def test_options_given_before_run_apply_to_it_and_its_own_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`freeact-tui --model X --trust run …` is how people type it: the options before the
    subcommand reach the run, and one repeated after the subcommand wins."""
    from freeact_tui.cli import run as headless
    from freeact_tui.project.config import Config

    seen: list[Config] = []

    def run_from_config(config: Config, text: str, **_: object) -> int:
        seen.append(config)
        return 0

    monkeypatch.setenv("FREEACT_TUI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".freeact-tui.toml").write_text("execution_timeout = 7\n")
    monkeypatch.setattr(headless, "run_from_config", run_from_config)
    given = ["--model", "test", "--action-protocol", "text", "--trust", "--base-url", "http://x/v1"]
    result = runner.invoke(app, [*given, "run", "hi"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, [*given, "run", "--model", "demo", "--action-protocol", "tools", "hi"])
    assert result.exit_code == 0, result.output
    first, second = seen
    assert (first.model, first.action_protocol, first.base_url) == ("test", "text", "http://x/v1")
    assert first.project_trusted and first.execution_timeout == 7  # --trust before `run` trusted it
    assert (second.model, second.action_protocol) == ("demo", "tools")


def test_resume_takes_a_session_id_as_claude_code_does(tmp_path: Path) -> None:
    from freeact_tui.cli.entry import resume_with_id

    assert resume_with_id(["--resume", "ab12cd34"]) == ["--session-id", "ab12cd34"]
    assert resume_with_id(["-r", "ab12-cd", "-m", "demo"]) == ["--session-id", "ab12-cd", "-m", "demo"]
    assert resume_with_id(["--resume", "-m", "demo"]) == ["--resume", "-m", "demo"]  # the latest here
    assert resume_with_id(["--resume", "sessions", "list"]) == ["--resume", "sessions", "list"]
    # The real command line: the id goes where --session-id's goes (an unknown one is named).
    by_resume = _cli(tmp_path, "--resume", "abcd1234")
    by_id = _cli(tmp_path, "--session-id", "abcd1234")
    assert by_resume.returncode == by_id.returncode != 0
    assert by_resume.stderr == by_id.stderr and "abcd1234" in by_resume.stderr
