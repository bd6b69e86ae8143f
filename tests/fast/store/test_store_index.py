"""The session index: listing from meta.json, staleness, freeact dirs without metadata, prefixes, delete."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.store import (
    AmbiguousSessionId,
    InvalidSessionId,
    SessionNotFound,
    SessionStore,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "freeact_sessions"
FREEACT_ID = "3f1c2b9e-5d47-4a8e-9c21-7b6f0e4d8a10"
OLD_ID = "0b9e8c7d-2a41-4f3e-8d5c-6e1f2a3b4c5d"


def exchange(prompt: str) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(prompt)]),
        ModelResponse(parts=[TextPart(f"answer to {prompt}")]),
    ]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions", fsync=False)


def test_list_is_newest_first_and_skips_non_sessions(store: SessionStore) -> None:
    ids = []
    for prompt in ("first", "second", "third"):
        session = store.new_session()
        session.append(exchange(prompt))
        ids.append(session.id)
        time.sleep(0.002)
    store.session(ids[0]).append(exchange("first again"))  # the oldest becomes the newest
    (store.root / "not-a-session").mkdir()
    (store.root / "0b9e8c7d-2a41-4f3e-8d5c-000000000000").mkdir()  # no history yet

    infos = store.list()

    assert [i.id for i in infos] == [ids[0], ids[2], ids[1]]
    assert [i.title for i in infos] == ["first", "third", "second"]
    assert infos[0].message_count == 4


def test_list_reads_metadata_not_histories(store: SessionStore) -> None:
    session = store.new_session()
    session.append(exchange("hello"))
    store.list()  # meta.json is current now
    main = session.dir / "main.jsonl"
    st = main.stat()
    main.write_bytes(b"x" * st.st_size)  # same size, garbage content …
    os.utime(main, ns=(st.st_atime_ns, st.st_mtime_ns))  # … and the same mtime

    info = store.list()[0]

    assert info.message_count == 2 and info.damaged is None and info.title == "hello"


def test_stale_metadata_is_brought_up_to_date(store: SessionStore) -> None:
    session = store.new_session()
    session.append(exchange("one"))
    meta_before = json.loads((session.dir / "meta.json").read_text())
    other_writer = store.session(session.id)
    for i in range(3):
        other_writer.append(exchange(f"more {i}"))  # within a second: meta.json is not rewritten each time
    assert json.loads((session.dir / "meta.json").read_text())["message_count"] < 8

    assert store.list()[0].message_count == 8
    meta_after = json.loads((session.dir / "meta.json").read_text())
    assert meta_after["message_count"] == 8 and meta_after["created"] == meta_before["created"]


def test_metadata_rebuilt_after_history_rewritten(store: SessionStore) -> None:
    session = store.new_session()
    session.append(exchange("one") + exchange("two"))
    store.list()
    main = session.dir / "main.jsonl"
    lines = main.read_bytes().splitlines(keepends=True)
    main.write_bytes(b"".join(lines[:1]) + lines[3] + lines[3])  # rewritten by someone else, same size or not

    info = store.list()[0]

    assert info.message_count == 3 and info.title == "one"


def test_freeact_dir_without_meta_lists_once_then_from_cache(tmp_path: Path) -> None:
    root = tmp_path / "project" / ".freeact" / "sessions"
    shutil.copytree(FIXTURES, root)
    store = SessionStore(root)

    infos = {i.id: i for i in store.list()}

    info = infos[FREEACT_ID]
    assert info.title == "Plot a sine wave from 0 to 2π and tell me where it crosses zero."
    assert info.message_count == 8
    assert info.model == "claude-sonnet-4-5-20250929"
    assert info.cwd == str(tmp_path / "project")
    assert info.subagents == {"sub-7a3f": "Describe the attached image in one sentence."}
    assert info.created.isoformat().startswith("2025-11-03T09:14:02")
    assert info.updated.isoformat().startswith("2025-11-03T09:15:42")
    assert (
        info.size_bytes
        == sum(p.stat().st_size for p in (root / FREEACT_ID).rglob("*") if p.is_file())
        - (root / FREEACT_ID / "meta.json").stat().st_size
    )
    assert infos[OLD_ID].message_count == 6 and infos[OLD_ID].title == "What is 17 * 23?"
    assert [i.id for i in store.list()] == [FREEACT_ID, OLD_ID]  # newest first by message time
    assert (root / FREEACT_ID / "meta.json").is_file()  # cached for the next listing


def test_resolve_ids_and_prefixes(store: SessionStore) -> None:
    a = store.session("abcd1234-0000-4000-8000-000000000001")
    b = store.session("abcd1299-0000-4000-8000-000000000002")
    for session in (a, b):
        session.append(exchange("x"))

    assert store.resolve(a.id) == a.id
    assert store.resolve("ABCD1234") == a.id
    assert store.resolve("abcd1299") == b.id
    with pytest.raises(AmbiguousSessionId, match="ambiguous"):
        store.resolve("abcd12")
    with pytest.raises(SessionNotFound):
        store.resolve("ffff")
    with pytest.raises(SessionNotFound):
        store.resolve("abcd1234-0000-4000-8000-000000000009")
    for bad in ("abc", "../../etc", "abcd/..", "..", "/etc", "ab\0cd"):
        with pytest.raises(InvalidSessionId):
            store.resolve(bad)


def test_latest_by_cwd(store: SessionStore, tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    first = store.new_session()
    first.append(exchange("in here"))
    first.update_meta(cwd=str(here))
    time.sleep(0.002)
    second = store.new_session()
    second.append(exchange("in there"))
    second.update_meta(cwd=str(there))

    assert store.latest() is not None and store.latest().id == second.id  # type: ignore[union-attr]
    assert store.latest(here).id == first.id  # type: ignore[union-attr]
    assert store.latest(tmp_path / "elsewhere") is None
    assert SessionStore(tmp_path / "empty").latest() is None


def test_delete(store: SessionStore) -> None:
    keep, drop = store.new_session(), store.new_session()
    keep.append(exchange("keep"))
    drop.append(exchange("drop"))
    drop.save_tool_result("big")

    store.delete(drop.id)

    assert [i.id for i in store.list()] == [keep.id]
    assert not drop.dir.exists()
    with pytest.raises(SessionNotFound):
        store.delete(drop.id)
    with pytest.raises(InvalidSessionId):
        store.delete("..")
