"""Blocks in call order: parallel calls interleave their events, each call's blocks are kept together."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widget import Widget

if TYPE_CHECKING:
    from freeact_tui.tui.widgets.blocks import Block


def insert_in_call_order(blocks: list[Block], block: Block) -> None:
    """Add ``block`` to a list of blocks not mounted yet, after the others of its call (as ``add`` mounts)."""
    at = None
    if block.corr_id:
        at = next(
            (k for k in range(len(blocks) - 1, -1, -1) if (blocks[k].agent_id, blocks[k].corr_id) == (block.agent_id, block.corr_id)),
            None,
        )
    if at is None or at == len(blocks) - 1:
        blocks.append(block)
    else:
        blocks.insert(at + 1, block)


def last_block_of(container: Widget, agent_id: str, corr_id: str) -> Widget | None:
    """The last direct child of ``container`` that belongs to the same call, unless it is the last child."""
    from freeact_tui.tui.widgets.blocks import Block

    children = list(container.children)
    for child in reversed(children):
        if isinstance(child, Block) and child.agent_id == agent_id and child.corr_id == corr_id:
            return child if child is not children[-1] else None
    return None


__all__ = ["insert_in_call_order", "last_block_of"]
