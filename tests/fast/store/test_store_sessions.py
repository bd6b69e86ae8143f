"""One session on disk: ids, append/load round trip, damage, truncated tails, rollback, metadata, files."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)

from freeact_tui.store import (
    InvalidSessionId,
    SessionDamaged,
    SessionStore,
    new_session_id,
    validate_session_id,
)
from tests.helpers import PNG, conversation, dumped


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions")


@pytest.mark.parametrize(
    "raw", ["../../etc", "..", ".", "x/../y", "", "/etc/passwd", "a\0b", "a\nb", "x\\..\\y", "x" * 201]
)
def test_bad_session_ids_are_refused_before_any_path_exists(store: SessionStore, raw: str) -> None:
    with pytest.raises(InvalidSessionId):
        store.session(raw)
    with pytest.raises(InvalidSessionId):
        store.delete(raw)
    assert not store.root.exists()


def test_session_ids_are_canonical_uuids() -> None:
    fresh = new_session_id()
    assert validate_session_id(fresh) == fresh
    assert validate_session_id(" " + fresh.upper() + "\n") == fresh


def test_round_trip_keeps_every_part_including_images(store: SessionStore) -> None:
    session = store.new_session()
    messages = conversation()
    session.append(messages[:1])
    session.append(messages[1:])

    loaded = store.session(session.id).load()

    assert loaded.damage is None and not loaded.truncated_tail
    assert dumped(loaded.messages) == dumped(messages)
    tool_return: Any = loaded.messages[2].parts[0]
    assert tool_return.content[1].data == PNG


def test_lines_are_freeact_envelopes(store: SessionStore) -> None:
    session = store.new_session()
    session.append(conversation())
    lines = (session.dir / "main.jsonl").read_text().splitlines()
    assert len(lines) == 4
    for line in lines:
        envelope = json.loads(line)
        assert envelope["v"] == 1 and set(envelope) == {"v", "message", "meta"}
        assert set(envelope["meta"]) == {"ts"} and envelope["meta"]["ts"].endswith("Z")


def test_files_are_private(store: SessionStore) -> None:
    session = store.new_session()
    session.append(conversation())
    result = session.save_tool_result("x" * 100_000)
    assert stat.S_IMODE(session.dir.stat().st_mode) == 0o700
    for path in (session.dir / "main.jsonl", session.dir / "meta.json", result):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_save_tool_result_names_and_content(store: SessionStore) -> None:
    session = store.new_session()
    text_path = session.save_tool_result("hello\n" * 10)
    json_path = session.save_tool_result('{"a": 1}', ext=".JSON")
    odd_path = session.save_tool_result("x", ext="../../evil")
    assert text_path.parent == session.dir / "tool-results"
    assert text_path.read_text() == "hello\n" * 10
    assert len(text_path.stem) == 8 and int(text_path.stem, 16) >= 0 and text_path.suffix == ".txt"
    assert json_path.suffix == ".json"
    assert odd_path.parent == session.dir / "tool-results" and odd_path.suffix == ".bin"


def test_truncated_last_line_is_ignored_then_repaired_on_append(store: SessionStore) -> None:
    session = store.new_session()
    messages = conversation()
    session.append(messages[:3])
    path = session.dir / "main.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole[: whole.rindex(b"\n", 0, len(whole) - 1) + 40])  # cut the 3rd line mid-write

    loaded = store.session(session.id).load()
    assert loaded.truncated_tail and loaded.damage is None
    assert dumped(loaded.messages) == dumped(messages[:2])

    writer = store.session(session.id)
    writer.append(messages[2:])
    again = store.session(session.id).load()
    assert again.damage is None and not again.truncated_tail
    assert dumped(again.messages) == dumped(messages)
    assert store.session(session.id).info().message_count == 4


def test_complete_last_line_without_newline_is_kept(store: SessionStore) -> None:
    session = store.new_session()
    messages = conversation()
    session.append(messages[:2])
    path = session.dir / "main.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))

    assert len(store.session(session.id).load().messages) == 2
    writer = store.session(session.id)
    writer.append(messages[2:])
    assert dumped(store.session(session.id).load().messages) == dumped(messages)


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ("{not json", "not valid JSON"),
        ('{"v": 2, "message": {}, "meta": {"ts": "2025-01-01T00:00:00Z"}}', "unsupported envelope version 2"),
        ('{"v": 1, "message": {}, "meta": {"ts": "x", "agent_id": "main"}}', "agent_id is forbidden"),
        (
            '{"v": 1, "message": {"kind": "request"}, "meta": {"ts": "2025-01-01T00:00:00Z"}}',
            "not a valid message",
        ),
        ('["v", 1]', "not a session envelope"),
    ],
)
def test_damaged_middle_line_names_file_and_line(store: SessionStore, bad_line: str, reason: str) -> None:
    session = store.new_session()
    messages = conversation()
    session.append(messages)
    path = session.dir / "main.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(2, bad_line + "\n")
    path.write_text("".join(lines))
    before = path.read_bytes()

    reader = store.session(session.id)
    loaded = reader.load()

    assert dumped(loaded.messages) == dumped(messages[:2])
    assert loaded.damage is not None
    assert loaded.damage.line == 3 and loaded.damage.path == path and reason in loaded.damage.reason
    assert str(path) in str(loaded.damage) and "line 3" in str(loaded.damage)
    with pytest.raises(SessionDamaged):
        reader.append(messages[:1])
    assert path.read_bytes() == before
    if reason != "not a valid message":  # the index checks envelopes only; message schemas need a load()
        assert store.list()[0].damaged == f"line 3: {loaded.damage.reason}"
        with pytest.raises(SessionDamaged):
            store.session(session.id).append(messages[:1])  # a fresh writer notices it from the index
        assert path.read_bytes() == before


def test_rollback_keeps_the_first_messages(store: SessionStore) -> None:
    session = store.new_session()
    messages = conversation()
    session.append(messages)
    session.rollback(2)

    assert dumped(store.session(session.id).load().messages) == dumped(messages[:2])
    assert store.session(session.id).info().message_count == 2
    session.append(messages[2:3])
    assert dumped(store.session(session.id).load().messages) == dumped(messages[:3])
    with pytest.raises(ValueError, match="only 3"):
        session.rollback(5)
    with pytest.raises(ValueError):
        session.rollback(-1)
    session.rollback(0)
    info = store.session(session.id).info()
    assert info.message_count == 0 and info.title == "(no prompt yet)"


def test_title_comes_from_the_first_prompt_and_update_meta_keeps_it(store: SessionStore) -> None:
    session = store.new_session()
    long_prompt = "Explain   the\nresults " + "very " * 40 + "carefully"
    session.append(conversation(long_prompt))
    session.update_meta(title="another title", cwd="/work/project", model="anthropic:claude")
    session.update_meta(subagent=("sub-ab12", "Summarise the log\nfile"))

    info = store.list()[0]
    assert info.title.startswith("Explain the results very") and "\n" not in info.title
    assert len(info.title) <= 80 and info.title.endswith("…")
    assert info.cwd == "/work/project" and info.model == "anthropic:claude"
    assert info.subagents == {"sub-ab12": "Summarise the log file"}
    assert info.message_count == 4 and info.size_bytes > 0


def test_subagent_histories_are_separate_files(store: SessionStore) -> None:
    session = store.new_session()
    session.append(conversation())
    sub: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Count the lines")]),
        ModelResponse(parts=[TextPart("42")]),
    ]
    session.append(sub, agent_id="sub-7a3f")

    reader = store.session(session.id)
    assert reader.subagent_ids() == ["sub-7a3f"]
    assert dumped(reader.load("sub-7a3f").messages) == dumped(sub)
    assert len(reader.load().messages) == 4
    assert reader.info().subagents == {"sub-7a3f": "Count the lines"}
    assert reader.info().message_count == 4
    for bad in ("../main", "sub-../../x", "other", ""):
        with pytest.raises(ValueError):
            reader.load(bad)
        with pytest.raises(ValueError):
            session.append(sub, agent_id=bad)


def test_missing_history_loads_empty(store: SessionStore) -> None:
    session = store.new_session()
    assert not session.exists()
    loaded = session.load()
    assert loaded.messages == [] and loaded.damage is None
    assert not session.dir.exists()
