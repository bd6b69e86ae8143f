"""The conversation log: a streaming, anchored list of blocks, bounded in size.

Blocks of a subagent nest under the block of the ``subagent_task`` call that started it.
Beyond ``budget`` top-level blocks, or ``widget_budget`` widgets, the oldest blocks are removed from
the DOM (the session file keeps them): every layout visits every mounted widget, so the widget count
bounds the cost of each turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from freeact_tui.tui.widgets.call_order import insert_in_call_order, last_block_of
from freeact_tui.tui.widgets.earlier_turns import EarlierTurns

if TYPE_CHECKING:  # the events and blocks load after the first frame: imported where used
    from freeact_tui.events import (
        ApprovalRequest,
        CodeExecutionOutput,
        CodeExecutionOutputChunk,
        Response,
        ResponseChunk,
        SubagentStatus,
        Thoughts,
        ThoughtsChunk,
        ToolOutput,
    )
    from freeact_tui.tui.widgets.blocks import (
        ActionBlock,
        Block,
        ErrorBlock,
        ExecutionOutputBlock,
        NoticeBlock,
        ResponseBlock,
        SubagentBlock,
        ThoughtBlock,
        UserMessageBlock,
    )


class ConversationLog(VerticalScroll):
    """All blocks of the conversation; follows new output unless the user scrolled up.

    Args:
        budget: The most top-level blocks kept mounted.
        widget_budget: The most widgets kept mounted (a markdown answer is many widgets); the newest
            ``KEEP_NEWEST`` blocks always stay.
    """

    KEEP_NEWEST = 10

    DEFAULT_CSS = """
    ConversationLog {
        layout: stream;
        height: 1fr;
        padding: 0 1;
        & > #pruned { color: $text-muted; text-align: center; }
        & > #welcome { color: $text-muted; padding: 0 1; margin: 1 0 0 0; }
        & > #earlier { color: $text-muted; text-align: center; }
    }
    """

    # Paint only the blocks: a plain container repaints every visible line on each scroll.
    BLANK = True

    def __init__(self, *, budget: int = 200, widget_budget: int = 800, id: str | None = None) -> None:
        super().__init__(id=id)
        self.budget = budget
        self.widget_budget = widget_budget
        self.pruned = 0
        self._subagents: dict[str, SubagentBlock] = {}
        self._thoughts: dict[str, ThoughtBlock] = {}
        # Finished thoughts stay open (dimmed) while the response below streams; collapsed once it ends.
        self._open_thoughts: dict[str, list[ThoughtBlock]] = {}
        self._responses: dict[str, ResponseBlock] = {}
        self._outputs: dict[tuple[str, str], ExecutionOutputBlock] = {}
        self._output_below = False
        self._pending: list[Block] | None = None
        self.earlier = EarlierTurns()
        """A resumed session's turns not drawn yet."""

    class OutputBelow(Message):
        """New output arrived below the viewport while the user is scrolled up (``below``), or the
        log follows the latest output again (``not below``)."""

        def __init__(self, below: bool) -> None:
            super().__init__()
            self.below = below

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """Whether the view stays on the latest output (the user has not scrolled away from it)."""
        return self.is_anchored and not self._anchor_released

    def follow(self) -> None:
        """Jump to the latest output and keep following it."""
        self.anchor()
        self._set_output_below(False)

    def scroll_by_key(self, key: str) -> None:
        """PageUp/PageDown/Home/End pressed in the prompt: move the view (End follows the output again)."""
        if key == "end":
            self.follow()
            return
        self.release_anchor()  # else the next output pulls the view back down
        if self.earlier and (key == "home" or (key == "pageup" and self.scroll_y <= 0)):
            self.run_worker(self.show_earlier(to_top=key == "home"), group="earlier")  # a resumed session's
            return
        if key == "home":
            self.scroll_home(animate=False)
        elif key == "pageup":
            self.scroll_page_up(animate=False)
        else:
            self.scroll_page_down(animate=False)
        if self.scroll_y >= self.max_scroll_y:
            self.follow()  # paged back to the end: follow again

    def _output_added(self) -> None:
        if not self.following:
            self._set_output_below(True)

    def _set_output_below(self, below: bool) -> None:
        if below != self._output_below:
            self._output_below = below
            self.post_message(self.OutputBelow(below))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._output_below and self.following:  # scrolled back down to the end
            self._set_output_below(False)
        if new_value <= 0 < old_value and self.earlier and not self.earlier.busy and not self.following:
            self.run_worker(self.show_earlier(), group="earlier")  # scrolled to the top

    @property
    def blocks(self) -> list[Block]:
        """Every mounted block, nested ones included, in document order."""
        from freeact_tui.tui.widgets.blocks import Block

        return list(self.query(Block))

    # -- mounting --------------------------------------------------------------------------------

    async def add(self, block: Block, parent_corr_id: str | None = None) -> Block:
        """Mount ``block`` at the end, or inside the subagent block it belongs to."""
        from freeact_tui.tui.widgets.blocks import SubagentBlock

        parent = self._subagents.get(parent_corr_id) if parent_corr_id else None
        if isinstance(block, SubagentBlock) and block.corr_id:
            self._subagents[block.corr_id] = block
        if self._pending is not None:  # a resumed session: mounted at once when it is drawn
            insert_in_call_order(parent.adopted if parent is not None else self._pending, block)
            return block
        container: Widget = parent.nested if parent is not None and parent.is_attached else self
        # Parallel calls interleave their events: keep each call's blocks together, in call order.
        anchor = last_block_of(container, block.agent_id, block.corr_id) if block.corr_id else None
        if anchor is not None:
            await container.mount(block, after=anchor)
        else:
            await container.mount(block)
        if container is self:
            await self._prune()
        self._output_added()
        return block

    @property
    def replaying(self) -> bool:
        """Whether the past turns of a resumed session are being drawn."""
        return self._pending is not None

    @asynccontextmanager
    async def drawing(self) -> AsyncIterator[list[Block]]:
        """Collect the blocks the live methods make inside, not mounted (past turns are drawn so)."""
        blocks: list[Block] = []
        self._pending = blocks
        try:
            yield blocks
            await self.finish_streams()
        finally:
            self._pending = None

    @asynccontextmanager
    async def replay(self) -> AsyncIterator[None]:
        """Draw a resumed session's past turns: blocks are made by the live methods inside, then
        mounted at once; only the newest ``budget`` are mounted (the session keeps the others). Turns
        held in ``earlier`` are drawn on demand (``show_earlier``)."""
        async with self.drawing() as blocks:
            yield
        skipped = max(0, len(blocks) - self.budget)
        self.pruned += skipped
        for corr_id, sub in list(self._subagents.items()):
            if sub in blocks[:skipped]:
                del self._subagents[corr_id]
        await self.mount_all(blocks[skipped:])
        await self._prune()
        await self.earlier.show_note(self)
        await self._show_pruned()
        self.follow()

    def screenful(self) -> int:
        """Items enough to fill the log's height and a little more (a block is two rows or more)."""
        return max(self.KEEP_NEWEST, self.app.size.height // 2 + 2)

    async def show_earlier(self, *, to_top: bool = False) -> None:
        """Draw the newest of a resumed session's waiting turns above the others, the view kept in
        place (``to_top``: the view goes to the top, to the earliest turn drawn)."""
        from freeact_tui.tui.widgets.blocks import Block

        if self._active_blocks():  # a turn streams: drawing past turns would end its streams
            return
        first = next((c for c in self.children if isinstance(c, Block)), None)
        await self.earlier.mount_next(self, self.screenful(), None if to_top else first)

    async def _prune(self) -> None:
        from freeact_tui.tui.widgets.blocks import Block

        blocks = [child for child in self.children if isinstance(child, Block)]
        weights = [len(block.walk_children(with_self=True)) for block in blocks]
        count, weight = len(blocks), sum(weights)
        # Prune in batches: removing top blocks reflows everything below, so do it rarely.
        if count <= self.budget + max(1, self.budget // 5) and weight <= self.widget_budget * 6 // 5:
            return
        active = self._active_blocks()
        victims: list[Block] = []
        for index, block in enumerate(blocks):
            over_count = count > self.budget
            over_weight = weight > self.widget_budget and index < len(blocks) - self.KEEP_NEWEST
            if not (over_count or over_weight):
                break
            if block not in active:
                victims.append(block)
                count, weight = count - 1, weight - weights[index]
        if not victims:
            return
        self.pruned += len(victims)
        if self.earlier:  # waiting turns were above them: given up, counted as blocks
            self.pruned += self.earlier.drop()
            await self.earlier.show_note(self)
        for corr_id, sub in list(self._subagents.items()):
            if sub in victims:
                del self._subagents[corr_id]
        await self.remove_children(victims)
        await self._show_pruned()

    async def _show_pruned(self) -> None:
        if not self.pruned:
            return
        note = f"{self.pruned} earlier blocks are not shown (they are kept in the session)"
        existing = self.query("#pruned")
        if existing:
            existing.first(Static).update(note)
        else:
            await self.mount(Static(note, id="pruned", markup=False), before=0)

    def _active_blocks(self) -> set[Widget]:
        return {*self._thoughts.values(), *self._responses.values(), *self._outputs.values()}

    async def clear(self) -> None:
        """Remove every block (the session is untouched)."""
        await self.finish_streams()
        self._subagents.clear()
        self._open_thoughts.clear()
        self.pruned = 0
        self.earlier.drop()
        await self.remove_children()
        self.follow()

    async def welcome(self, text: str) -> Static:
        """Show the first screen's welcome lines (replacing an earlier one)."""
        await self.query("#welcome").remove()
        note = Static(text, id="welcome", markup=False)
        await self.mount(note)
        return note

    # -- live events -------------------------------------------------------------------------------

    async def add_user(self, text: str) -> UserMessageBlock:
        """Show a prompt the user sent."""
        from freeact_tui.tui.widgets.blocks import UserMessageBlock

        await self.finish_streams()
        if self._pending is None:
            self.follow()  # a new prompt always brings the view back to the end
        block = UserMessageBlock(text)
        await self.add(block)
        return block

    async def thought_chunk(self, event: ThoughtsChunk) -> None:
        """Stream a chunk of thinking into the agent's current thought block."""
        from freeact_tui.tui.widgets.blocks import ThoughtBlock

        block = self._thoughts.get(event.agent_id)
        if block is None:
            await self._end_response(event.agent_id)
            block = ThoughtBlock(agent_id=event.agent_id, corr_id=event.corr_id)
            self._thoughts[event.agent_id] = block
            await self.add(block, event.parent_corr_id)
        await block.write(event.content)
        self._output_added()

    async def thought_end(self, event: Thoughts) -> None:
        """Complete the agent's current thought block; it collapses once the agent's response ends."""
        from freeact_tui.tui.widgets.blocks import ThoughtBlock

        block = self._thoughts.pop(event.agent_id, None)
        if block is None:
            if not event.content.strip():
                return
            shown = self._open_thoughts.get(event.agent_id, [])
            if shown and shown[-1].text == event.content:
                return  # text that came after it ended its stream; the part itself ends only now
            block = ThoughtBlock(agent_id=event.agent_id, corr_id=event.corr_id)
            await self.add(block, event.parent_corr_id)
        await block.finish(event.content, collapse=False)
        self._open_thoughts.setdefault(event.agent_id, []).append(block)

    async def response_chunk(self, event: ResponseChunk) -> None:
        """Stream a chunk of text into the agent's current response block."""
        from freeact_tui.tui.widgets.blocks import ResponseBlock

        block = self._responses.get(event.agent_id)
        if block is None:
            await self._end_thought(event.agent_id)
            block = ResponseBlock(agent_id=event.agent_id, corr_id=event.corr_id)
            self._responses[event.agent_id] = block
            await self.add(block, event.parent_corr_id)
        await block.write(event.content)
        self._output_added()

    async def response_end(self, event: Response) -> None:
        """Complete the agent's current response block (and collapse the thoughts above it)."""
        from freeact_tui.tui.widgets.blocks import ResponseBlock

        block = self._responses.pop(event.agent_id, None)
        self._collapse_thoughts(event.agent_id)
        if block is None:
            if not event.content.strip():
                return
            block = ResponseBlock(agent_id=event.agent_id, corr_id=event.corr_id)
            await self.add(block, event.parent_corr_id)
        await block.finish(event.content)

    async def add_action(self, request: ApprovalRequest) -> ActionBlock:
        """Show the action of an approval request (a subagent task gets a block its events nest in)."""
        from freeact_tui.toolcalls import SubagentTask
        from freeact_tui.tui.widgets.blocks import ActionBlock, SubagentBlock

        await self._end_streams_of(request.agent_id)
        if isinstance(request.tool_call, SubagentTask):
            block: ActionBlock = SubagentBlock(request.tool_call, agent_id=request.agent_id, corr_id=request.corr_id)
        else:  # a past turn's diffs start folded: the turn is done, its diffs were read then
            block = ActionBlock(
                request.tool_call,
                agent_id=request.agent_id,
                corr_id=request.corr_id,
                collapse_diff=self.replaying,
            )
        await self.add(block, request.parent_corr_id)
        return block

    async def output_chunk(self, event: CodeExecutionOutputChunk) -> None:
        """Stream kernel output into the output block of the action it belongs to."""
        block = await self._output_block(event.agent_id, event.corr_id, event.parent_corr_id)
        block.write(event.text)
        self._output_added()

    async def output_end(self, event: CodeExecutionOutput) -> None:
        """Complete an output block: full text if nothing streamed, image links, error marker."""
        from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock

        key = (event.agent_id, event.corr_id)
        block = self._outputs.pop(key, None)
        if block is None:
            block = ExecutionOutputBlock(agent_id=event.agent_id, corr_id=event.corr_id)
            await self.add(block, event.parent_corr_id)
        await block.finish(
            event.text,
            images=list(event.images),
            is_error=event.is_error,
            truncated=event.truncated,
            result_path=event.result_path,
        )

    async def _output_block(
        self, agent_id: str, corr_id: str, parent_corr_id: str | None
    ) -> ExecutionOutputBlock:
        from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock

        block = self._outputs.get((agent_id, corr_id))
        if block is None:
            await self._end_streams_of(agent_id)
            block = ExecutionOutputBlock(agent_id=agent_id, corr_id=corr_id)
            self._outputs[(agent_id, corr_id)] = block
            await self.add(block, parent_corr_id)
        return block

    def subagent_status(self, event: SubagentStatus) -> None:
        """Show a subagent's lifecycle state on the block of the task that started it."""
        block = self._subagents.get(event.corr_id)
        if block is not None:
            detail = f": {event.detail}" if event.detail else ""
            block.set_status(
                f"{event.agent_id} {event.state}{detail}", rejected=event.state in ("failed", "cancelled")
            )

    def scroll_to_call(self, corr_id: str) -> None:
        """Scroll to the block of a subagent task (chosen in the side panel)."""
        block = self._subagents.get(corr_id)
        if block is not None and block.is_attached:
            self.release_anchor()  # else the next layout would pull the view back to the bottom
            self.scroll_to_widget(block, top=True, animate=False)

    async def tool_output(self, event: ToolOutput) -> None:
        """Show the result of a tool call (collapsed); a subagent's answer is titled as such."""
        from freeact_tui.tui.widgets.blocks import ToolOutputBlock

        task = self._subagents.get(event.corr_id)
        kind = ""
        if task is not None and task.agent_id == event.agent_id:
            kind = "Subagent error" if event.is_error else "Subagent answer"
        block = ToolOutputBlock(
            event.content,
            is_error=event.is_error,
            kind=kind,
            agent_id=event.agent_id,
            corr_id=event.corr_id,
            image=event.image,
            truncated=event.truncated,
            result_path=event.result_path,
        )
        await self.add(block, event.parent_corr_id)

    async def error(
        self, message: str, *, title: str = "Error", parent_corr_id: str | None = None
    ) -> ErrorBlock:
        """Show an error, clearly marked."""
        from freeact_tui.tui.widgets.blocks import ErrorBlock

        block = ErrorBlock(message, title=title)
        await self.add(block, parent_corr_id)
        return block

    async def notice(self, text: str, *, title: str = "", rows: Sequence[tuple[str, str]] = ()) -> NoticeBlock:
        """Show an informational note of the app (``rows``: drawn as a two-column table, ``text`` copied)."""
        from freeact_tui.tui.widgets.blocks import NoticeBlock

        block = NoticeBlock(text, title=title, rows=rows)
        await self.add(block)
        return block

    async def _end_thought(self, agent_id: str) -> None:
        block = self._thoughts.pop(agent_id, None)
        if block is not None:
            await block.finish(collapse=False)
            self._open_thoughts.setdefault(agent_id, []).append(block)

    def _collapse_thoughts(self, agent_id: str) -> None:
        for block in self._open_thoughts.pop(agent_id, []):
            block.collapse()

    async def _end_response(self, agent_id: str) -> None:
        block = self._responses.pop(agent_id, None)
        if block is not None:
            await block.finish()

    async def _end_streams_of(self, agent_id: str) -> None:
        await self._end_thought(agent_id)
        await self._end_response(agent_id)
        self._collapse_thoughts(agent_id)

    async def finish_streams(self) -> None:
        """Close every open stream (end of a turn, cancellation, error)."""
        for agent_id in list({*self._thoughts, *self._responses, *self._open_thoughts}):
            await self._end_streams_of(agent_id)
        for key, block in list(self._outputs.items()):
            del self._outputs[key]
            if not block.finished:
                await block.finish(None)

