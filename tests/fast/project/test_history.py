"""Prompt history: navigation with a kept draft, persistence, damage tolerance, file mode."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from freeact_tui.project import paths
from freeact_tui.tui.history import PromptHistory, default_history_path


def test_default_path_is_beside_the_state_file() -> None:
    assert default_history_path() == paths.state_file().parent / "history.jsonl"
    assert PromptHistory().path == default_history_path()


def test_navigation_keeps_the_draft(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h.jsonl")
    for text in ("first", "second", "third"):
        assert history.append(text)
    assert history.next() is None  # not browsing yet
    assert history.previous("half-typed") == "third"
    assert history.previous("ignored") == "second"
    assert history.previous() == "first"
    assert history.previous() is None  # the oldest stays put
    assert history.next() == "second"
    assert history.next() == "third"
    assert history.next() == "half-typed"  # past the newest: the draft comes back
    assert not history.browsing
    assert history.next() is None


def test_empty_history_navigates_nowhere(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h.jsonl")
    assert history.previous("draft") is None
    assert history.next() is None


def test_append_dedupes_consecutive_and_skips_blank(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h.jsonl")
    assert history.append("ls")
    assert not history.append("ls")
    assert not history.append("   \n")
    assert history.append("pwd")
    assert history.append("ls")  # not consecutive: kept
    assert history.entries == ["ls", "pwd", "ls"]


def test_append_resets_browsing(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h.jsonl")
    history.append("a")
    history.append("b")
    assert history.previous("x") == "b"
    history.append("c")
    assert history.previous("") == "c"


def test_persists_across_instances_with_private_mode(tmp_path: Path) -> None:
    path = tmp_path / "state" / "history.jsonl"
    first = PromptHistory(path)
    first.append("multi\nline prompt with ünïcode")
    first.append("second")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = PromptHistory(path)
    assert again.entries == ["multi\nline prompt with ünïcode", "second"]
    assert again.previous("") == "second"
    assert not again.append("second")  # dedupe spans restarts


def test_max_entries_trims_and_compacts(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path, max_entries=3)
    for i in range(10):
        history.append(f"p{i}")
    assert history.entries == ["p7", "p8", "p9"]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 6  # compacted once the file held twice max_entries
    assert PromptHistory(path, max_entries=3).entries == ["p7", "p8", "p9"]
    with pytest.raises(ValueError):
        PromptHistory(path, max_entries=0)


def test_damaged_lines_are_skipped_and_kept_in_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(
        '{"text": "good one"}\nnot json at all\n{"other": 1}\n{"text": 42}\n{"text": "good two"}\n{"text": "trunc',
        encoding="utf-8",
    )
    history = PromptHistory(path, max_entries=2)
    assert history.entries == ["good one", "good two"][-2:]
    assert history.load_warning is not None and "4 damaged" in history.load_warning
    history.append("new")  # the truncated last line must not swallow this one
    assert PromptHistory(path, max_entries=2).entries == ["good two", "new"]
    for i in range(4):
        history.append(f"more {i}")  # forces compaction
    backup = path.with_name("h.jsonl.bak")
    assert backup.exists() and "not json at all" in backup.read_text(encoding="utf-8")
    for line in path.read_text(encoding="utf-8").splitlines():
        json.loads(line)  # compacted file is clean


def test_unreadable_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.mkdir()  # reading a directory fails with an OSError
    history = PromptHistory(path)
    assert history.entries == [] and history.load_warning is not None
    assert history.append("kept in memory")
    assert history.entries == ["kept in memory"]
    assert path.is_dir()


def test_write_failure_raises_but_keeps_the_entry(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    history = PromptHistory(blocker / "h.jsonl")
    blocker.write_text("a file where the directory should be", encoding="utf-8")
    with pytest.raises(OSError):
        history.append("hello")
    assert history.entries == ["hello"]


def test_clear_removes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path)
    history.append("x")
    history.clear()
    assert not path.exists() and len(history) == 0
