"""``session/load`` shows a stored prompt as the user typed it: the notes and ``!command`` output the
agent put before it for the model stay out of the editor's view (as in the app's resumed log)."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.acp.replay import replay_updates
from freeact_tui.store.prompt_record import prompt_metadata, shell_context

NOTE = "[Note: the user undid the last action's file changes.]"


def user_texts(messages: list, tmp_path: Path) -> list[str]:  # type: ignore[type-arg]
    updates = [u.model_dump(by_alias=True) for u in replay_updates(messages, tmp_path)]
    return [u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"]


def test_a_prompt_with_the_agents_record_shows_only_the_typed_words(tmp_path: Path) -> None:
    added = f"{NOTE}\n\n{shell_context('ls', 'a.txt', False)}\n\n"
    messages = [
        ModelRequest(parts=[UserPromptPart(added + "what changed?")], metadata=prompt_metadata(len(added))),
        ModelResponse(parts=[TextPart("Nothing.")]),
    ]
    assert user_texts(messages, tmp_path) == ["what changed?"]


def test_an_older_session_without_the_record_drops_leading_notes_too(tmp_path: Path) -> None:
    messages = [
        ModelRequest(parts=[UserPromptPart(f"{NOTE}\n\nand now?")]),
        ModelResponse(parts=[TextPart("ok")]),
    ]
    assert user_texts(messages, tmp_path) == ["and now?"]


def test_a_plain_prompt_is_shown_whole(tmp_path: Path) -> None:
    messages = [
        ModelRequest(parts=[UserPromptPart("[not a note] keep me")]),
        ModelResponse(parts=[TextPart("ok")]),
    ]
    assert user_texts(messages, tmp_path) == ["[not a note] keep me"]
