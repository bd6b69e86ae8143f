"""Blocks of the conversation log: one widget a module, all built on ``Block``."""

from freeact_tui.tui.widgets.blocks.action import ActionBlock, SubagentBlock
from freeact_tui.tui.widgets.blocks.base import Block
from freeact_tui.tui.widgets.blocks.notice import ErrorBlock, NoticeBlock
from freeact_tui.tui.widgets.blocks.output import AnsiLog, ExecutionOutputBlock, sanitize_ansi
from freeact_tui.tui.widgets.blocks.response import ResponseBlock
from freeact_tui.tui.widgets.blocks.thought import ThoughtBlock
from freeact_tui.tui.widgets.blocks.tool_output import ToolOutputBlock
from freeact_tui.tui.widgets.blocks.user import UserMessageBlock

__all__ = [
    "ActionBlock",
    "AnsiLog",
    "Block",
    "ErrorBlock",
    "ExecutionOutputBlock",
    "NoticeBlock",
    "ResponseBlock",
    "SubagentBlock",
    "ThoughtBlock",
    "ToolOutputBlock",
    "UserMessageBlock",
    "sanitize_ansi",
]
