"""A long paste (issue 43: 2,000 lines kept raw and echoed whole): a placeholder in the prompt, a fold in
the log, every character for the model; a resumed log folds it the same way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import UserPromptPart
from textual import events

from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.pastes import PASTE_FOLD_LINES, PastedTexts
from freeact_tui.tui.widgets.blocks import UserMessageBlock
from freeact_tui.tui.widgets.blocks.fold import LogFold
from tests import helpers
from tests.helpers import idle, log_rows, ready, resumed_rows, until
from tests.scripted import Script

executor = helpers.kernel
make_app = helpers.chat_app
PASTE = "\n".join(f"line {i} of the log" for i in range(2000))


@given(
    st.lists(st.text(st.characters(exclude_characters="\n\r"), max_size=30), min_size=1, max_size=40),
    st.text(max_size=10),
    st.text(max_size=10),
)
def test_a_draft_expands_to_exactly_what_was_pasted(lines: list[str], before: str, after: str) -> None:
    pastes = PastedTexts()
    text = "\n".join(lines)
    token = pastes.fold(text)
    if text.count("\n") + 1 <= PASTE_FOLD_LINES:
        assert token is None
        return
    assert token is not None and f"+{len(lines)} lines" in token
    assert pastes.expand(before + token + after) == before + text + after


@given(
    st.lists(st.text(st.characters(exclude_characters="\n\r"), max_size=30), min_size=1, max_size=40),
    st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=1),
)
def test_a_paste_s_lines_count_whatever_the_terminal_sends_as_a_line_break(
    lines: list[str], breaks: list[str]
) -> None:
    """tmux (by default) and xterm paste a line break as CR: 2,000 such lines were one line, kept raw."""
    pastes = PastedTexts()
    text = lines[0] + "".join(breaks[i % len(breaks)] + line for i, line in enumerate(lines[1:]))
    token = pastes.fold(text)
    if len(lines) <= PASTE_FOLD_LINES:
        assert token is None
        return
    assert token == f"[Pasted text #1 +{len(lines)} lines]"
    assert pastes.expand(token) == "\n".join(lines)  # as the prompt keeps a short paste's lines


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_a_long_paste_is_a_placeholder_then_a_fold_and_the_model_gets_it_whole(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = Script([["Got it."]])
    app = make_app(s)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        prompt = screen.prompt
        prompt.focus()
        await pilot.press(*"look: ")
        prompt.post_message(events.Paste(PASTE))
        await until(pilot, lambda: "[Pasted text #1 +2000 lines]" in prompt.text)
        assert prompt.text == "look: [Pasted text #1 +2000 lines]" and prompt.document.line_count == 1
        await pilot.press("enter")
        await idle(pilot)
        sent = [
            part.content
            for message in s.requests[0]
            for part in getattr(message, "parts", [])
            if isinstance(part, UserPromptPart)
        ]
        assert sent == ["look: " + PASTE]  # the model got every line
        block = screen.conversation.query(UserMessageBlock).last()
        assert block.text == "look: " + PASTE
        fold = block.query_one(LogFold)
        assert fold.collapsed and "more lines" in str(fold.title)
        assert block.region.height < 10
        live = log_rows(app)
        assert app.agent is not None
        session_id = app.agent.session_id
    assert await resumed_rows(make_app, session_id, {}) == live
