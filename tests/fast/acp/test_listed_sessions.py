"""#44 (third attack, F2): ``session/list`` never attributes a session to a folder it was not made in.

Before: a session whose meta had no folder (a fork's, written before the fix) was listed under ANY asked folder
(and under this process's folder without one), so a client loaded another folder's conversation into its own.
Now a session without a recorded folder is listed nowhere (``SessionInfo`` needs a ``cwd``, and any folder we
named for it would be a guess); one with a folder only under it."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.acp.stored import listed_sessions
from freeact_tui.project.config import Config
from freeact_tui.store.sessions import SessionStore


def test_a_session_without_a_folder_is_listed_under_none(tmp_path: Path) -> None:
    store_dir, here, there = tmp_path / "sessions", tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    store = SessionStore(store_dir)
    placed, unplaced = store.new_session(), store.new_session()
    for session in (placed, unplaced):
        session.append([ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("ok")])])
    placed.update_meta(cwd=str(here))

    def config(_: Path) -> Config:
        return Config(sessions_dir=store_dir)

    assert [s.session_id for s in listed_sessions(config, str(here))] == [placed.id]
    assert listed_sessions(config, str(there)) == []
    assert [(s.session_id, s.cwd) for s in listed_sessions(config, None)] == [(placed.id, str(here))]
