"""Working in a project (issue #12): the @ file picker and attachments, queued and steered messages,
find in the log, copy a block. The real app under Pilot with a real Agent and kernel; only the LLM is scripted."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ToolReturnPart, UserPromptPart
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.file_index import FileIndex, list_files
from freeact_tui.tui.mentions import attach_mentions, mentioned_paths
from freeact_tui.tui.screens.file_picker import FilePicker
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.widgets.blocks import ResponseBlock, UserMessageBlock
from freeact_tui.tui.widgets.find_bar import FOUND, FindBar
from freeact_tui.tui.widgets.prompt import PromptInput
from freeact_tui.tui.widgets.queued import QueuedMessages
from tests import helpers
from tests.scripted import Code, Script, Wait, script

SIZE = (110, 34)

executor = helpers.kernel
until = partial(helpers.until, limit=15.0)


# -- pure parts -------------------------------------------------------------------------------------


def make_tree(root: Path) -> None:
    for rel in ("src/app.py", "src/widgets/conversation.py", "docs/guide.md", "build/out.o", "x.log"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    for skipped in ("node_modules/pkg/index.js", ".venv/lib/site.py", "src/__pycache__/app.pyc"):
        (root / skipped).parent.mkdir(parents=True, exist_ok=True)
        (root / skipped).write_text("x")
    (root / ".gitignore").write_text("build/\n*.log\n")


def test_walk_skips_tool_dirs_and_honours_gitignore(tmp_path: Path) -> None:
    make_tree(tmp_path)
    assert list_files(tmp_path) == [
        ".gitignore",
        "docs/guide.md",
        "src/app.py",
        "src/widgets/conversation.py",
    ]


def test_git_listing_includes_untracked_and_excludes_ignored(tmp_path: Path) -> None:
    make_tree(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "src/app.py"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("build/\n*.log\nnode_modules/\n.venv/\n__pycache__/\ndocs/\n")
    assert list_files(tmp_path) == [".gitignore", "src/app.py", "src/widgets/conversation.py"]


def test_fuzzy_filter_ranks_file_name_matches_first_and_narrows() -> None:
    index = FileIndex(["a/conv/x.py", "src/widgets/conversation.py", "c/o/n/v.txt", "readme.md"])
    assert index.filter("conv") == ["src/widgets/conversation.py", "a/conv/x.py", "c/o/n/v.txt"]
    assert index.filter("convpy") == ["a/conv/x.py", "src/widgets/conversation.py"]
    assert index.matched == 2
    assert index.filter("CONVERSATION") == ["src/widgets/conversation.py"]
    assert index.filter("zzz") == []
    assert len(index.filter("")) == 4


def test_attach_mentions_inlines_text_and_references_large_or_binary(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('```')\n")
    (tmp_path / "big.txt").write_text("x" * 2000)
    (tmp_path / "img.bin").write_bytes(b"\x89PNG\0\0data")
    text = "look at @a.py, @big.txt and @img.bin but not @missing.py or user@example.com"
    assert mentioned_paths(text) == ["a.py", "big.txt", "img.bin", "missing.py"]
    out = attach_mentions(text, tmp_path, inline_max=1000)
    assert out.startswith(text + "\n\n[@a.py]\n````py\nprint('```')\n````")
    assert "[@big.txt: 2,000 bytes, too large to attach" in out
    assert "[@img.bin: a binary file (10 bytes), not attached]" in out
    assert "missing.py" not in out.removeprefix(text)
    assert attach_mentions("no mentions @nothing", tmp_path) == "no mentions @nothing"


# -- the app ----------------------------------------------------------------------------------------

kernel = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture
def make_app(executor: KernelExecutor, tmp_path: Path) -> Callable[[Script], FreeactApp]:
    work = tmp_path / "work"
    work.mkdir()
    make_tree(work)

    def make(s: Script) -> FreeactApp:
        config = {"subagent_pool_size": 0, "skip_permissions": True}
        return helpers.make_app(s, tmp_path / "sessions", work, config=config, executor=executor)

    return make


def screen(app: FreeactApp) -> MainScreen:
    return app.main_screen


async def type_prompt(pilot: Pilot[None], text: str) -> None:
    app = pilot.app
    assert isinstance(app, FreeactApp)
    await until(pilot, lambda: app.agent_ready)
    prompt = screen(app).query_one(PromptInput)
    prompt.load_text(text)
    prompt.move_cursor(prompt.document.end)
    prompt.focus()


async def send(pilot: Pilot[None], text: str) -> None:
    """Type ``text`` and press Enter: it is sent, or queued while a turn runs."""
    await type_prompt(pilot, text)
    await pilot.press("enter")


async def start_turn(pilot: Pilot[None], s: Script, text: str) -> None:
    """Send ``text`` and wait until the model has its request (a script waiting at a gate holds the turn there)."""
    app = pilot.app
    assert isinstance(app, FreeactApp)
    await send(pilot, text)
    await until(pilot, lambda: screen(app).turn_running and bool(s.requests))


async def alt(pilot: Pilot[None], letter: str) -> None:
    """Press Alt+letter as a terminal sends it: a key that also carries its printable character."""
    event = events.Key(f"alt+{letter}", letter)
    event.set_sender(pilot.app)
    pilot.app.post_message(event)
    await pilot.pause()
    await pilot.pause()


def user_prompts(s: Script, request: int) -> list[str]:
    return [
        str(p.content)
        for m in s.requests[request]
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_at_opens_picker_inserts_path_and_send_attaches_file(
    make_app: Callable[[Script], FreeactApp],
) -> None:
    s = script(["Read it."])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "explain ")
        await pilot.press("@")
        await until(pilot, lambda: isinstance(app.screen, FilePicker) and app.screen.shown == "")
        picker = app.screen
        assert isinstance(picker, FilePicker)
        assert picker.query_one(OptionList).option_count == 4
        await pilot.press(*"wconv")
        await until(pilot, lambda: picker.shown == "wconv")
        listed = picker.query_one(OptionList)
        assert [listed.get_option_at_index(i).id for i in range(listed.option_count)] == [
            "src/widgets/conversation.py"
        ]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        prompt = screen(app).query_one(PromptInput)
        assert prompt.text == "explain @src/widgets/conversation.py "
        await pilot.press("@")  # Esc closes the picker and keeps the @
        await until(pilot, lambda: isinstance(app.screen, FilePicker))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert prompt.text == "explain @src/widgets/conversation.py @"
        assert prompt.has_focus
        await pilot.press("backspace", "enter")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not screen(app).turn_running)
        sent = user_prompts(s, 0)[-1]
        assert sent.startswith("explain @src/widgets/conversation.py")
        assert "[@src/widgets/conversation.py]\n```py\n# src/widgets/conversation.py\n```" in sent
        shown = [b.text.strip() for b in screen(app).conversation.query(UserMessageBlock)]
        assert shown == ["explain @src/widgets/conversation.py"]  # the attachment goes to the model only


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_messages_typed_during_a_turn_queue_edit_remove_and_send_after(
    make_app: Callable[[Script], FreeactApp],
) -> None:
    gate = asyncio.Event()
    s = script(["first ", Wait(gate), "done"], ["second done"], ["fourth done"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await start_turn(pilot, s, "first")
        queue = screen(app).query_one(QueuedMessages)
        for text in ("second", "third", "fourth"):
            await send(pilot, text)
        await until(pilot, lambda: queue.items == ["second", "third", "fourth"])
        assert queue.display
        assert "Queued (3)" in str(queue.query_one("#queued-title").render())
        options = queue.query_one(OptionList)
        await pilot.press("shift+tab")  # from the prompt to the queue
        assert options.has_focus
        options.highlighted = 1
        await pilot.press("delete")  # "third" removed
        assert queue.items == ["second", "fourth"]
        options.highlighted = 0
        await pilot.press("enter")  # "second" back in the prompt for editing
        prompt = screen(app).query_one(PromptInput)
        assert prompt.text == "second" and prompt.has_focus
        assert queue.items == ["fourth"]
        prompt.load_text("second, edited")
        await pilot.press("enter")
        assert queue.items == ["fourth", "second, edited"]
        gate.set()
        await until(pilot, lambda: len(s.requests) == 3 and not screen(app).turn_running and not queue.items)
        await app.workers.wait_for_complete()
        assert user_prompts(s, 1)[-1] == "fourth"
        assert user_prompts(s, 2)[-1] == "second, edited"
        assert [b.text for b in screen(app).conversation.query(UserMessageBlock)] == [
            "first",
            "fourth",
            "second, edited",
        ]
        assert not queue.display


# (the model's script while the message is typed; whether a next step of the same turn takes it)
STEERS = [
    pytest.param(lambda gate: script([Wait(gate), Code("print(6 * 7)")], ["Noted: use tabs."]), True, id="a-step-follows"),
    pytest.param(lambda gate: script(["thinking ", Wait(gate), "answer"], ["next answer"]), False, id="the-turn-ends"),
]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("make_script", "same_turn"), STEERS)
async def test_alt_s_sends_into_the_running_turn_at_its_next_step_else_the_next_turn(
    make_app: Callable[[Script], FreeactApp], make_script: Callable[[asyncio.Event], Script], same_turn: bool
) -> None:
    """The message goes into the turn (not the queue); the turn's next step carries it after the step's tool
    results; a turn that ends without another step leaves it for the next turn."""
    gate = asyncio.Event()
    s = make_script(gate)
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await start_turn(pilot, s, "compute")
        await type_prompt(pilot, "also: use tabs")
        await alt(pilot, "s")
        assert screen(app).query_one(PromptInput).text == ""
        assert not screen(app).query_one(QueuedMessages).items
        gate.set()
        await until(pilot, lambda: len(s.requests) == 2 and not screen(app).turn_running)
        await app.workers.wait_for_complete()
        last = s.requests[1][-1]
        assert isinstance(last, ModelRequest)
        assert [p.content for p in last.parts if isinstance(p, UserPromptPart)] == ["also: use tabs"]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]  # the same request, after them
        assert len(s.requests) == 2  # one request more: the next step's, or the next turn's
        texts = [b.text for b in screen(app).conversation.query(UserMessageBlock)]
        assert texts == ["compute", "also: use tabs"]  # shown once: where the model gets it
        if same_turn:
            assert "42" in str(returns[0].content) and last.parts.index(returns[0]) == 0
        else:
            assert returns == []


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_ctrl_f_finds_blocks_and_alt_c_copies(make_app: Callable[[Script], FreeactApp]) -> None:
    s = script(["Apples are red."], ["Bananas are yellow."], ["More apples here."])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        for prompt in ("fruit one", "fruit two", "fruit three"):
            await send(pilot, prompt)
            await until(pilot, lambda: not screen(app).turn_running)
            await app.workers.wait_for_complete()
        answers = list(screen(app).conversation.query(ResponseBlock))
        assert [a.text for a in answers] == ["Apples are red.", "Bananas are yellow.", "More apples here."]
        await alt(pilot, "c")  # nothing found yet: the last answer
        assert app.clipboard == "More apples here."
        await pilot.press("ctrl+f")
        bar = screen(app).query_one(FindBar)
        assert bar.display
        await pilot.press(*"APPLE")
        assert bar.found is answers[0] and answers[0].has_class(FOUND)
        assert str(bar.query_one("#find-count").render()) == "1/2"
        await pilot.press("enter")
        assert bar.found is answers[2] and not answers[0].has_class(FOUND)
        await pilot.press("shift+enter")
        assert bar.found is answers[0]
        await alt(pilot, "c")
        assert app.clipboard == "Apples are red."
        assert bar.query_one(Input).value == "APPLE"  # the key did not type a "c" into the find field
        await pilot.press("f3", "f3")
        assert bar.found is answers[0]
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace", *"fruit t")
        assert [b.text for b in bar.matches] == ["fruit two", "fruit three"]  # type: ignore[attr-defined]
        await pilot.press(*"xyz")
        assert bar.found is None and str(bar.query_one("#find-count").render()) == "no match"
        await pilot.press("escape")
        assert not bar.display and screen(app).query_one(PromptInput).has_focus
        assert not any(b.has_class(FOUND) for b in screen(app).conversation.blocks)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_agent_steer_reaches_the_next_model_request_and_the_session(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    from freeact_tui.agent.agent import Agent

    gate = asyncio.Event()
    s = script([Wait(gate), Code("print('step one')")], ["Done, and noted."])
    agent = Agent(s.model(), executor=executor, skip_permissions=True, sessions_dir=tmp_path / "sessions")
    async with agent:
        assert not agent.steer("too early")  # no turn runs
        events = []

        async def consume() -> None:
            async for event in agent.stream("do the thing"):
                events.append(event)

        task = asyncio.create_task(consume())
        while not s.requests:  # noqa: ASYNC110  (the script records the request; nothing to await)
            await asyncio.sleep(0.01)
        assert agent.steer("prefer metric units")
        gate.set()
        await task
        assert agent.take_steering() == []  # taken by the turn
    assert len(s.requests) == 2
    sent = s.requests[1][-1]
    assert isinstance(sent, ModelRequest)
    assert [type(p).__name__ for p in sent.parts] == ["ToolReturnPart", "UserPromptPart"]
    assert sent.parts[1].content == "prefer metric units"
    assert "step one" in str(sent.parts[0].content)
    stored = [
        p.content
        for m in agent.history
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]
    assert stored == ["do the thing", "prefer metric units"]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_cancelling_a_turn_keeps_the_queue_waiting(make_app: Callable[[Script], FreeactApp]) -> None:
    gate = asyncio.Event()
    s = script(["working ", Wait(gate)], ["later answer"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await start_turn(pilot, s, "long task")
        await send(pilot, "follow-up")
        queue = screen(app).query_one(QueuedMessages)
        assert queue.items == ["follow-up"]
        await pilot.press("escape")  # cancels the turn
        await until(pilot, lambda: not screen(app).turn_running)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert queue.items == ["follow-up"] and len(s.requests) == 1  # nothing sent after a cancel
        await pilot.press("shift+tab", "enter")
        assert screen(app).query_one(PromptInput).text == "follow-up"
        await pilot.press("enter")
        await until(pilot, lambda: len(s.requests) == 2 and not screen(app).turn_running)
        assert user_prompts(s, 1)[-1] == "follow-up"


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_a_queued_shell_command_runs_then_the_next_message_goes(
    make_app: Callable[[Script], FreeactApp],
) -> None:
    from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock

    gate = asyncio.Event()
    s = script(["busy ", Wait(gate)], ["seen it"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await start_turn(pilot, s, "start")
        for text in ("!echo queued-$((6*7))", "what did it print?"):
            await send(pilot, text)
        gate.set()
        await until(pilot, lambda: len(s.requests) == 2 and not screen(app).turn_running, limit=30)
        await app.workers.wait_for_complete()
        outputs = [b.text for b in screen(app).conversation.query(ExecutionOutputBlock)]
        assert any("queued-42" in o for o in outputs)
        sent = user_prompts(s, 1)[-1]
        assert "queued-42" in sent and sent.endswith("what did it print?")
