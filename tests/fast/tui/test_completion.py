"""What the prompt completes at the cursor, and the candidates: a table, no app (tui/completion.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from freeact_tui.tui.commands import COMMANDS
from freeact_tui.tui.completion import (
    CompletionContext,
    command_entries,
    common_prefix,
    completion_context,
    filter_commands,
    path_candidates,
    session_candidates,
)


@pytest.mark.parametrize(
    ("line", "row", "expected"),
    [
        ("/", 0, CompletionContext("command", 1, "")),
        ("/mo", 0, CompletionContext("command", 1, "mo")),
        ("/model ", 0, None),  # the name is done: nothing to complete (the argument is free)
        ("//literal", 0, None),  # "//" sends a prompt starting with "/"
        ("/etc/hos", 0, None),  # a path is a prompt, not a command
        ("  /mo", 0, None),  # a command only at the prompt's start
        ("/mo", 1, None),  # … on its first line
        ("/resume ", 0, CompletionContext("session", 8, "")),
        ("/resume 3f2", 0, CompletionContext("session", 8, "3f2")),
        ("/RESUME  3f", 0, CompletionContext("session", 9, "3f")),
        ("look at @src/ma", 0, CompletionContext("path", 9, "src/ma")),
        ("@", 2, CompletionContext("path", 1, "")),
        ("mail me@example", 0, None),  # "@" inside a word is no mention
        ("look at @src/main.py ", 0, None),  # the word is done
        ("plain words", 0, None),
        ("", 0, None),
    ],
)
def test_what_the_cursor_completes(line: str, row: int, expected: CompletionContext | None) -> None:
    assert completion_context(line, row) == expected


def test_the_menu_lists_every_registered_command_and_the_skills() -> None:
    entries = command_entries([("task-planning", "Plan a task\n  in steps")])
    assert [e.text for e in entries] == [spec.name for spec in COMMANDS] + ["task-planning"]
    assert all(e.help for e in entries)
    model = next(e for e in entries if e.text == "model")
    assert model.label == "/model [NAME]" and model.runs
    skill = entries[-1]
    assert skill.label == "/task-planning" and skill.help == "Skill: Plan a task in steps" and not skill.runs


@pytest.mark.parametrize(
    ("typed", "first"),
    [
        ("", ["help", "new", "sessions"]),  # the registry's order
        ("mo", ["model", "memory"]),  # the prefix, then its letters in order
        ("co", ["context", "compact", "cost", "config"]),  # prefixes, in registry order
        ("xt", ["context"]),  # inside the name
        ("rwd", ["rewind"]),  # its letters in order, when nothing matches better
        ("ski", ["skills"]),  # not also task-planning (t-a-S-K-planning-I)
        ("PERM", ["permissions"]),
        ("cop", ["cop", "copy"]),  # typed in full first, before a command it is a prefix of
        ("task-planning", ["task-planning"]),
        ("zz", []),
    ],
)
def test_commands_filter_by_prefix_then_inside_else_letters(typed: str, first: list[str]) -> None:
    found = [
        e.text
        for e in filter_commands(command_entries([("task-planning", "Plan"), ("cop", "A skill")]), typed)
    ]
    assert found[: len(first)] == first
    if typed in ("ski", "zz", "mo", "cop"):
        assert found == first


def test_paths_and_common_prefixes() -> None:
    paths = ["README.md", "src/alpha.py", "src/beta.py", "tests/test_alpha.py"]
    assert [c.text for c in path_candidates(paths, "src/")] == ["src/alpha.py", "src/beta.py"]
    assert [c.text for c in path_candidates(paths, "read")] == ["README.md"]  # any case
    assert path_candidates(paths, "nope") == []
    assert common_prefix(["src/alpha.py", "src/beta.py"]) == "src/"
    assert common_prefix(["src/alpha.py"]) == "src/alpha.py"
    assert common_prefix([]) == ""


@dataclass
class Info:
    id: str
    title: str
    updated: datetime


def test_sessions_complete_by_id_prefix_newest_first() -> None:
    infos = [
        Info(
            "3f2a9c00-0000-4000-8000-000000000001", "Plot the CSV", datetime(2026, 11, 27, 6, 40, tzinfo=UTC)
        ),
        Info("3f2b1111-0000-4000-8000-000000000002", "", datetime(2026, 11, 26, 9, 5, tzinfo=UTC)),
        Info("9a000000-0000-4000-8000-000000000003", "Other", datetime(2026, 11, 25, 9, 5, tzinfo=UTC)),
    ]
    found = session_candidates(infos, "3F2")
    assert [c.text for c in found] == [infos[0].id, infos[1].id]
    assert found[0].label == "3f2a9c00" and found[0].help == "2026-11-27 06:40  Plot the CSV"
    assert found[1].help.endswith("(untitled)")
    assert common_prefix([c.text for c in found]) == "3f2"
