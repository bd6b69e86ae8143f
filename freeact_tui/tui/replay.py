"""Blocks for the past turns of a resumed session, built from the store's one transcript walk.

The outcome of each call (approved and run, rejected, failed, interrupted) comes from the metadata
the agent stores with each tool return, never from the wording of the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from freeact_tui.toolcalls import CODE_TOOL, FileCall, FileEdit, FileWrite, SubagentTask
from freeact_tui.tui.widgets.blocks import (
    ActionBlock,
    Block,
    ExecutionOutputBlock,
    NoticeBlock,
    ResponseBlock,
    SubagentBlock,
    ThoughtBlock,
    ToolOutputBlock,
    UserMessageBlock,
)

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from freeact_tui.store import transcript as tr


def blocks_from_history(messages: Sequence[ModelMessage]) -> list[Block]:
    """Blocks for past messages: prompts, thoughts (collapsed), responses, actions and their results."""
    from freeact_tui.store import transcript as tr  # pydantic-ai: not needed for the first screen

    blocks: list[Block] = []
    tasks: dict[str, SubagentBlock] = {}
    actions: dict[str, ActionBlock] = {}
    for entry in tr.walk(messages):
        match entry:
            case tr.PromptEntry(text=text):
                blocks.append(UserMessageBlock(text))
            case tr.CompactionEntry():
                blocks.append(NoticeBlock(compaction_note(entry), title="Context compacted"))
            case tr.ThoughtEntry(text=text) if text.strip():
                blocks.append(ThoughtBlock(text, collapsed=True))
            case tr.AnswerEntry(text=text) if text.strip():
                blocks.append(ResponseBlock(text))
            case tr.CallEntry(corr_id=corr, call=SubagentTask() as call):
                tasks[corr] = SubagentBlock(call, corr_id=corr)
                blocks.append(tasks[corr])
            case tr.CallEntry(corr_id=corr, call=call):
                actions[corr] = ActionBlock(call, corr_id=corr, collapse_diff=True)
                blocks.append(actions[corr])
            case tr.ResultEntry(retry=True):
                blocks.append(ToolOutputBlock(entry.text, is_error=True, corr_id=entry.corr_id))
            case tr.ResultEntry(tool_name=name) if name == CODE_TOOL:
                block = ExecutionOutputBlock(corr_id=entry.corr_id, text=entry.text or "(no output)")
                block.finished = True
                blocks.append(block)
            case tr.ResultEntry(corr_id=corr) if corr in tasks:
                blocks.append(_subagent_result(tasks[corr], entry))
            case tr.ResultEntry():
                _restore_file_call(actions.get(entry.corr_id), entry)
                blocks.append(ToolOutputBlock(entry.text, is_error=entry.is_error, corr_id=entry.corr_id))
    return blocks


def compaction_note(entry: tr.CompactionEntry) -> str:
    """What the log says where the context was compacted (the turns above stay visible)."""
    return (
        f"The {entry.replaced} messages before this point were summarised for the model "
        f"(~{entry.tokens_before:,} → ~{entry.tokens_after:,} tokens, estimated); they stay above and in "
        f"the session file.\n\nSummary:\n{entry.summary}"
    )


def _subagent_result(task: SubagentBlock, entry: tr.ResultEntry) -> ToolOutputBlock:
    """The answer of a past subagent task; its outcome goes on the task's block."""
    text = entry.text
    if entry.outcome in ("ok", "rejected", "error", "interrupted"):  # stored by the agent with the return
        rejected = entry.outcome == "rejected"
        failed = entry.outcome in ("error", "interrupted")
    else:  # sessions written by freeact (or before outcomes were stored): no outcome to read
        rejected = failed = False
    status = "rejected" if rejected else "failed" if failed else "done"
    task.set_status(status, rejected=rejected or failed)
    kind = "Subagent error" if rejected or failed else "Subagent answer"
    return ToolOutputBlock(text, is_error=rejected or failed, kind=kind, corr_id=task.corr_id)


def _restore_file_call(block: ActionBlock | None, entry: tr.ResultEntry) -> None:
    """What a file call's result keeps (the diff, where the path pointed) goes back on its block."""
    if block is None or not isinstance(block.tool_call, FileCall):
        return
    meta, call = entry.metadata, block.tool_call
    if isinstance(meta.get("resolved"), str) and isinstance(meta.get("outside"), bool):
        call = replace(call, resolved=meta["resolved"], outside=meta["outside"])
    if isinstance(call, FileWrite | FileEdit) and isinstance(meta.get("diff"), str):
        call = replace(call, diff=meta["diff"])
    block.tool_call = call
