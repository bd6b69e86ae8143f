"""A long reply is a bounded number of widgets, and looks as it did when it was a widget per block (#40).

Every widget costs every layout of the screen, and Textual's ``Markdown`` makes a widget of each block: a
streamed reply of 1,200 paragraphs was 1,200 widgets and each new paragraph cost all of them. Finished
blocks are now folded into ``FoldedBlocks`` widgets drawn as lines. Checked over generated documents
(paragraphs with inline marks and wide characters, headings, nested and ordered lists, lists holding
fences, fences with long lines, nested quotes, rules): (1) through the real app and a scripted model, the
widgets of one streamed reply stay under a bound whatever the number of its blocks, and so do a resumed
session's; (2) the text drawn, streamed in random pieces or given whole, at two widths and after a resize,
is exactly the text Textual's own ``Markdown`` draws.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Markdown

from freeact_tui.events import Response, Thoughts, ThoughtsChunk
from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import AnsiLog, ResponseBlock, ThoughtBlock
from freeact_tui.tui.widgets.blocks.markdown_fold import FoldedBlocks
from freeact_tui.tui.widgets.blocks.markdown_view import BlankMarkdown, literal_parser
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers

WORDS = ["alpha", "`code`", "**bold**", "*em*", "~~gone~~", "42", "über", "线线", "x_y", "[link](u)", "<b>"]


def paragraph(rng: random.Random, most: int = 30) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, most)))


def fence(rng: random.Random) -> str:
    long = "x = '" + "long " * rng.randrange(1, 30) + "'"
    return f"```python\nprint({rng.randrange(100)})\n{long}\n```\n"


def block(rng: random.Random, kind: int) -> str:
    """One top-level block of a kind: 0 prose (most of a reply), 1 heading, 2 list, 3 fence, 4 quote, 5 rule,
    6 ordered list, 7 a list whose item holds a fence and a paragraph."""
    match kind:
        case 1:
            return f"{'#' * rng.randrange(1, 7)} {paragraph(rng, 12)}\n"
        case 2:
            return "".join(f"{'  ' * min(i, 2)}- {paragraph(rng, 10)}\n" for i in range(rng.randrange(1, 5)))
        case 3:
            return fence(rng)
        case 4:
            return f"> {paragraph(rng)}\n>\n> > {paragraph(rng, 8)}\n"
        case 5:
            return "---\n"
        case 6:
            start = rng.randrange(1, 12)
            return "".join(f"{start + i}. {paragraph(rng, 8)}\n" for i in range(rng.randrange(1, 4)))
        case 7:
            return f"- {paragraph(rng, 6)}\n\n  ```\n  in the item\n  ```\n\n  {paragraph(rng, 6)}\n"
    return f"{paragraph(rng)}\n{paragraph(rng, 10)}\n"


def document(seed: int, count: int) -> str:
    rng = random.Random(seed)
    kinds = [0, 0, 0, 1, 2, 3, 4, 5, 6, 7]
    return "\n".join(block(rng, rng.choice(kinds)) for _ in range(count))


def pieces(text: str, seed: int, most: int = 12) -> list[str]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        step = rng.randrange(1, most)
        out.append(text[i : i + step])
        i += step
    return out


def widgets(root: Widget) -> int:
    return len(root.walk_children(with_self=False))


# -- the widget count of one reply ---------------------------------------------------------------------


def scripted(parts: list[str]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for part in parts:
            yield part

    return FunctionModel(stream_function=stream, model_name="pieces")


STREAMING_BOUND = 80
"""Widgets of a reply while it streams: the folds, and the open block (a list of a few items is a dozen)."""
DONE_BOUND = 3
"""Widgets of a finished reply without tables: its markdown view and one fold."""


async def streamed_reply_widgets(text: str, seed: int, tmp_path: Path) -> tuple[int, int, str]:
    """The most widgets the reply's block had while it streamed, those it has once done, and its text."""
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model=scripted(pieces(text, seed, 40)), eager_kernel=False)
    most = 0
    async with app.run_test(size=helpers.SIZE) as pilot:
        await helpers.until(pilot, lambda: app.agent_ready)
        screen = app.main_screen
        screen.query_one(PromptInput).load_text("go")
        await pilot.press("enter")
        while screen.turn_running or not screen.conversation.query(ResponseBlock):
            for reply in screen.conversation.query(ResponseBlock):
                most = max(most, widgets(reply))
            await asyncio.sleep(0.02)
        await pilot.pause()
        reply = screen.conversation.query(ResponseBlock).last()
        return max(most, widgets(reply)), widgets(reply), reply.text


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 10_000), st.integers(60, 240))
def test_a_streamed_reply_is_a_bounded_number_of_widgets_whatever_its_length(seed: int, count: int) -> None:
    text = document(seed, count)
    with tempfile.TemporaryDirectory() as tmp:
        most, done, shown = asyncio.run(streamed_reply_widgets(text, seed, Path(tmp)))
    assert shown == text
    assert most <= STREAMING_BOUND, f"{most} widgets while {count} blocks streamed"
    assert done <= DONE_BOUND, f"{done} widgets for a finished reply of {count} blocks"


async def test_a_resumed_sessions_long_reply_is_a_bounded_number_of_widgets(tmp_path: Path) -> None:
    text = document(7, 400)
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model=scripted(["hi"]), eager_kernel=False)
    async with app.run_test(size=helpers.SIZE) as pilot:
        await helpers.until(pilot, lambda: app.agent_ready)
        log = app.main_screen.conversation
        async with log.replay():  # how a resumed session's turns are drawn
            await log.response_end(Response(content=text, agent_id="main"))
        await pilot.pause()
        reply = log.query(ResponseBlock).last()
        assert reply.text == text
        assert widgets(reply) <= DONE_BOUND


async def test_a_long_thought_is_a_bounded_number_of_widgets(tmp_path: Path) -> None:
    """Thinking streams into the same markdown view (inside a fold of the log): bounded the same way."""
    text = document(11, 300)
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model=scripted(["hi"]), eager_kernel=False)
    async with app.run_test(size=helpers.SIZE) as pilot:
        await helpers.until(pilot, lambda: app.agent_ready)
        log = app.main_screen.conversation
        for piece in pieces(text, 3, 300):
            await log.thought_chunk(ThoughtsChunk(content=piece))
        await log.thought_end(Thoughts(content=text))
        await log.response_end(Response(content="done"))  # the thought folds away, as after a reply
        await pilot.pause()
        thought = log.query(ThoughtBlock).last()
        assert thought.text == text
        assert widgets(thought) <= DONE_BOUND + 4  # and its collapsible: a title, its contents


# -- the same text drawn ---------------------------------------------------------------------------------


class Host(App[None]):
    """Markdown views in a scrolling log; ``stream``: laid out as a reply's (``layout: stream``, which reads
    only the margins of the CSS), else as Textual's default (vertical)."""

    CSS = "Markdown.-stream { layout: stream; }"

    def compose(self) -> ComposeResult:
        yield VerticalScroll()


def drawn_text(app: App[None], widget: Widget) -> list[str]:
    """The rows of the screen that ``widget`` covers, as text."""
    strips = app.screen._compositor.render_strips()
    region = widget.region
    return [
        "".join(s.text for s in strip.crop(region.x, region.right)._segments).rstrip()
        for strip in strips[region.y : region.bottom]
    ]


async def both_ways(text: str, seed: int, width: int, resized: int, stream: bool) -> None:
    app = Host()
    async with app.run_test(size=(width, 600)) as pilot:
        scroll = app.query_one(VerticalScroll)

        async def textual(at: int) -> list[str]:
            plain = Markdown(text, parser_factory=literal_parser)  # a widget per block
            plain.set_class(stream, "-stream")
            await scroll.mount(plain)
            await pilot.pause()
            rows = drawn_text(app, plain)
            await plain.remove()
            return rows

        expected = await textual(width)
        whole = BlankMarkdown(text, complete=True)
        whole.set_class(stream, "-stream")
        await scroll.mount(whole)
        await pilot.pause()
        assert [type(c) for c in whole.children] == [FoldedBlocks]
        assert drawn_text(app, whole) == expected
        await whole.remove()

        streamed = BlankMarkdown()
        streamed.set_class(stream, "-stream")
        await scroll.mount(streamed)
        await pilot.pause()
        for piece in pieces(text, seed):
            await streamed.append(piece)
            await asyncio.sleep(0)
        await pilot.pause()
        assert len(streamed.children) <= 2  # a fold and the open block
        assert drawn_text(app, streamed) == expected  # folded while streaming, the open block a widget
        await streamed.seal()
        await pilot.pause()
        assert drawn_text(app, streamed) == expected

        await pilot.resize_terminal(resized, 600)
        await pilot.pause()
        shown = drawn_text(app, streamed)
        await streamed.remove()
        assert shown == await textual(resized)  # drawn again at the new width


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 14), st.sampled_from([(72, 41), (50, 90)]), st.booleans())
def test_folded_blocks_draw_the_text_textuals_markdown_draws(
    seed: int, count: int, widths: tuple[int, int], stream: bool
) -> None:
    asyncio.run(both_ways(document(seed, count), seed, *widths, stream))


def test_the_generated_documents_hold_every_kind_of_block() -> None:
    text = "\n".join(document(seed, 14) for seed in range(5))
    tokens = {token.type for token in literal_parser().parse(text)}
    kinds = {"heading_open", "bullet_list_open", "ordered_list_open", "fence", "blockquote_open", "hr"}
    assert kinds <= tokens
    nested = literal_parser().parse(block(random.Random(1), 7))
    assert any(token.type == "fence" and token.level > 0 for token in nested)  # a fence inside a list item


# -- the kernel's streamed output: one widget, and a write counts its own lines -----------------------------


@contextmanager
def counting_rows(counted: list[int]) -> Iterator[None]:
    """Count the lines the log measures, into the last entry of ``counted``."""
    rows_of = AnsiLog._rows_of

    def counting(self: AnsiLog, line: str, width: int) -> int:
        if counted:
            counted[-1] += 1
        return rows_of(self, line, width)

    AnsiLog._rows_of = counting  # type: ignore[method-assign]
    try:
        yield
    finally:
        AnsiLog._rows_of = rows_of  # type: ignore[method-assign]


class OutputHost(App[None]):
    def compose(self) -> ComposeResult:
        yield AnsiLog(max_lines=300)


async def written(
    chunks: list[str], counted: list[int], pruned: list[bool]
) -> tuple[list[int], int, list[int], int]:
    """The log's row map after the writes, and the one a full recount gives; ``counted`` gets the lines
    counted per write, ``pruned`` whether the write dropped lines from the top (``max_lines``)."""
    app = OutputHost()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(AnsiLog)
        await pilot.pause()
        for chunk in chunks:
            counted.append(0)
            log.write(chunk)
            pruned.append(log._pruned)
        incremental = (list(log._row_starts), log._rows)
        counted.append(0)  # (not a write's)
        log._rewrap()  # everything counted again from the first line
        return *incremental, list(log._row_starts), log._rows


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from(["a", "bb ", "线", "\n", "\r", "\x1b[31m", "\t", "x" * 70]), max_size=40
        ).map("".join),
        min_size=1,
        max_size=120,
    )
)
def test_output_rows_are_counted_per_write_from_the_line_it_changed(chunks: list[str]) -> None:
    counted: list[int] = []
    pruned: list[bool] = []
    with counting_rows(counted):
        starts, rows, full_starts, full_rows = asyncio.run(written(chunks, counted, pruned))
    assert (starts, rows) == (full_starts, full_rows)  # the same rows as a recount of every line
    for chunk, lines, dropped in zip(chunks, counted[:-1], pruned, strict=True):
        if not dropped:  # its own lines and the one it continued, never those before
            assert lines <= chunk.count("\n") + 1, (lines, chunk)


def test_a_long_output_costs_each_write_its_own_lines() -> None:
    chunks = [f"line {i}\n" for i in range(1000)]
    counted: list[int] = []
    pruned: list[bool] = []
    with counting_rows(counted):
        asyncio.run(written(chunks, counted, pruned))
    assert sum(counted) <= 2 * len(chunks) + sum(pruned) * 301, sum(counted)  # was 1000 * 500 / 2


async def test_folded_text_is_selected_and_copied_as_shown() -> None:
    from textual.selection import Selection

    text = "Some **bold** text\n\n- item one\n- item two\n\n> a quote\n"
    app = Host()
    async with app.run_test(size=(60, 40)) as pilot:
        whole = BlankMarkdown(text, complete=True)
        await app.query_one(VerticalScroll).mount(whole)
        await pilot.pause()
        fold = whole.query_one(FoldedBlocks)
        app.screen.selections = {fold: Selection(None, None)}  # select all
        await pilot.pause()
        assert app.screen.get_selected_text() == "Some bold text\n\n• item one\n• item two\n\n▌ a quote"
        app.screen.selections = {}
        await pilot.mouse_down(fold, offset=(0, 0))  # a drag over the first words
        await pilot.hover(fold, offset=(9, 0))
        await pilot.mouse_up(fold, offset=(9, 0))
        await pilot.pause()
        assert app.screen.get_selected_text() == "Some bold "


async def test_a_new_theme_draws_the_fences_again_in_its_colours() -> None:
    text = "Text\n\n```python\nprint('x')\n```\n"
    app = Host()
    async with app.run_test(size=(60, 40)) as pilot:
        whole = BlankMarkdown(text, complete=True)
        await app.query_one(VerticalScroll).mount(whole)
        await pilot.pause()
        fold = whole.query_one(FoldedBlocks)
        dark = drawn_text(app, whole)
        assert fold._drawn_look is not None and fold._drawn_look.dark
        app.theme = "textual-light"
        await pilot.pause()
        assert fold._drawn_look is not None and not fold._drawn_look.dark  # highlighted for a light theme
        assert drawn_text(app, whole) == dark  # the same text
