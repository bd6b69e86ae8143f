"""The approval controller on its own (real Textual app under Pilot, no agent): order, count, cancellation."""

from __future__ import annotations

from functools import partial

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, Label, Static

from freeact_tui.events import ApprovalRequest, Decision
from freeact_tui.toolcalls import CodeAction
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.screens.approval_controller import WORKER_GROUP, ApprovalController
from tests import helpers

pytestmark = pytest.mark.asyncio


# The dialogs need no kernel: a short wait is enough.
until = partial(helpers.until, limit=4.0)


class Host(Screen[None]):
    """A screen that owns a controller and records what it reports."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: list[int] = []
        self.settled: list[tuple[str, Decision | None]] = []
        self.asked = 0
        self.controller: ApprovalController[str] = ApprovalController(
            self,
            on_count=self.counts.append,
            on_settled=lambda request, tag: self.settled.append((tag, request.decision)),
            on_asking=self._asking,
        )

    def _asking(self) -> None:
        self.asked += 1

    def compose(self) -> ComposeResult:
        yield Static("host")


class HostApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.host = Host()

    async def on_mount(self) -> None:
        await self.push_screen(self.host)


def request(code: str) -> ApprovalRequest:
    return ApprovalRequest(CodeAction(code=code), corr_id=code)


def queue(host: Host, *tags: str) -> list[ApprovalRequest]:
    """A request for ``tag()`` of each tag, added to the host's controller in order (tagged ``tag``)."""
    requests = [request(f"{tag}()") for tag in tags]
    for tag, req in zip(tags, requests, strict=True):
        host.controller.add(req, tag)
    return requests


async def dialog_for(pilot: Pilot[None], req: ApprovalRequest) -> ApprovalScreen:
    await until(
        pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen) and pilot.app.screen.request is req
    )
    screen = pilot.app.screen
    assert isinstance(screen, ApprovalScreen)
    await pilot.pause()
    return screen


def subtitle(screen: ApprovalScreen) -> str:
    return str(screen.query_one("#approval-dialog").border_subtitle or "")


def approval_workers(app: App[None]) -> list[object]:
    return [w for w in app.workers if w.group == WORKER_GROUP and not w.is_finished]


async def test_requests_are_asked_in_order_with_count() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        host = app.host
        first, second, third = queue(host, "one", "two", "three")
        assert host.controller.count == 3 and host.counts == [1, 2, 3]
        assert host.controller.requests == [first, second, third]
        screen = await dialog_for(pilot, first)
        assert subtitle(screen) == "1 of 3"
        assert len(approval_workers(app)) == 1  # one managed worker, not a task per request
        await pilot.press("y")
        screen = await dialog_for(pilot, second)
        assert subtitle(screen) == "2 of 3" and host.controller.count == 2
        await pilot.press("n", "enter")  # n opens the instruction line; Enter alone rejects
        screen = await dialog_for(pilot, third)
        assert subtitle(screen) == "3 of 3"
        await pilot.press("y")
        await until(pilot, lambda: host.controller.count == 0 and not approval_workers(app))
        assert not isinstance(app.screen, ApprovalScreen)
        assert [(tag, d.approved if d else None) for tag, d in host.settled] == [
            ("one", True),
            ("two", False),
            ("three", True),
        ]
        assert first.decision == Decision(True) and second.decision == Decision(False)
        assert host.counts[-1] == 0 and host.asked == 3
        # A new request after the queue emptied starts again at "1 of 1" (no subtitle).
        fourth = request("four()")
        host.controller.add(fourth, "four")
        screen = await dialog_for(pilot, fourth)
        assert subtitle(screen) == ""
        await pilot.press("y")
        await until(pilot, lambda: fourth.decided and host.controller.count == 0)


async def test_request_decided_elsewhere_while_queued_is_dropped_without_a_dialog() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        host = app.host
        first, second, third = queue(host, "one", "two", "three")
        screen = await dialog_for(pilot, first)
        # The agent gives up on the second (its timeout or cancel) while the first is shown.
        second.resolve(Decision(False))
        await until(pilot, lambda: host.controller.count == 2)
        assert host.settled == [("two", Decision(False))]
        assert host.controller.requests == [first, third]
        assert subtitle(screen) == "1 of 2"
        await pilot.press("y")
        screen = await dialog_for(pilot, third)
        assert subtitle(screen) == "2 of 2"
        await pilot.press("y")
        await until(pilot, lambda: host.controller.count == 0)
        assert [tag for tag, _ in host.settled] == ["two", "one", "three"]
        assert host.asked == 2  # the second never got a dialog


async def test_shown_request_decided_elsewhere_closes_its_dialog() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        host = app.host
        first, second = queue(host, "one", "two")
        await dialog_for(pilot, first)
        first.resolve(Decision(False))
        await dialog_for(pilot, second)
        assert host.settled == [("one", Decision(False))]
        await pilot.press("y")
        await until(pilot, lambda: host.controller.count == 0 and not approval_workers(app))
        assert second.decision == Decision(True)


async def test_clear_drops_waiting_requests_and_closes_the_dialog() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        host = app.host
        first, second = queue(host, "one", "two")
        await dialog_for(pilot, first)
        host.controller.clear()  # the turn ended
        await until(pilot, lambda: not isinstance(app.screen, ApprovalScreen) and not approval_workers(app))
        assert host.controller.count == 0 and host.counts[-1] == 0
        assert host.settled == [("one", None), ("two", None)]  # dropped undecided: shown as cancelled
        assert not first.decided and not second.decided  # the UI never answers for the user


async def test_next_turn_after_clear_counts_from_one() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        host = app.host
        first, second = queue(host, "one", "two")
        await dialog_for(pilot, first)
        await pilot.press("y")
        await dialog_for(pilot, second)
        host.controller.clear()  # the turn ended with the second still waiting
        nxt, after = queue(host, "next", "after")
        screen = await dialog_for(pilot, nxt)
        assert subtitle(screen) == "1 of 2"
        await pilot.press("y")
        await dialog_for(pilot, after)
        await pilot.press("n", "enter")  # n opens the instruction line; Enter alone rejects
        await until(pilot, lambda: host.controller.count == 0 and not approval_workers(app))
        assert [(tag, d.approved if d else None) for tag, d in host.settled] == [
            ("one", True),
            ("two", None),
            ("next", True),
            ("after", False),
        ]


async def test_keys_typed_before_the_dialog_is_armed_decide_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Long enough that the eight keys below surely arrive before it arms, even on a loaded machine.
    monkeypatch.setattr(ApprovalScreen, "ARMING_SECONDS", 2.0)
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        host = app.host
        (first,) = queue(host, "one")
        screen = await dialog_for(pilot, first)
        assert not screen.armed and screen.has_class("-unarmed")
        assert str(screen.query_one("#approval-keys", Label).render()).endswith("…")
        # "yes please" typed ahead as the dialog opens: y, s (allow for session), Enter, Esc.
        await pilot.press("y", "e", "s", "enter", "a", "d", "n", "escape")
        assert not first.decided and app.screen is screen and screen.scope is None
        await until(pilot, lambda: screen.armed)
        assert not screen.has_class("-unarmed")
        assert not str(screen.query_one("#approval-keys", Label).render()).endswith("…")
        await pilot.press("y")
        await until(pilot, lambda: first.decided)
        assert first.decision == Decision(True)


async def test_every_new_dialog_is_armed_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ApprovalScreen, "ARMING_SECONDS", 0.3)
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        host = app.host
        first, second = queue(host, "one", "two")
        screen = await dialog_for(pilot, first)
        await until(pilot, lambda: screen.armed)
        await pilot.press("y", "y")  # the second y lands on the second dialog before it is armed
        screen = await dialog_for(pilot, second)
        assert first.decision == Decision(True) and not second.decided
        await until(pilot, lambda: screen.armed)
        await pilot.press("n", "enter")  # n opens the instruction line; Enter alone rejects
        await until(pilot, lambda: second.decided)
        assert second.decision == Decision(False)


async def open_rule(pilot: Pilot[None], code: str, key: str) -> tuple[ApprovalRequest, ApprovalScreen]:
    app = pilot.app
    assert isinstance(app, HostApp)
    req = request(code)
    app.host.controller.add(req, code)
    screen = await dialog_for(pilot, req)
    await pilot.press(key)
    return req, screen


# (key, the rule a broad "*" saves, the Enters it needs, the breadth warned of): only allowing always
# asks twice; a session rule is warned of all the same; refusing more is safe.
BROAD_RULES = [
    ("a", Decision(True, remember="always", pattern="*"), 2, True),
    ("s", Decision(True, remember="session", pattern="*"), 1, True),
    ("d", Decision(False, remember="always", pattern="*"), 1, False),
]


@pytest.mark.parametrize(("key", "decision", "enters", "warned"), BROAD_RULES, ids=[r[0] for r in BROAD_RULES])
async def test_a_rule_proposes_the_exact_cell_and_a_broad_one_asks_as_its_key_says(
    key: str, decision: Decision, enters: int, warned: bool
) -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        req, screen = await open_rule(pilot, "import json\nprint(json.dumps({'a': 1}))", key)
        pattern = screen.query_one("#approval-pattern", Input)
        breadth = screen.query_one("#approval-breadth", Label)
        assert pattern.value.startswith("cell:")  # the exact cell, never a prefix of it (#29)
        assert not breadth.has_class("-broad")
        assert not warned or "only this exact cell" in str(breadth.render())
        pattern.value = "*"
        await pilot.pause()
        if warned:
            assert breadth.has_class("-broad") and breadth.display
            assert "every code action (any Python)" in str(breadth.render())
        else:
            assert not breadth.display
        for _ in range(enters - 1):
            await pilot.press("enter")
            await pilot.pause()
            assert not req.decided and screen.is_current
            assert "press Enter again" in str(screen.query_one("#approval-save", Label).render())
        await pilot.press("enter")
        await until(pilot, lambda: req.decided)
        assert req.decision == decision


async def test_editing_a_broad_pattern_asks_for_the_second_enter_again() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        req, screen = await open_rule(pilot, "print(1)", "a")
        pattern = screen.query_one("#approval-pattern", Input)
        assert pattern.value.startswith("cell:")
        assert not screen.query_one("#approval-breadth", Label).has_class("-broad")  # exact: no warning
        pattern.value = "*"
        await pilot.press("enter")
        pattern.value = "print*"  # still broad, but not the pattern confirmed
        await pilot.press("enter")
        await pilot.pause()
        assert not req.decided
        await pilot.press("enter")
        await until(pilot, lambda: req.decided)
        assert req.decision == Decision(True, remember="always", pattern="print*")


async def test_a_second_enter_typed_at_once_does_not_confirm_a_broad_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        req, screen = await open_rule(pilot, "print(1)", "a")
        monkeypatch.setattr(ApprovalScreen, "ARMING_SECONDS", 0.5)
        screen.query_one("#approval-pattern", Input).value = "*"
        await pilot.press("enter", "enter")
        await pilot.pause()
        assert not req.decided
        await pilot.pause(0.6)
        await pilot.press("enter")
        await until(pilot, lambda: req.decided)
        assert req.decision == Decision(True, remember="always", pattern="*")


@pytest.mark.parametrize("key", ["a", "s"])
@pytest.mark.parametrize("typed", ["c", "x", "-wide"])
async def test_a_pattern_the_store_refuses_is_never_saved_from_the_dialog(key: str, typed: str) -> None:
    """`a` on code proposes `effects:computes` and hints a key for "this cell only"; that key typed in the
    field made `effects:computesc`, which the dialog called a broad rule and saved on a second Enter — the
    store then raised in the approval gate. The dialog shows the store's own refusal and decides nothing."""
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        req, screen = await open_rule(pilot, "print(2**100)", key)
        pattern = screen.query_one("#approval-pattern", Input)
        breadth = screen.query_one("#approval-breadth", Label)
        if not pattern.value.startswith("effects:"):
            pattern.value = "effects:computes"
            await pilot.pause()
        assert "Esc, then c" in str(breadth.render())  # c types here: the hint says how to reach it
        for letter in typed:
            await pilot.press(letter if letter != "-" else "minus")
        await pilot.pause()
        assert "Not a rule" in str(breadth.render()) and "unknown effect class" in str(breadth.render())
        for _ in range(3):
            await pilot.press("enter")
            await pilot.pause(0.2)
        assert not req.decided and screen.is_current
        await pilot.press("escape")
        await pilot.press("c")
        await pilot.pause()
        assert pattern.value.startswith("cell:")
