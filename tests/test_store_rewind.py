"""The rewind marker in a session file: append-only, loadable by freeact, honoured by our loader,
the listing and a later rollback."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_ai.messages import ModelRequest, UserPromptPart

from freeact_tui.store.sessions import SessionStore
from tests.test_store_compat import freeact_load
from tests.test_store_sessions import conversation, dumped


def test_marker_cuts_the_history_for_us_and_stays_a_valid_message_for_freeact(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    first, second = conversation("first"), conversation("second")
    session.append(first + second)
    path = session.history_path()
    before = path.read_bytes()

    session.append_rewind(len(first), "[Note: rewound to before “second”]")
    assert path.read_bytes().startswith(before)  # append-only
    marker = json.loads(path.read_text().splitlines()[-1])
    assert marker["meta"]["rewind"] == {"keep": len(first)} and "ts" in marker["meta"]
    assert len(freeact_load(path)) == len(first + second) + 1  # freeact loads every line

    loaded = store.session(session.id).load()
    assert dumped(loaded.messages) == dumped(first)
    assert loaded.rewind_note == "[Note: rewound to before “second”]"  # not yet told to the model
    assert store.session(session.id).info().message_count == len(first)
    (info,) = store.list()
    assert info.message_count == len(first)

    third = conversation("third")
    session.append(third)
    loaded = store.session(session.id).load()
    assert dumped(loaded.messages) == dumped(first + third) and loaded.rewind_note is None

    # A failed request after the marker is rolled back to the cut history plus what followed.
    session.rollback(len(first) + 1)
    assert dumped(store.session(session.id).load().messages) == dumped(first + third[:1])
    assert path.read_bytes().startswith(before)  # the rollback never reaches back past the marker
    session.rollback(len(first))
    reloaded = store.session(session.id).load()
    assert dumped(reloaded.messages) == dumped(first) and reloaded.rewind_note is not None


def test_two_markers_apply_in_order(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    a, b, c = conversation("a"), conversation("b"), conversation("c")
    session.append(a + b)
    session.append_rewind(len(a), "cut b")
    session.append(c)
    session.append_rewind(0, "cut all")
    loaded = store.session(session.id).load()
    assert loaded.messages == [] and loaded.rewind_note == "cut all"
    session.append([ModelRequest(parts=[UserPromptPart("fresh")])])
    assert len(store.session(session.id).load().messages) == 1
