"""``freeact-tui sessions …`` through typer's CliRunner, on copies of freeact-format sessions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from typer.testing import CliRunner

from freeact_tui.cli.sessions import sessions_app
from freeact_tui.store import SessionStore

FIXTURES = Path(__file__).parents[2] / "fixtures" / "freeact_sessions"
FREEACT_ID = "3f1c2b9e-5d47-4a8e-9c21-7b6f0e4d8a10"
OLD_ID = "0b9e8c7d-2a41-4f3e-8d5c-6e1f2a3b4c5d"

runner = CliRunner()


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FREEACT_TUI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "sessions"
    shutil.copytree(FIXTURES, target)
    return target


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(sessions_app, list(args), input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_list_newest_first_with_titles_and_counts(root: Path) -> None:
    code, out, _ = run("list", "--sessions-dir", str(root))
    assert code == 0
    lines = out.splitlines()
    assert "ID" in lines[0] and "Title" in lines[0] and "Msgs" in lines[0]
    assert lines[1].startswith(FREEACT_ID[:8]) and " 8 " in lines[1] and "Plot a sine wave" in lines[1]
    assert lines[2].startswith(OLD_ID[:8]) and "What is 17 * 23?" in lines[2]
    code, out, _ = run("list", "--limit", "1", "--full-ids", "--sessions-dir", str(root))
    assert FREEACT_ID in out and OLD_ID not in out and "1 older sessions not shown" in out


def test_list_uses_the_configured_sessions_dir(root: Path, tmp_path: Path) -> None:
    config = tmp_path / "cfg.toml"
    config.write_text(f'sessions_dir = "{root}"\n')
    code, out, _ = run("list", "--config", str(config))
    assert code == 0 and FREEACT_ID[:8] in out
    code, out, _ = run("list")  # default dir under FREEACT_TUI_HOME: empty
    assert code == 0 and "No sessions in" in out and str(tmp_path / "home") in out


def test_broken_config_is_one_line_exit_2(root: Path, tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("sesions_dir = 3\n")
    code, out, err = run("list", "--config", str(config))
    assert code == 2 and "sesions_dir" in err and "Traceback" not in err + out


def test_show_renders_the_conversation(root: Path) -> None:
    code, out, _ = run("show", FREEACT_ID[:6], "--sessions-dir", str(root))
    assert code == 0
    assert f"Session {FREEACT_ID}" in out
    assert "── User" in out and "Plot a sine wave from 0 to 2π" in out
    assert "── Thinking" in out and "zero crossings are at 0" in out
    assert "── Code action" in out and "    plt.plot(x, np.sin(x))" in out
    assert "── Tool result: ipybox_execute_ipython_cell" in out and "[image/png, 70 B]" in out
    assert "── Subagent task" in out and "Describe the attached image" in out
    assert "── Assistant" in out and "2π ≈ 6.2832" in out
    assert "You are a code-action agent" not in out
    code, out, _ = run("show", FREEACT_ID, "--system", "--agent", "sub-7a3f", "--sessions-dir", str(root))
    assert code == 0 and "You are a subagent." in out and "A single white pixel." in out


def test_show_damaged_session_prints_what_loads_and_fails(root: Path) -> None:
    main = root / OLD_ID / "main.jsonl"
    lines = main.read_text().splitlines(keepends=True)
    main.write_text("".join(lines[:3]) + "garbage\n" + "".join(lines[3:]))
    code, out, err = run("show", OLD_ID, "--sessions-dir", str(root))
    assert code == 1
    assert "What is 17 * 23?" in out and "17 * 23 = 391." not in out
    assert err.count("\n") == 1 and f"{main}, line 4" in err and "Traceback" not in err
    code, out, err = run("export", OLD_ID, "--sessions-dir", str(root))
    assert code == 1 and out == "" and "line 4" in err


@pytest.mark.parametrize(
    ("arg", "code", "message"),
    [
        ("../../etc", 2, "Invalid session id"),
        ("ab", 2, "Invalid session id"),
        ("ffffffff", 1, "No session matches"),
    ],
)
def test_bad_ids_are_one_line_errors(root: Path, arg: str, code: int, message: str) -> None:
    for command in (["show", arg], ["export", arg], ["rm", arg, "--yes"]):
        exit_code, out, err = run(*command, "--sessions-dir", str(root))
        assert exit_code == code and message in err and err.count("\n") == 1, (command, err)
        assert "Traceback" not in err + out


def test_ambiguous_prefix(root: Path) -> None:
    store = SessionStore(root)
    for suffix in ("1", "2"):
        store.session(f"3f1c2b9e-0000-4000-8000-00000000000{suffix}").append(
            [ModelRequest(parts=[UserPromptPart("x")]), ModelResponse(parts=[TextPart("y")])]
        )
    code, _, err = run("show", "3f1c2b9e-0000", "--sessions-dir", str(root))
    assert code == 1 and "ambiguous" in err
    code, out, _ = run("list", "--sessions-dir", str(root))
    assert code == 0 and "3f1c2b9e-0000-4000-8000-000000000001" in out  # short ids grow until unique


def test_export_markdown_and_json(root: Path, tmp_path: Path) -> None:
    code, out, _ = run("export", FREEACT_ID[:8], "--sessions-dir", str(root))
    assert code == 0
    assert out.startswith("# Plot a sine wave")
    assert "## Code action\n\n```python\nimport numpy as np" in out
    assert "## Thinking\n\n> I'll plot it" in out

    target = tmp_path / "out" / "session.json"
    code, _, err = run(
        "export", FREEACT_ID, "--format", "json", "--output", str(target), "--sessions-dir", str(root)
    )
    assert code == 0 and "Exported 8 messages" in err
    data = json.loads(target.read_text())
    assert len(data) == 8 and data[2]["parts"][0]["content"][1]["media_type"] == "image/png"
    assert target.stat().st_mode & 0o077 == 0

    code, _, err = run("export", FREEACT_ID, "--format", "pdf", "--sessions-dir", str(root))
    assert code == 2 and "unknown format" in err


def test_rm_asks_unless_yes(root: Path) -> None:
    code, _, err = run("rm", OLD_ID[:8], "--sessions-dir", str(root), input="n\n")
    assert code == 1 and "Nothing removed" in err and (root / OLD_ID).is_dir()
    code, out, _ = run("rm", OLD_ID[:8], "--sessions-dir", str(root), input="y\n")
    assert code == 0 and f"Removed session {OLD_ID}" in out and not (root / OLD_ID).exists()
    code, out, _ = run("rm", FREEACT_ID, "--yes", "--sessions-dir", str(root))
    assert code == 0 and not (root / FREEACT_ID).exists()
    code, out, _ = run("list", "--sessions-dir", str(root))
    assert code == 0 and "No sessions" in out
