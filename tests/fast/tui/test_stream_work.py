"""A long reply streamed in tiny deltas costs the TUI work per delta that does not grow with the text so far.

Counted, not timed: (1) the markdown view's work per append — characters parsed plus characters of the
whole document rebuilt — is bounded by the last top-level block and the fragment, never the document
(Textual's own ``Markdown.append`` rebuilds and re-splits the whole source per append); checked over
generated documents and delta sizes. (2) The status bar's fit pass, which walks its labels, runs when
a reading changes, not once per streamed delta.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from textual.app import App, ComposeResult
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownFence

from freeact_tui.project.config import Config
from freeact_tui.text.safe import visible
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ResponseBlock
from freeact_tui.tui.widgets.blocks.markdown_view import (
    OPEN_BLOCK_RATE,
    BlankMarkdown,
    ThrottledMarkdown,
    flush_interval,
)
from freeact_tui.tui.widgets.prompt import PromptInput
from freeact_tui.tui.widgets.status_bar import StatusBar
from tests import helpers

MAX_BLOCK = 240  # characters of the longest top-level block a generated document has


def blocks(rng: random.Random) -> Iterator[str]:
    """Top-level markdown blocks of at most ``MAX_BLOCK`` characters: prose, lists, fences, headings, quotes."""
    words = ["alpha", "`code`", "**bold**", "42", "über", "线", "x_y", "[l](u)", "<b>", "\t"]
    while True:
        kind = rng.randrange(5)
        body = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 25)))
        piece = {
            0: f"{body}\n{body[:40]}\n",
            1: "".join(f"- {w}\n" for w in body.split()[:8]),
            2: f"```python\nprint({body[:60]!r})\n```\n",
            3: f"## {body[:50]}\n",
            4: f"> {body}\n",
        }[kind]
        yield piece[:MAX_BLOCK] + "\n"


def document(seed: int, size: int) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    total = 0
    for block in blocks(rng):
        if total >= size:
            return "".join(out)
        out.append(block)
        total += len(block)
    raise AssertionError("unreachable")


def deltas(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        step = rng.randrange(1, 9)
        out.append(text[i : i + step])
        i += step
    return out


class MarkdownApp(App[None]):
    def compose(self) -> ComposeResult:
        yield BlankMarkdown()


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Characters handled per operation: each parse's input, each rebuild of the whole source."""
    seen: list[int] = []
    parse = MarkdownIt.parse
    source = Markdown.source.fget  # type: ignore[attr-defined]
    blank_source = BlankMarkdown.source.fget  # type: ignore[attr-defined]

    def counted_parse(self: MarkdownIt, src: str, env: object = None) -> object:
        seen.append(len(src))
        return parse(self, src, env)

    def counted(getter: object) -> property:
        def read(self: Markdown) -> str:
            text: str = getter(self)  # type: ignore[operator]
            seen.append(len(text))
            return text

        return property(read)

    monkeypatch.setattr(MarkdownIt, "parse", counted_parse)
    monkeypatch.setattr(Markdown, "source", counted(source))
    monkeypatch.setattr(BlankMarkdown, "source", counted(blank_source))
    return seen


@pytest.mark.parametrize("seed", range(4))
async def test_an_append_costs_the_last_block_and_the_fragment_never_the_document(
    seed: int, work: list[int]
) -> None:
    text = document(seed, 2_500 + 500 * seed)
    pieces = deltas(text, seed)
    app = MarkdownApp()
    async with app.run_test(size=(100, 30)) as pilot:
        markdown = app.query_one(BlankMarkdown)
        await pilot.pause()
        for piece in pieces:  # every delta flushed on its own: the most appends a stream can cause
            work.clear()
            await markdown.append(piece)
            # the last block may still change, so it is parsed again; the rest of the text never is
            bound = 2 * MAX_BLOCK + len(piece) + 2
            assert sum(work) <= 2 * bound, f"{sum(work)} characters for a {len(piece)}-character delta"
        work.clear()
        assert markdown.source == visible(text)  # what was appended is all there, in order
        assert any(isinstance(b, MarkdownFence) for b in markdown.blocks) or "```" not in text


def scripted(pieces: list[str]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in pieces:
            yield piece

    return FunctionModel(stream_function=stream, model_name="pieces")


@pytest.mark.parametrize("count", [40, 1200])
async def test_the_status_bar_is_not_refitted_per_streamed_delta(
    count: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fits: list[int] = []
    fit = StatusBar._fit

    def counted(self: StatusBar) -> None:
        fits.append(1)
        fit(self)

    pieces = [f"w{i} " for i in range(count)]
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model=scripted(pieces), eager_kernel=False)
    async with app.run_test(size=helpers.SIZE) as pilot:
        await helpers.until(pilot, lambda: app.agent_ready)
        screen = app.main_screen
        monkeypatch.setattr(StatusBar, "_fit", counted)
        screen.query_one(PromptInput).load_text("go")
        await pilot.press("enter")
        await helpers.until(pilot, lambda: screen.conversation.query(ResponseBlock), limit=30)
        await helpers.until(pilot, lambda: not screen.turn_running, limit=60)
        await asyncio.sleep(0)
        assert screen.conversation.query(ResponseBlock).last().text == "".join(pieces)
    assert len(fits) <= 20, f"{len(fits)} fits for {count} deltas"


# -- a reply that is one long paragraph: the flush waits in proportion to the block it re-draws ------------


def redrawn(total: int, rate: float, wait: Callable[[int], float]) -> int:
    """Characters re-drawn when ``total`` characters of one paragraph arrive at ``rate`` per second and each
    flush (after ``wait(open block)`` seconds) re-draws the open block whole: a model of the stream."""
    shown, spent, clock = 0, 0, 0.0
    while shown < total:
        clock += wait(shown)
        shown = min(total, int(clock * rate))
        spent += shown
    return spent


@settings(max_examples=60, deadline=None)
@given(st.integers(20_000, 400_000), st.floats(2_000, 200_000))
def test_one_long_paragraph_is_redrawn_in_time_linear_in_its_length(total: int, rate: float) -> None:
    """With the wait of ``flush_interval`` the re-drawing sums to a steady multiple of the text, whatever its
    length and the rate it comes at; with a fixed wait it grows with the square of the length."""
    bound = 3 * (1 + OPEN_BLOCK_RATE / rate)  # the block grows by rate/OPEN_BLOCK_RATE of itself per flush
    adaptive = redrawn(total, rate, lambda n: flush_interval(0.2, n))
    assert adaptive <= bound * total + 40 * 0.2 * rate  # (+ the flushes at the base wait, while short)
    fixed = redrawn(total, rate, lambda n: 0.2)
    if total >= 5 * 0.2 * OPEN_BLOCK_RATE and total / (0.2 * rate) > 50:  # a long block, many flushes
        assert fixed > 2 * adaptive


async def test_the_stream_waits_longer_while_its_open_block_is_long() -> None:
    app = MarkdownApp()
    async with app.run_test(size=(100, 30)) as pilot:
        markdown = app.query_one(BlankMarkdown)
        stream = ThrottledMarkdown(markdown, interval=0.05)
        stream.write("word " * 40_000)  # one paragraph of 200,000 characters
        await pilot.pause(0.2)
        assert stream.flushes == 1 and len(markdown.open_block) == 200_000
        stream.write("more ")
        assert stream._timer is not None and stream._timer._interval == 200_000 / OPEN_BLOCK_RATE  # not 0.05
        await stream.stop()
        assert stream.flushes == 2 and markdown.source.endswith("more ")
