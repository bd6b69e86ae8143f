"""The approval dialog's hint names the keys that decide as they are bound now, a user keymap included:
a rebinding never leaves it saying "n reject" while `n` approves (issue #39, F2). A project may not set
a keymap at all (``tests/project/test_project_settings_table.py``)."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Label

from freeact_tui.events import ApprovalRequest, Decision
from freeact_tui.toolcalls import CodeAction
from freeact_tui.tui.screens.approval import ApprovalScreen

SIZE = (140, 40)
_PRESS = {"Esc": "escape", "Enter": "enter"}


class KeymapHost(App[None]):
    def __init__(self, keymap: dict[str, str]) -> None:
        super().__init__()
        self.keymap = keymap
        self.decision: Decision | None = None

    def on_mount(self) -> None:
        self.set_keymap(self.keymap)
        self.push_screen(ApprovalScreen(ApprovalRequest(CodeAction("print(1)"), agent_id="main")), self._done)

    def _done(self, decision: Decision | None) -> None:
        self.decision = decision


def _hint_keys(text: str) -> dict[str, list[str]]:
    """What the hint says: each decision's words to the keys it names for it."""
    out: dict[str, list[str]] = {}
    for part in text.split(" · "):
        keys, words = part.split(" ", 1)
        out[words] = keys.split("/")
    return out


async def _hint_and_decision(keymap: dict[str, str], press: str | None) -> tuple[str, Decision | None]:
    text, decision, _ = await _hint_and_state(keymap, press)
    return text, decision


async def _hint_and_state(keymap: dict[str, str], press: str | None) -> tuple[str, Decision | None, str | None]:
    """The hint, the decision after pressing ``press``, and what the dialog then does (a scope or "reject")."""
    app = KeymapHost(keymap)
    state: str | None = None
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(ApprovalScreen.ARMING_SECONDS + 0.2)
        screen = app.screen
        assert isinstance(screen, ApprovalScreen) and screen.armed
        text = str(screen.query_one("#approval-keys", Label).render())
        if press is not None:
            await pilot.press(press)
            await pilot.pause()
            state = "reject" if screen.rejecting else screen.scope
    return text, app.decision, state


KEYMAPS = [
    {},
    {"approval.approve": "n,escape"},
    {"approval.always": "n"},
    {"approval.approve": "space", "approval.reject": "x"},
]


async def test_the_default_hint_is_unchanged() -> None:
    text, _ = await _hint_and_decision({}, None)
    assert text == (
        "y/Enter approve · n reject, say why · Esc reject · a always allow · s allow for this session · d always deny"
    )


@pytest.mark.parametrize("keymap", KEYMAPS, ids=str)
async def test_each_key_the_hint_names_to_approve_approves(keymap: dict[str, str]) -> None:
    text, _ = await _hint_and_decision(keymap, None)
    said = _hint_keys(text)
    for key in keymap.get("approval.approve", "").split(","):
        if key:
            assert _PRESS.get(key.capitalize(), key) in [_PRESS.get(k, k.lower()) for k in said["approve"]], text
    for key in said["approve"]:
        _, decision = await _hint_and_decision(keymap, _PRESS.get(key, key.lower()))
        assert decision == Decision(True), (key, text)
    for key in said.get("reject", []):  # a plain reject (Esc by default)
        _, decision = await _hint_and_decision(keymap, _PRESS.get(key, key.lower()))
        assert decision == Decision(False), (key, text)


async def test_a_key_rebound_to_approve_is_never_named_for_reject() -> None:
    text, decision = await _hint_and_decision({"approval.approve": "n,escape"}, "n")
    assert decision == Decision(True)
    assert "n reject" not in text and "Esc reject" not in text and "n/Esc approve" in text


@pytest.mark.parametrize("keymap", KEYMAPS, ids=str)
async def test_each_key_the_hint_names_to_remember_or_explain_does_that(keymap: dict[str, str]) -> None:
    text, _ = await _hint_and_decision(keymap, None)
    expected = {"reject, say why": "reject", "always allow": "always", "allow for this session": "session"}
    for words, state in expected.items():
        for key in _hint_keys(text).get(words, []):
            _, decision, now = await _hint_and_state(keymap, _PRESS.get(key, key.lower()))
            assert (decision, now) == (None, state), (key, words, text)
