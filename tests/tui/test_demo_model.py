"""The offline demo model (``--model demo``): intent parsing, and each intent end to end in the real app.

The app runs under Pilot with a real Agent and one real ipybox kernel for the module; the only
stand-in is the model itself, which here is the product (``freeact_tui.agent.demo_model``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.function import FunctionModel
from textual.pilot import Pilot

from freeact_tui.agent.demo_model import DEMO_MODEL, TOUR, demo_model, parse_intent
from freeact_tui.agent.models import missing_setup, resolve_model
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config
from freeact_tui.toolcalls import CodeAction, SubagentTask
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.screens.first_run import FirstRunScreen
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.widgets.blocks import ResponseBlock, ThoughtBlock, UserMessageBlock
from freeact_tui.tui.widgets.blocks.output import ExecutionOutputBlock
from freeact_tui.tui.widgets.blocks.tool_output import ToolOutputBlock
from tests import helpers
from tests.helpers import cli, main, ready, send, texts, until
from tests.scripted import Think, script

SIZE = (110, 34)
executor = helpers.kernel  # one kernel for the module


# -- unit level: what the demo makes of a prompt --------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        ("compute the sum of the squares of 1..100", "compute"),
        ("What is the sum of squares of 1 to 100?", "compute"),
        ("what is 2**64 - 1", "compute"),
        ("17 * 23", "compute"),
        ("compute sqrt(2) * pi", "compute"),
        ("factorial of 20", "compute"),
        ("the 30th fibonacci number", "compute"),
        ("how many primes below 100?", "compute"),
        ("compute the meaning of life", "compute_unknown"),
        ("how many files are here?", "count_files"),
        ("count the files", "count_files"),
        ("list the files", "list_files"),
        ("what is in this directory?", "list_files"),
        ('create a file notes/hi.txt containing "Hello, world"', "create_file"),
        ("Use a subagent to compute the factorial of 20", "subagent"),
        ("show a table", "table"),
        ("hello", "tour"),
        ("what can you do?", "tour"),
        ("", "tour"),
    ],
)
def test_parse_intent_kinds(prompt: str, kind: str) -> None:
    assert parse_intent(prompt).kind == kind


def test_parse_intent_details() -> None:
    squares = parse_intent("compute the sum of the squares of 1..100")
    assert squares.what == "the sum of the squares of 1 to 100"
    namespace: dict[str, Any] = {}
    printed: list[object] = []
    namespace["print"] = printed.append
    exec(squares.code, namespace)  # the code the demo would run computes the right thing
    assert printed == [338350]

    expr = parse_intent("what is 2^10 + 1?")
    assert expr.code == "print(2**10 + 1)"
    assert parse_intent("what is os.system('x')").kind == "tour"  # only arithmetic and math functions

    create = parse_intent('Create a file notes/hi.txt containing "Hello, world"')
    assert (create.path, create.content) == ("notes/hi.txt", "Hello, world")
    bare = parse_intent("create a file a.txt with the text two words")
    assert (bare.path, bare.content) == ("a.txt", "two words")

    sub = parse_intent("Use a subagent to compute the factorial of 20")
    assert sub.task == "compute the factorial of 20"
    assert parse_intent(sub.task).kind == "compute"  # the subagent's demo model acts on it in turn

    table = parse_intent("show a table of powers up to 5")
    assert table.kind == "table" and "range(1, 6)" in table.code


def test_demo_is_a_model_name_that_needs_no_setup() -> None:
    assert missing_setup(DEMO_MODEL) is None
    model = resolve_model(DEMO_MODEL)
    assert isinstance(model, FunctionModel) and model.model_name == "demo"
    assert "--model demo" in (missing_setup(None) or "")


# -- end to end: the real app, a real kernel ------------------------------------------------------------


@pytest.fixture
def make_app(executor: KernelExecutor, tmp_path: Path) -> Callable[..., FreeactApp]:
    def make(model: object = None, **kw: Any) -> FreeactApp:
        config = {"subagent_pool_size": 0}
        model = model or demo_model(delay=0)
        return helpers.make_app(
            model, tmp_path / "sessions", executor.working_dir, config=config, executor=executor, **kw
        )  # type: ignore[arg-type]

    return make


async def run_turn(pilot: Pilot[Any], prompt: str, answers: str = "y", limit: float = 90) -> list[Any]:
    """Send ``prompt``; answer each approval with the next key of ``answers`` (the last one repeats).

    Returns the tool calls that were asked about, in order.
    """
    app = pilot.app
    asked: list[Any] = []
    await ready(pilot)
    sent = len(main(app).conversation.query(UserMessageBlock))
    await send(pilot, prompt)
    # The turn has started once its prompt is in the log (it may already have ended: no approvals).
    await until(pilot, lambda: len(main(app).conversation.query(UserMessageBlock)) > sent, limit=limit)

    def settled() -> bool:
        return isinstance(app.screen, ApprovalScreen) or not main(app).turn_running

    while True:
        await until(pilot, settled, limit=limit)
        screen = app.screen
        if not isinstance(screen, ApprovalScreen):
            break
        asked.append(screen.request.tool_call)
        key = answers[min(len(asked) - 1, len(answers) - 1)]
        # `n` opens a line for what to do instead; Enter alone rejects
        await pilot.press(*((key, "enter") if key == "n" else (key,)))
        await until(pilot, lambda s=screen: app.screen is not s, limit=limit)  # type: ignore[misc]
    await app.workers.wait_for_complete()
    await pilot.pause()
    return asked


def outputs(app: FreeactApp) -> list[str]:
    return [b.text for b in main(app).conversation.query(ExecutionOutputBlock)]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_compute_runs_python_and_quotes_the_real_output(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        asked = await run_turn(pilot, "compute the sum of the squares of 1..100")
        assert len(asked) == 1 and isinstance(asked[0], CodeAction)
        assert "sum(n**2 for n in range(1, 101))" in asked[0].code
        assert outputs(app)[-1].strip() == "338350"  # printed by the kernel
        answer = texts(app, ResponseBlock)[-1]
        assert "**338350**" in answer and "sum of the squares of 1 to 100" in answer
        assert any("kernel" in t for t in texts(app, ThoughtBlock))
        assert app.agent is not None and app.agent.model_name == "demo"

        # An expression with math functions; the answer is whatever the kernel printed.
        await run_turn(pilot, "what is 2**64 - 1")
        assert outputs(app)[-1].strip() == str(2**64 - 1)
        assert f"**{2**64 - 1}**" in texts(app, ResponseBlock)[-1]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_rejected_action_is_acknowledged_politely(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        asked = await run_turn(pilot, "what is 6 * 7", answers="n")
        assert len(asked) == 1 and isinstance(asked[0], CodeAction)
        assert outputs(app) == []  # nothing ran
        await run_turn(pilot, "factorial of 10")
        answer = texts(app, ResponseBlock)
        assert any(a.startswith("You rejected my last action, so I did not run it.") for a in answer)
        assert len(texts(app, ThoughtBlock)) == 3  # one per model response: the thought comes first
        assert outputs(app)[-1].strip() == "3628800"
        assert "**3628800**" in answer[-1]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_count_and_list_files_run_shell_commands(
    make_app: Callable[..., FreeactApp], executor: KernelExecutor
) -> None:
    work = executor.working_dir
    for name in ("alpha.txt", "beta.txt"):
        (work / "counted" / name).parent.mkdir(exist_ok=True)
        (work / "counted" / name).write_text(name)
    (work / ".hidden").mkdir(exist_ok=True)
    (work / ".hidden" / "skipped").write_text("not counted")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        asked = await run_turn(pilot, "how many files are in this folder?")
        expected = sum(
            1
            for root, dirs, files in os.walk(work)
            for f in files
            if not any(p.startswith(".") for p in Path(root, f).relative_to(work).parts)
        )
        # A shell-only cell is asked per command, and `find` and `wc` are read-only commands the default
        # rules allow: nothing is asked at all.
        assert asked == []
        assert outputs(app)[-1].strip() == str(expected)
        assert f"**{expected}**" in texts(app, ResponseBlock)[-1]

        await run_turn(pilot, "list the files")
        listing = outputs(app)[-1]
        assert "counted" in listing and ".hidden" in listing  # ls -la really ran in the working dir
        answer = texts(app, ResponseBlock)[-1]
        assert "`counted`" in answer and "`.hidden`" in answer


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_create_file_writes_it_and_confirms_from_disk(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    target = tmp_path / "made" / "hello.txt"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await run_turn(pilot, f'create a file {target} containing "Hello from the demo"')
        assert target.read_text() == "Hello from the demo\n"
        assert "Hello from the demo" in outputs(app)[-1]
        answer = texts(app, ResponseBlock)[-1]
        assert f"Created `{target}` (20 bytes)." in answer and "Hello from the demo" in answer


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_table_is_markdown_built_from_the_output(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await run_turn(pilot, "show a table of powers up to 5")
        assert outputs(app)[-1].splitlines()[-1] == "5,25,125,32"
        answer = texts(app, ResponseBlock)[-1]
        assert "| n | n² | n³ | 2ⁿ |" in answer and "| 5 | 25 | 125 | 32 |" in answer
        table = main(app).conversation.query(ResponseBlock).last().query("MarkdownTable")
        assert table, "the answer renders as a table"


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_subagent_task_runs_the_demo_in_its_own_kernel(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        asked = await run_turn(pilot, "Use a subagent to compute the factorial of 20")
        assert isinstance(asked[0], SubagentTask) and asked[0].prompt == "compute the factorial of 20"
        sub_code = asked[1]
        assert isinstance(sub_code, CodeAction) and "math.factorial(20)" in sub_code.code
        fact = "2432902008176640000"
        assert any(fact in b.content for b in main(app).conversation.query(ToolOutputBlock))
        answer = texts(app, ResponseBlock)[-1]
        assert "subagent" in answer.lower() and fact in answer


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_the_tour_fits_80_columns(make_app: Callable[..., FreeactApp]) -> None:
    """Its code blocks are read at 80 columns as written: every line of each on one row (issue #43)."""
    from textual.widgets._markdown import MarkdownFence

    from freeact_tui.tui.widgets.blocks.markdown_view import BlankMarkdown

    app = make_app(DEMO_MODEL)
    async with app.run_test(size=(80, 24)) as pilot:
        await run_turn(pilot, "hi")
        await pilot.pause()
        markdown = main(app).conversation.query(ResponseBlock).last().query_one(BlankMarkdown)
        fences = [block for block in markdown.blocks if isinstance(block, MarkdownFence)]  # folded or not
        assert len(fences) >= 2
        width = markdown.content_region.width  # a fence is as wide as the answer
        for fence in fences:
            widest = max(len(line) for line in fence.code.splitlines())
            assert widest <= width, (fence.code, width)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_tour_for_anything_else(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(DEMO_MODEL)  # the name, as `--model demo` passes it
    async with app.run_test(size=SIZE) as pilot:
        asked = await run_turn(pilot, "hi, what is this?")
        assert asked == []
        answer = texts(app, ResponseBlock)[-1]
        assert answer == TOUR
        for needle in (
            "`y`",
            "`n`",
            "`a`",
            "`s`",
            "Ctrl+B",
            "--session-id",
            "--base-url",
            "ANTHROPIC_API_KEY",
        ):
            assert needle in answer, needle
        # The log follows to the end of a long answer: folding the thought above it must not scroll back up.
        log = main(app).conversation
        await pilot.pause(0.3)
        thought = log.query(ThoughtBlock).last().query_one("Collapsible")
        assert thought.collapsed  # type: ignore[attr-defined]
        assert log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_first_run_offers_the_demo(executor: KernelExecutor, tmp_path: Path) -> None:
    config = Config(
        sessions_dir=tmp_path / "sessions", working_dir=executor.working_dir, subagent_pool_size=0
    )
    app = FreeactApp(config, executor=executor)  # no model configured, no key in the environment
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FirstRunScreen))

        def guide() -> str:
            found = app.screen.query(
                "#first-run-guide"
            )  # the screen is current a moment before it is composed
            return str(found.first().source) if found else ""  # type: ignore[attr-defined]

        await until(pilot, lambda: "--model demo" in guide())  # the Markdown loads after the screen shows
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.agent is not None, limit=60)
        assert app.agent is not None and app.agent.model_name == "demo"
        await run_turn(pilot, "what is 12 * 12")
        assert texts(app, UserMessageBlock) == ["what is 12 * 12"]
        assert "**144**" in texts(app, ResponseBlock)[-1]


def test_setup_guide_offers_the_demo_and_names_keys_found(monkeypatch: pytest.MonkeyPatch) -> None:
    from freeact_tui.tui.screens.first_run import setup_guide

    guide = setup_guide("No model is configured.", demo_key=True)
    assert "Press **d**" in guide and "--model demo" in guide and "Found in your environment" not in guide
    assert "`/model demo`" in setup_guide("No model is configured.")  # in the app, no d key
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    guide = setup_guide("No model is configured.")
    assert "Found in your environment**: `OPENAI_API_KEY`" in guide and "--model openai:gpt-4o" in guide


def test_rejections_are_acknowledged_in_their_own_words() -> None:
    from freeact_tui.demo.model import _polite_rejection

    assert _polite_rejection("The user rejected this code action. Wait for new instructions.").startswith(
        "You rejected my last action, so I did not run it."
    )
    by_rule = _polite_rejection(
        "Refused this code action: denied by the permission rule code:*. Wait for new instructions."
    )
    assert by_rule.startswith("My last action was refused (denied by the permission rule code:*)")
    mid_cell = _polite_rejection(
        "partial output\n\nThe user rejected `rm -rf build`; the action was stopped. "
        "Wait for the user's next instruction."
    )
    assert mid_cell.startswith("You rejected `rm -rf build` in my last action, so I stopped it there.")


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_thought_between_two_texts_is_shown_once(executor: KernelExecutor, tmp_path: Path) -> None:
    """Text, a thought, more text in one response (the text part resumed after the thought ends it)."""
    s = script(["Intro text. ", Think("a thought"), "more text."])
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model=s.model(), executor=executor)
    async with app.run_test(size=SIZE) as pilot:
        await run_turn(pilot, "hi")
        assert texts(app, ThoughtBlock) == ["a thought"]
        assert "".join(texts(app, ResponseBlock)) == "Intro text. more text."


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return cli(*args, cwd=cwd, timeout=300)


@pytest.mark.kernel
def test_headless_run_with_the_demo(tmp_path: Path) -> None:
    done = _cli(
        "run",
        "--model",
        "demo",
        "--allow",
        "code:*",
        "compute the sum of the squares of 1..100",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout == "The kernel printed `338350`, so the sum of the squares of 1 to 100 is **338350**.\n"
    )
    without = _cli("run", "hello", cwd=tmp_path)  # no model configured: the error names the demo
    assert without.returncode != 0 and "--model demo" in without.stderr


def test_the_first_run_screen_names_the_demo_model() -> None:
    from freeact_tui.tui.screens.first_run import START_DEMO

    assert START_DEMO == DEMO_MODEL  # spelled out there so the first screen loads no pydantic-ai
