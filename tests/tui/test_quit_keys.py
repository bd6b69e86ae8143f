"""Quit as people expect (issue 43): Ctrl+C cancels, clears, then quits on a second press; Ctrl+D on an
empty prompt quits; the footer keeps the quit key at any width and never cuts a key in half."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.widgets._footer import FooterKey

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.quit_keys import QUIT_WINDOW, CtrlC, CtrlCState, ctrl_c, ctrl_d_quits
from freeact_tui.tui.widgets.key_footer import KeyFooter, fit_keys
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.helpers import ready, send, until
from tests.scripted import Wait, script

# -- the decisions, as tables ------------------------------------------------------------------------

CTRL_C_ROWS = [
    # (turn running, selection, draft, seconds since armed) -> what the press does
    ((True, False, "", None), CtrlC.CANCEL),
    ((True, True, "typed", 0.1), CtrlC.CANCEL),  # a running turn first: the key the user reaches for
    ((False, True, "typed", None), CtrlC.PASS),  # a selection is copied by the focused widget
    ((False, False, "typed", None), CtrlC.CLEAR),
    ((False, False, "typed", 0.5), CtrlC.CLEAR),  # a draft is cleared even right after a hint
    ((False, False, "", None), CtrlC.ARM),
    ((False, False, "", 0.5), CtrlC.QUIT),
    ((False, False, "", QUIT_WINDOW + 0.1), CtrlC.ARM),  # too late: asks again
]


@pytest.mark.parametrize(("state", "expected"), CTRL_C_ROWS)
def test_ctrl_c_decision(state: tuple[bool, bool, str, float | None], expected: CtrlC) -> None:
    assert ctrl_c(CtrlCState(*state)) is expected


@given(st.booleans(), st.booleans(), st.text(max_size=5), st.one_of(st.none(), st.floats(-1, 10)))
def test_ctrl_c_quits_only_on_an_idle_empty_prompt_pressed_twice(
    running: bool, selection: bool, draft: str, since: float | None
) -> None:
    decision = ctrl_c(CtrlCState(running, selection, draft, since))
    quits = decision is CtrlC.QUIT
    assert quits == (
        not running and not selection and not draft and since is not None and 0 <= since <= QUIT_WINDOW
    )
    if running:
        assert decision is CtrlC.CANCEL  # never loses the turn to a copy or a clear


@pytest.mark.parametrize(
    ("focused", "draft", "quits"), [(True, "", True), (True, "x", False), (False, "", False)]
)
def test_ctrl_d_decision(focused: bool, draft: str, quits: bool) -> None:
    assert ctrl_d_quits(prompt_focused=focused, draft=draft) is quits


@given(
    st.lists(st.tuples(st.integers(1, 30), st.booleans()), max_size=12),
    st.integers(0, 200),
)
def test_fit_keys_keeps_the_essential_and_fills_in_order(keys: list[tuple[int, bool]], room: int) -> None:
    widths = [w for w, _ in keys]
    essential = [e for _, e in keys]
    shown = fit_keys(widths, essential, room)
    assert all(s for s, e in zip(shown, essential, strict=True) if e)  # the essential keys, always
    used = sum(w for w, s in zip(widths, shown, strict=True) if s)
    must = sum(w for w, e in zip(widths, essential, strict=True) if e)
    assert used <= max(room, must)  # nothing drawn past the edge unless the essential keys alone do
    for i, (width, s) in enumerate(zip(widths, shown, strict=True)):
        if not s:  # a key left out did not fit beside the essential ones and the others before it
            before = sum(
                w for w, t, e in zip(widths[:i], shown[:i], essential[:i], strict=True) if t and not e
            )
            assert must + before + width > room


# -- the real app under Pilot ------------------------------------------------------------------------

executor = helpers.kernel


@pytest.fixture
def make_app(executor: KernelExecutor, tmp_path: Path) -> Callable[..., FreeactApp]:
    def make(s: object) -> FreeactApp:
        return helpers.make_app(
            s,
            tmp_path / "sessions",
            tmp_path,
            config={"subagent_pool_size": 0},
            executor=executor,  # type: ignore[arg-type]
        )

    return make


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_ctrl_c_clears_the_draft_then_quits_on_a_second_press(
    make_app: Callable[..., FreeactApp],
) -> None:
    gate = asyncio.Event()
    app = make_app(script(["Working ", Wait(gate), "done"]))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "start")
        screen = app.main_screen
        await until(pilot, lambda: screen.turn_running)
        await pilot.press("ctrl+c")  # cancels the turn, quits nothing
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not screen.turn_running)
        assert app.is_running
        screen.prompt.load_text("a draft")
        screen.prompt.focus()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert screen.prompt.text == "" and app.is_running
        await pilot.press("up")  # the cleared draft comes back from the history
        assert screen.prompt.text == "a draft"
        screen.prompt.load_text("")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert any("Ctrl+C again to quit" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running)
    assert app.resume_hint is not None and "--session-id" in app.resume_hint


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_ctrl_d_deletes_forward_in_a_draft_and_quits_on_an_empty_prompt(
    make_app: Callable[..., FreeactApp],
) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.load_text("ab")
        prompt.focus()
        prompt.move_cursor((0, 0))
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert prompt.text == "b" and app.is_running
        prompt.load_text("")
        await pilot.press("ctrl+d")
        await until(pilot, lambda: not app.is_running)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("width", [60, 80, 100, 120])
async def test_footer_keeps_quit_and_cuts_no_key(make_app: Callable[..., FreeactApp], width: int) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=(width, 24)) as pilot:
        await ready(pilot)
        footer = app.main_screen.query_one(KeyFooter)

        def shown() -> list[FooterKey]:
            return [k for k in footer.query(FooterKey) if k.display and not k.has_class("-command-palette")]

        await until(pilot, lambda: any(k.action.endswith("request_quit") for k in shown()))
        await pilot.pause(0.2)
        palette = [k for k in footer.query(FooterKey) if k.has_class("-command-palette")]
        edge = min([k.region.x for k in palette] + [footer.region.right])
        assert all(k.region.right <= edge for k in shown()), [(k.description, k.region) for k in shown()]
        assert any(k.description == "Help" for k in shown())


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("width", "most"), [(80, 30), (100, 36), (160, 46)])
async def test_the_side_panel_leaves_the_log_most_of_the_width(
    make_app: Callable[..., FreeactApp], width: int, most: int
) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=(width, 24)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+b")
        panel = app.main_screen.side_panel
        await until(pilot, lambda: panel.display and panel.region.width > 0)
        await pilot.pause()
        log = app.main_screen.conversation
        assert 26 <= panel.region.width <= most and log.region.width >= width - panel.region.width - 3
        assert log.region.width > panel.region.width
