"""The smaller things a user notices: /compact tells once, one-line summaries read as plain words,
notifications leave the prompt and the token counts visible, /export stays out of the project.
The real app under Pilot; the model is scripted (or the windowed stand-in for compaction)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Collapsible
from textual.widgets._toast import Toast

from freeact_tui.project.config import Config
from freeact_tui.text.safe import one_line_summary
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.confirm import ConfirmScreen
from freeact_tui.tui.screens.rewind import RewindScreen
from freeact_tui.tui.widgets.blocks import NoticeBlock, ToolOutputBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from freeact_tui.tui.widgets.status_bar import StatusBar
from tests import helpers
from tests.helpers import FILLER, SIZE, WINDOW
from tests.scripted import script
from tests.windowed import WindowedModel

until = partial(helpers.until, limit=20.0)


async def send(pilot: Pilot[None], app: FreeactApp, text: str) -> None:
    await until(pilot, lambda: app.agent_ready and not app.main_screen.turn_running)
    await helpers.send(pilot, text)
    await pilot.pause()
    await until(pilot, lambda: not app.main_screen.turn_running)
    await pilot.pause()


def notices(app: FreeactApp, title: str) -> list[str]:
    return [b.text for b in app.main_screen.conversation.query(NoticeBlock) if b.border_title == title]


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        # the subagent answer of the issue: backticks and bold gone, cut between words
        (
            "The kernel printed `2432902008176640000`, so the factorial of 20 is **2432902008176640000**.",
            60,
            "The kernel printed 2432902008176640000, so the factorial…",
        ),
        (
            "**saving-code-actions** — save *working* code as a [tool](https://x.y)",
            80,
            "saving-code-actions — save working code as a tool",
        ),
        ("# Plan\n\n- read the file\n- count the rows", 80, "Plan read the file count the rows"),
        ("x" * 50, 20, "x" * 19 + "…"),  # one long word: cut inside it, there is no boundary
        ("2*3*4 = 24 and snake_case_name stay", 80, "2*3*4 = 24 and snake_case_name stay"),
        ("a\x1b[31mred", 80, "a␛[31mred"),  # escapes shown, never obeyed
    ],
)
def test_one_line_summary(text: str, limit: int, expected: str) -> None:
    assert one_line_summary(text, limit) == expected


class ToolOutputApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ToolOutputBlock(
            "The kernel printed `2432902008176640000`, so the factorial of 20 is **2432902008176640000**.\nmore",
            kind="Subagent answer",
        )


async def test_a_subagent_answer_title_is_plain_words_cut_between_words_to_fit_the_width() -> None:
    plain = "The kernel printed 2432902008176640000, so the factorial of 20 is 2432902008176640000."
    app = ToolOutputApp()
    async with app.run_test(size=(80, 24)) as pilot:
        title = str(app.query_one(Collapsible).title)
        assert "`" not in title and "**" not in title
        shown = title.removeprefix("\\[main] Subagent answer: ")  # the title is markup: "[" escaped
        assert shown.endswith("…") and plain.startswith(shown[:-1]) and plain[len(shown) - 1] == " "
        assert len(title) + 4 <= 80  # "▶ " and the margins: nothing cut by the screen's edge
        await pilot.resize_terminal(120, 24)
        await pilot.pause()
        assert (
            str(app.query_one(Collapsible).title) == f"\\[main] Subagent answer: {plain}"
        )  # room for it all


async def test_skills_are_listed_as_plain_text(tmp_path: Path) -> None:
    work = tmp_path / "work"
    skill = work / ".agents" / "skills" / "mine" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: my-skill\ndescription: Use **bold** and `code` words.\n---\nBody.\n")
    app = helpers.make_app(script(["x"]), tmp_path / "sessions", work)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/skills")
        (listing,) = [
            n
            for t, n in ((b.border_title, b.text) for b in app.main_screen.conversation.query(NoticeBlock))
            if str(t).startswith("Skills")
        ]
        assert "• my-skill — Use bold and code words." in listing
        assert "**" not in listing and "`" not in listing


async def test_compact_tells_once_also_after_a_rewind_redrew_the_log(tmp_path: Path) -> None:
    config = {"context_window": WINDOW, "enable_subagents": False, "skip_permissions": True}
    app = helpers.make_app(
        WindowedModel(WINDOW).model(), tmp_path / "sessions", tmp_path, config=config, eager_kernel=False
    )
    async with app.run_test(size=SIZE) as pilot:
        for i in range(4):
            await send(pilot, app, f"FACT: the code of item{i} is c{i}. {FILLER}")
        await send(pilot, app, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("c")  # the conversation only, to before the last message
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: bool(notices(app, "Rewind")))
        await send(pilot, app, "/compact")
        await until(pilot, lambda: bool(notices(app, "Context compacted")))
        await pilot.pause(0.3)
        assert len(notices(app, "Context compacted")) == 1


async def test_notifications_sit_above_the_prompt_and_the_status_bar(tmp_path: Path) -> None:
    app = helpers.make_app(script(["x"]), tmp_path / "sessions", tmp_path, config={"enable_subagents": False})
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await helpers.ready(pilot)
        prompt = app.main_screen.query_one(PromptInput)
        status = app.main_screen.query_one(StatusBar)
        app.notify("A notification with a few words in it", timeout=30)
        await until(pilot, lambda: bool(app.main_screen.query(Toast)))
        await pilot.pause(0.1)
        toast = app.main_screen.query_one(Toast)
        assert toast.region.bottom <= prompt.region.y, (toast.region, prompt.region)
        assert not toast.region.overlaps(status.region)

        prompt.load_text("one\ntwo\nthree\nfour")  # the prompt grows: the toast moves up with it
        await pilot.pause(0.2)
        assert prompt.region.height >= 6
        assert toast.region.bottom <= prompt.region.y, (toast.region, prompt.region)


async def test_export_without_a_path_writes_to_the_data_dir_and_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    app = FreeactApp(
        Config(sessions_dir=tmp_path / "sessions", working_dir=project), model=script(["an answer"]).model()
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "a question")
        assert app.agent is not None
        await send(pilot, app, "/export")
        target = isolated_home / "data" / "exports" / f"freeact-{app.agent.session_id[:8]}.md"
        assert "a question" in target.read_text()
        assert list(project.iterdir()) == []  # nothing new for git to see
        assert notices(app, "Export")[-1].startswith(f"Exported to {target}\n")
        await send(pilot, app, "/export out/chat.md")  # a path: as given
        assert "an answer" in (project / "out" / "chat.md").read_text()
        assert notices(app, "Export")[-1] == f"Exported to {project / 'out' / 'chat.md'}"


def test_a_session_title_is_the_users_words_in_plain_text() -> None:
    from freeact_tui.agent.user_shell import context_entry
    from freeact_tui.store.index import make_title

    shell = context_entry("ls", "a.txt\n", failed=False)
    assert make_title(f"{shell}\n\nSummarise **every** file in `src/`") == "Summarise every file in src/"
    long = make_title("word " * 40)
    assert long.endswith("word…") and len(long) <= 80
