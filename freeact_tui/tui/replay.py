"""The past turns of a resumed session as the events the live log was drawn from.

A resumed session is drawn by the same router and log methods as a live turn: the store's one
transcript walk becomes ``Thoughts``, ``Response``, decided actions, ``CodeExecutionOutput`` (with
the images it linked), ``ToolOutput``, ``Nudge``, ``SubagentStatus``, ``Compacted``, ``AgentError``
and ``Cancelled`` events (plus the user's prompts and the log's own notices), so the two cannot
drift apart; a turn a failed model request took back is drawn from its error's event record, as the
user saw it. What the live log never showed is left out:
the notes and ``!command`` runs the agent put before a prompt (the runs are shown as the user ran
them), a call the model wrote as broken JSON or without its arguments, and the note that closes a
cancelled request. The outcome of each call and its decisions come from the metadata the agent
stores with each tool return; sessions without it (written by freeact) show the plain results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, get_args

from freeact_tui.actions.code import REJECTED_PART_NOTE
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    Cancelled,
    CodeExecutionOutput,
    Compacted,
    Decision,
    ErrorKind,
    Nudge,
    Phase,
    ProtocolSwitch,
    Response,
    SubagentState,
    SubagentStatus,
    Thoughts,
    ToolOutput,
)
from freeact_tui.store.prompt_record import INTERRUPTED
from freeact_tui.store.step_record import StepRecord
from freeact_tui.text.userwords import split_attachments
from freeact_tui.toolcalls import (
    CODE_TOOL,
    FileCall,
    FileEdit,
    FileWrite,
    SubagentTask,
    ToolCall,
)

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from freeact_tui.store import transcript as tr
    from freeact_tui.store.rewind_file import RewindMark
    from freeact_tui.store.sessions import Session

SubagentLoader = Callable[[str], "Sequence[ModelMessage]"]
"""The stored history of a subagent, by its id (empty if there is none)."""

_ERROR_KINDS: dict[str, ErrorKind] = {k: k for k in get_args(ErrorKind)}

INVALID_JSON_KEY = "INVALID_JSON"
"""What pydantic-ai puts in a call's arguments when the model wrote broken JSON."""


@dataclass(frozen=True)
class UserPrompt:
    """A message the user sent, as they typed it."""

    text: str


@dataclass(frozen=True)
class LogNotice:
    """A notice of the app in the log (a compaction, a rewind)."""

    text: str
    title: str


@dataclass(frozen=True)
class PastApproval(AgentEvent):
    """An action as its approval request showed it, already decided (``None``: never decided)."""

    tool_call: ToolCall
    decision: Decision | None
    skip_permissions: bool = False
    """Allowed by ``--skip-permissions`` when it ran (not by this run's flag)."""


ReplayItem = AgentEvent | UserPrompt | LogNotice


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


def replay_history(
    messages: Sequence[ModelMessage],
    load_subagent: SubagentLoader | None = None,
    *,
    rewinds: Sequence[RewindMark] = (),
) -> list[ReplayItem]:
    """The items the live log showed for an agent's stored history, in order; ``load_subagent`` fills
    in the subagents' own turns, ``rewinds`` are marked where they happened."""
    return list(_Replayer("main", None, load_subagent).run(messages, rewinds))


def without_attachments(text: str) -> str:
    """A prompt as the user typed it: the files its ``@path`` mentions attached after it taken off."""
    return split_attachments(text)[0]


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


class _Replayer:
    def __init__(self, agent_id: str, parent: str | None, load_subagent: SubagentLoader | None) -> None:
        self.ids: dict[str, Any] = {"agent_id": agent_id, "parent_corr_id": parent}
        self.main = parent is None
        self.load_subagent = load_subagent
        self.calls: dict[str, tr.CallEntry] = {}
        self.shell_runs = 0
        self.interrupted = False

    def run(self, messages: Sequence[ModelMessage], rewinds: Sequence[RewindMark] = ()) -> Iterator[ReplayItem]:
        from freeact_tui.store import transcript as tr  # pydantic-ai: not needed for the first screen

        for entry in tr.walk(messages, rewinds):
            if self.interrupted and not isinstance(entry, tr.ResultEntry):
                yield from self._cancelled(Phase.EXECUTION)
            match entry:
                case tr.PromptEntry() if self.main:  # a subagent's prompt is its task
                    yield from self._prompt(entry)
                case tr.CutEntry():
                    yield from self._cancelled(Phase.MODEL)
                case tr.CallEntry(corr_id=corr):
                    self.calls[corr] = entry
                case tr.ResultEntry():
                    yield from self._result(entry)
                case _:
                    yield from self._shown(entry)
        if self.interrupted:
            yield from self._cancelled(Phase.EXECUTION)
        for call in self.calls.values():  # never answered (a crash): shown undecided
            if not _hidden(call, None):
                yield PastApproval(call.call, None, **self._of(call.corr_id))

    def _shown(self, entry: tr.Entry) -> Iterator[ReplayItem]:
        """An entry shown as one item, as it was live, with no state of the replay."""
        from freeact_tui.store import transcript as tr

        match entry:
            case tr.CompactionEntry():
                yield _compaction(entry, self.ids)
            case tr.ErrorEntry(kind=kind, message=message, corr_id=corr):
                yield AgentError(message, _ERROR_KINDS.get(kind, "internal"), **self._of(corr))
            case tr.NoticeEntry(title=title, text=text):
                yield LogNotice(text, title)
            case tr.RewindEntry(mark=mark):
                yield LogNotice(mark.describe(), "Rewound")
            case tr.NudgeEntry(reason=reason, text=told):
                yield Nudge(reason, told, **self.ids)
            case tr.ThoughtEntry(text=text):
                yield Thoughts(text, **self.ids)
            case tr.AnswerEntry(text=text):
                yield Response(text, **self.ids)
            case tr.SwitchEntry(reason=reason):
                yield ProtocolSwitch("text", f"Switched to text actions: {reason}.", **self.ids)

    def _of(self, corr: str) -> dict[str, Any]:
        return {**self.ids, "corr_id": corr}

    def _cancelled(self, phase: Phase) -> Iterator[ReplayItem]:
        self.interrupted = False
        if self.main:  # a subagent's cancellation shows on its task
            yield Cancelled(phase, **self.ids)

    def _prompt(self, entry: tr.PromptEntry) -> Iterator[ReplayItem]:
        shown = entry.shown
        for run in shown.shell:  # the user's own !command before it, as it was shown then
            self.shell_runs += 1
            yield UserPrompt(f"!{run.command}")
            corr = f"user-shell-past-{self.shell_runs}"  # never an id of a run after the resume
            yield CodeExecutionOutput(run.output, is_error=run.failed, agent_id="main", corr_id=corr)
        if shown.typed.strip() or not shown.shell:
            yield UserPrompt(without_attachments(shown.typed))

    def _result(self, entry: tr.ResultEntry) -> Iterator[ReplayItem]:
        corr = entry.corr_id
        call = self.calls.pop(corr, None)
        ids = self._of(corr)
        self.interrupted = self.interrupted or entry.outcome == "interrupted"
        if entry.retry:
            yield ToolOutput(entry.text, is_error=True, **ids)
            return
        if call is not None and _hidden(call, entry):  # live, only its error was shown (never asked)
            yield ToolOutput(entry.text, is_error=True, **ids)
            return
        records = entry.approvals
        own = records[0] if records and records[0].call is None else None
        if call is not None:
            decision = own.decision if own is not None else Decision(not entry.rejected)
            yield PastApproval(
                _restored(call.call, entry), decision, own is not None and own.skip_permissions, **ids
            )
        for record in records:
            if record.call is not None:
                yield PastApproval(record.call, record.decision, record.skip_permissions, **ids)
        if own is not None and not own.decision.approved:
            return  # refused before it ran: live, nothing more was shown
        if call is not None and isinstance(call.call, SubagentTask):
            yield from self._subagent(call.call, entry)
        elif entry.tool_name == CODE_TOOL:
            whole = entry.whole_output()
            text = entry.kernel_output if whole is None else whole
            if any(not r.decision.approved for r in records if r.call is not None):
                text = _kernel_output(text)  # live, the note to the model was not shown
            if entry.outcome == "interrupted":  # live: what it printed, then the cancel's own notice
                text = text.removesuffix(INTERRUPTED).rstrip("\n")
                if not text:
                    return
            truncated, path = entry.truncated
            yield CodeExecutionOutput(
                text,
                images=entry.images,
                is_error=entry.outcome == "error",
                truncated=truncated,
                result_path=path,
                **ids,
            )
        else:
            yield ToolOutput(entry.text, is_error=entry.is_error, **ids)

    def _subagent(self, task: SubagentTask, entry: tr.ResultEntry) -> Iterator[ReplayItem]:
        """A past subagent task: the subagent's own turn nested in the task, its state, its answer."""
        corr = entry.corr_id
        if entry.outcome in ("ok", "rejected", "error", "interrupted"):  # stored by the agent with the return
            rejected = entry.outcome == "rejected"
            failed = entry.outcome in ("error", "interrupted")
        else:  # sessions written by freeact (or before outcomes were stored): no outcome to read
            rejected = failed = False
        sub_id = entry.record.subagent_id
        if sub_id:
            if self.load_subagent is not None:
                yield from _Replayer(sub_id, corr, None).run(self.load_subagent(sub_id))
            state: SubagentState = (
                "cancelled" if entry.outcome == "interrupted" else "failed" if rejected or failed else "done"
            )
            detail = "an action was rejected" if rejected else ""
            yield SubagentStatus(state, task.prompt, detail, agent_id=sub_id, corr_id=corr)
        yield ToolOutput(entry.text, is_error=rejected or failed, **self._of(corr))


def _compaction(entry: tr.CompactionEntry, ids: dict[str, Any]) -> ReplayItem:
    """A compaction as the live log showed it; a record written before its timing was kept shows without it."""
    timing = entry.timing
    if timing is None:
        return LogNotice(compaction_note(entry), "Context compacted")
    return Compacted(
        "auto" if timing.reason == "auto" else "manual",
        entry.replaced,
        0,  # ``kept``: not shown
        entry.tokens_before,
        entry.tokens_after,
        timing.seconds,
        entry.summary,
        timing.tokens_in,
        timing.tokens_out,
        **ids,
    )


def _hidden(call: tr.CallEntry, result: tr.ResultEntry | None) -> bool:
    """Whether live showed no block for a call: it was never asked (its arguments were broken, or a
    guard refused it), so no approval request was made."""
    if INVALID_JSON_KEY in call.args:
        return True
    record = result.record if result is not None else StepRecord()
    return record.malformed or bool(record.guarded)


def _restored(call: ToolCall, entry: tr.ResultEntry) -> ToolCall:
    """What a file call's result keeps (the diff, where the path pointed) goes back on its call."""
    if not isinstance(call, FileCall):
        return call
    record = entry.record
    if record.resolved is not None and record.outside is not None:
        call = replace(call, resolved=record.resolved, outside=record.outside)
    if isinstance(call, FileWrite | FileEdit) and record.diff is not None:
        call = replace(call, diff=record.diff)
    return call


def _kernel_output(text: str) -> str:
    """A code action's result without the note that tells the model a shell part was rejected."""
    at = text.rfind(REJECTED_PART_NOTE)
    return text[:at].rstrip() if at >= 0 else text


__all__ = [
    "LogNotice",
    "PastApproval",
    "ReplayItem",
    "SubagentLoader",
    "UserPrompt",
    "compaction_note",
    "nudge_note",
    "replay_history",
    "subagent_loader",
]
