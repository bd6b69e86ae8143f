"""Blocks for the past turns of a resumed session, built from the store's one transcript walk.

A resumed session looks as it did live: each action's decision (approved, rejected, by which rule),
its shell parts and MCP calls with theirs, each result under its own call (parallel calls too), and
a subagent's own thoughts, actions and answers inside its task. The outcome of each call and its
decisions come from the metadata the agent stores with each tool return, never from the wording of
the result; sessions without it (written by freeact, or before it was stored) show the plain results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from freeact_tui.actions.code import REJECTED_PART_NOTE
from freeact_tui.events import SubagentState, SubagentStatus
from freeact_tui.toolcalls import CODE_TOOL, FileCall, FileEdit, FileWrite, SubagentTask
from freeact_tui.tui.decisions import decision_status
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
    from freeact_tui.store.rewind_file import RewindMark
    from freeact_tui.store.sessions import Session

SubagentLoader = Callable[[str], "Sequence[ModelMessage]"]
"""The stored history of a subagent, by its id (empty if there is none)."""


def subagent_loader(agent: _HasSession) -> SubagentLoader | None:
    """Reads the subagents' histories from the agent's session (damaged or missing files: what loads)."""
    session = agent.session
    if session is None:
        return None

    def load(sub_id: str) -> Sequence[ModelMessage]:
        from freeact_tui.store.sessions import read_history

        try:
            return read_history(session.history_path(sub_id)).messages
        except (ValueError, OSError):  # an id that names no file of ours, an unreadable file
            return []

    return load


class _HasSession(Protocol):
    @property
    def session(self) -> Session | None: ...


@dataclass
class Replay:
    """The blocks of a stored history and the subagents it started (for the side panel)."""

    blocks: list[Block] = field(default_factory=list)
    subagents: list[SubagentStatus] = field(default_factory=list)


def blocks_from_history(
    messages: Sequence[ModelMessage], load_subagent: SubagentLoader | None = None
) -> list[Block]:
    """Blocks for past messages: prompts, thoughts (collapsed), responses, actions and their results."""
    return replay_history(messages, load_subagent).blocks


def replay_history(
    messages: Sequence[ModelMessage],
    load_subagent: SubagentLoader | None = None,
    *,
    agent_id: str = "main",
    rewinds: Sequence[RewindMark] = (),
) -> Replay:
    """Blocks and subagents of an agent's stored history; ``load_subagent`` fills in the subagents' own,
    ``rewinds`` are marked where they happened."""
    return _Replayer(agent_id, load_subagent).run(messages, rewinds)


class _Replayer:
    def __init__(self, agent_id: str, load_subagent: SubagentLoader | None) -> None:
        self.agent_id = agent_id
        self.load_subagent = load_subagent
        self.out = Replay()
        self.calls: dict[str, ActionBlock] = {}

    def run(self, messages: Sequence[ModelMessage], rewinds: Sequence[RewindMark] = ()) -> Replay:
        from freeact_tui.store import transcript as tr  # pydantic-ai: not needed for the first screen

        ids = {"agent_id": self.agent_id}
        for entry in tr.walk(messages, rewinds):
            match entry:
                case tr.PromptEntry(text=text) if self.agent_id == "main":  # a subagent's is its task
                    self.out.blocks.append(UserMessageBlock(text))
                case tr.CompactionEntry():
                    self.out.blocks.append(NoticeBlock(compaction_note(entry), title="Context compacted"))
                case tr.RewindEntry(mark=mark):
                    self.out.blocks.append(NoticeBlock(mark.describe(), title="Rewound"))
                case tr.NudgeEntry(reason=reason, text=told):
                    self.out.blocks.append(NoticeBlock(nudge_note(reason, told), title="Nudged the model"))
                case tr.ThoughtEntry(text=text) if text.strip():
                    self.out.blocks.append(ThoughtBlock(text, collapsed=True, **ids))
                case tr.AnswerEntry(text=text) if text.strip():
                    self.out.blocks.append(ResponseBlock(text, **ids))
                case tr.CallEntry(corr_id=corr, call=call):
                    if isinstance(call, SubagentTask):
                        self.calls[corr] = SubagentBlock(call, corr_id=corr, **ids)
                    else:
                        self.calls[corr] = ActionBlock(call, corr_id=corr, collapse_diff=True, **ids)
                    self.out.blocks.append(self.calls[corr])
                case tr.ResultEntry(retry=True):
                    self._after(
                        entry.corr_id,
                        [
                            ToolOutputBlock(
                                entry.text, is_error=True, agent_id=self.agent_id, corr_id=entry.corr_id
                            )
                        ],
                    )
                case tr.ResultEntry():
                    self._result(entry)
        return self.out

    def _after(self, corr: str, new: list[Block]) -> None:
        """Insert ``new`` after the last block of call ``corr`` (at the end if it has none)."""
        blocks = self.out.blocks
        at = next((k for k in range(len(blocks) - 1, -1, -1) if corr and blocks[k].corr_id == corr), None)
        if at is None:
            blocks.extend(new)
        else:
            blocks[at + 1 : at + 1] = new

    def _result(self, entry: tr.ResultEntry) -> None:
        corr, agent = entry.corr_id, self.agent_id
        block = self.calls.get(corr)
        records = entry.approvals
        own = records[0] if records and records[0].call is None else None
        new: list[Block] = []
        if block is not None and own is not None:
            status, rejected = decision_status(own.decision, skip_permissions=own.skip_permissions)
            block.set_status(status, rejected=rejected)
        for record in records:
            if record.call is None:
                continue
            part = ActionBlock(record.call, agent_id=agent, corr_id=corr)
            status, rejected = decision_status(record.decision, skip_permissions=record.skip_permissions)
            part.set_status(status, rejected=rejected)
            new.append(part)
        _restore_file_call(block, entry)
        if own is not None and not own.decision.approved:
            self._after(corr, new)  # refused before it ran: live, nothing more was shown
            return
        if isinstance(block, SubagentBlock):
            new.append(self._subagent_result(block, entry))
        elif entry.tool_name == CODE_TOOL:
            text = entry.text
            if any(not r.decision.approved for r in records if r.call is not None):
                text = _kernel_output(text)  # live, the note to the model was not shown
            output = ExecutionOutputBlock(text=text or "(no output)", agent_id=agent, corr_id=corr)
            output.finished = True
            new.append(output)
        else:
            new.append(ToolOutputBlock(entry.text, is_error=entry.is_error, agent_id=agent, corr_id=corr))
        self._after(corr, new)

    def _subagent_result(self, task: SubagentBlock, entry: tr.ResultEntry) -> ToolOutputBlock:
        """The answer of a past subagent task, with the subagent's own turn nested in the task's block."""
        text = entry.text
        if entry.outcome in ("ok", "rejected", "error", "interrupted"):  # stored by the agent with the return
            rejected = entry.outcome == "rejected"
            failed = entry.outcome in ("error", "interrupted")
        else:  # sessions written by freeact (or before outcomes were stored): no outcome to read
            rejected = failed = False
        sub_id = entry.metadata.get("subagent_id")
        if isinstance(sub_id, str) and sub_id:
            state: SubagentState = (
                "cancelled" if entry.outcome == "interrupted" else "failed" if rejected or failed else "done"
            )
            detail = "an action was rejected" if rejected else ""
            assert isinstance(task.tool_call, SubagentTask)
            self.out.subagents.append(
                SubagentStatus(state, task.tool_call.prompt, detail, agent_id=sub_id, corr_id=task.corr_id)
            )
            task.set_status(f"{sub_id} {state}{f': {detail}' if detail else ''}", rejected=state != "done")
            if self.load_subagent is not None:
                task.adopt(replay_history(self.load_subagent(sub_id), agent_id=sub_id).blocks)
        else:
            status = "rejected" if rejected else "failed" if failed else "done"
            task.set_status(status, rejected=rejected or failed)
        kind = "Subagent error" if rejected or failed else "Subagent answer"
        return ToolOutputBlock(text, is_error=rejected or failed, kind=kind, corr_id=task.corr_id)


def nudge_note(reason: str, told: str) -> str:
    """The log's notice of a nudge (live and replayed): why, and what the model was told, word for word."""
    return f"{reason.capitalize()}. Told the model: “{told}”"


def compaction_note(entry: tr.CompactionEntry) -> str:
    """What the log says where the context was compacted (the turns above stay visible)."""
    return (
        f"The {entry.replaced} messages before this point were summarised for the model "
        f"(~{entry.tokens_before:,} → ~{entry.tokens_after:,} tokens, estimated); they stay above and in "
        f"the session file.\n\nSummary:\n{entry.summary}"
    )


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


def _kernel_output(text: str) -> str:
    """A code action's result without the note that tells the model a shell part was rejected."""
    at = text.rfind(REJECTED_PART_NOTE)
    return text[:at].rstrip() if at >= 0 else text


__all__ = [
    "Replay",
    "SubagentLoader",
    "blocks_from_history",
    "compaction_note",
    "nudge_note",
    "replay_history",
    "subagent_loader",
]
