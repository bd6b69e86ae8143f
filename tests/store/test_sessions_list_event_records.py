"""``sessions list`` (and every listing: the side panel, the ``/resume`` picker, ``sessions show``) counts
the conversation's messages, not the event records the file keeps beside them (a turn that ended on an
error). The count stays right through a rewind and a rollback, and a ``meta.json`` written before the
records were told apart is counted again.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.store.event_record import error_record
from freeact_tui.store.index import INDEX_FILE, META_FILE
from freeact_tui.store.sessions import SessionStore
from tests.helpers import cli


def _turn(prompt: str, answer: str) -> list[ModelRequest | ModelResponse]:
    return [ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart(answer)])]


def _store_with_a_failed_turn(root: Path) -> tuple[SessionStore, str]:
    """Two turns of conversation with a failed turn (its error record) between them: 4 messages, 5 lines."""
    store = SessionStore(root)
    session = store.new_session()
    withdrawn = [ModelRequest(parts=[UserPromptPart("and then?")])]
    session.append(_turn("first question", "first answer"))
    session.append([error_record("model", "status 401: bad key", withdrawn)])
    session.append(_turn("second question", "second answer"))
    session.flush_meta()
    session.unlock()
    return store, session.id


def test_the_listing_counts_the_conversation_not_its_event_records(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store, sid = _store_with_a_failed_turn(root)
    assert len((root / sid / "main.jsonl").read_text().splitlines()) == 5
    assert store.session(sid).info().message_count == 4
    # Built from the history alone (no meta.json, no index: a session freeact wrote, or a first listing).
    (root / sid / META_FILE).unlink()
    (root / INDEX_FILE).unlink(missing_ok=True)
    assert [info.message_count for info in store.list()] == [4]

    config = tmp_path / "config.toml"
    config.write_text(f"sessions_dir = {json.dumps(str(root))}\n")
    out = cli("--config", str(config), "sessions", "list", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (row,) = [line for line in out.stdout.splitlines() if "first question" in line]
    assert row.split()[-1] == "4", row  # the Msgs column (no cwd: a session written by the store alone)
    shown = cli("--config", str(config), "sessions", "show", sid, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "· 4 messages ·" in shown.stdout


def test_a_rewind_and_a_rollback_keep_the_count_of_the_conversation(tmp_path: Path) -> None:
    store, sid = _store_with_a_failed_turn(tmp_path / "sessions")
    session = store.session(sid)
    session.rewind(3, "rewound to after the failed turn")  # the first turn and the record: 2 messages
    assert store.session(sid).info().message_count == 2
    (tmp_path / "sessions" / sid / META_FILE).unlink()  # the marker read from the file: the same
    (tmp_path / "sessions" / INDEX_FILE).unlink(missing_ok=True)
    assert store.list()[0].message_count == 2

    store, sid = _store_with_a_failed_turn(tmp_path / "other")
    session = store.session(sid)
    session.rollback(2)  # the record goes with the rest
    assert store.session(sid).info().message_count == 2
    session.append(_turn("again", "answer"))
    session.flush_meta()
    assert store.session(sid).info().message_count == 4


def test_a_meta_file_of_the_earlier_count_is_counted_again(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store, sid = _store_with_a_failed_turn(root)
    meta_path = root / sid / META_FILE
    earlier = json.loads(meta_path.read_text())
    earlier.update(version=1, message_count=5)  # as the earlier version counted: every line
    earlier.pop("event_records")
    meta_path.write_text(json.dumps(earlier))
    (root / INDEX_FILE).unlink(missing_ok=True)
    assert [info.message_count for info in store.list()] == [4]
