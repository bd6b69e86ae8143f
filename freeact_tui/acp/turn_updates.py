"""Agent events → ACP ``session/update`` payloads, for one turn (one translator per ``session/prompt``).

Model text and thinking of the main agent stream as ``agent_message_chunk``/``agent_thought_chunk``.
Every action is a ``tool_call`` the first time its ``ApprovalRequest`` shows: the model's call (code
action, file tool, JSON/MCP tool, subagent task) under its own id, and each part asked inside it (a
shell command, a ``%%bash`` script, an MCP call from code) under ``<call id>/<n>``; a subagent's calls
under ``<subagent id>:<call id>``. ``tool_call_update``s carry the decision, the output as it streams,
and the end (``completed`` or ``failed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from acp import start_tool_call, update_agent_message_text, update_agent_thought_text, update_tool_call
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
)

from freeact_tui.acp.toolcall_view import (
    OUTPUT_LIMIT,
    CallView,
    ToolContent,
    describe,
    note_content,
    output_content,
)
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Decision,
    Nudge,
    Response,
    ResponseChunk,
    SubagentStatus,
    Thoughts,
    ThoughtsChunk,
    ToolOutput,
)
from freeact_tui.text.safe import visible
from freeact_tui.toolcalls import ProgrammaticToolCall, ShellAction, ShellScript

Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress
_PART_TYPES = (ShellAction, ShellScript, ProgrammaticToolCall)


def decided_status(decision: Decision) -> ToolCallStatus:
    return "in_progress" if decision.approved else "failed"


def decision_note(decision: Decision) -> str:
    """What a rejection reads as on the tool call (nothing for an approval)."""
    if decision.approved:
        return ""
    by = "a rule" if decision.by_rule else "the user"
    rule = (
        f" (and saved the deny rule `{decision.pattern}`)" if decision.remember and decision.pattern else ""
    )
    why = f": {decision.reason}" if decision.reason else ""
    return f"Rejected by {by}{rule}{why}."


@dataclass
class _Call:
    id: str
    view: CallView
    parts: list[str] = field(default_factory=list)
    output: str = ""
    done: bool = False


def nudge_note(reason: str) -> str:
    """What ends a reply the app did not take as the answer (a ``Nudge``), so that the next reply does not
    read as its continuation ("The answer is 91234.You did not run any code…")."""
    return f"\n\n---\n_(Not the answer — {visible(reason)}; the model was asked again.)_\n\n"


ACP_EVENTS: dict[str, str] = {
    "ThoughtsChunk": "agent_thought_chunk (the main agent's)",
    "Thoughts": "agent_thought_chunk, unless streamed",
    "ResponseChunk": "agent_message_chunk (the main agent's)",
    "Response": "agent_message_chunk, unless streamed",
    "Nudge": "agent_message_chunk: a separator and a note that the reply before it is not the answer",
    "ApprovalRequest": "tool_call, and session/request_permission when undecided",
    "CodeExecutionOutputChunk": "tool_call_update (in progress)",
    "CodeExecutionOutput": "tool_call_update (completed or failed)",
    "ToolOutput": "tool_call_update (completed or failed)",
    "SubagentStatus": "tool_call_update of the subagent_task call",
    "Cancelled": "open tool calls closed; stopReason cancelled",
    "AgentError": "agent_message_chunk with the error; its kind is the stopReason",
    "ReplyStopped": "the stopReason (max_tokens, refusal) when it is the turn's last reply",
    "UsageUpdate": "usage_update (the main agent's)",
    "ProtocolSwitch": "not sent: how the agent acts, shown in the TUI's log only",
    "CheckpointNotice": "not sent: the TUI's undo notice (editors keep their own history)",
    "ModelRetry": "not sent: the request is retried, and its reply is what the editor sees",
    "OutputClaim": "not sent: a flag on a reply the editor shows as text",
    "ContextUpdate": "not sent: the TUI's context gauge",
    "Compacting": "not sent: a compaction between requests (the /compact command reports its own)",
    "Compacted": "not sent: see Compacting",
    "KernelStatus": "not sent: the TUI's kernel indicator",
}
"""How each agent event reaches an ACP client (by event class name): the mapping is total over
``freeact_tui/events.py`` (``tests/fast/acp/test_event_mappings.py``)."""


class TurnUpdates:
    """Translates one turn's events; ``see(event)`` returns the updates to send for it.

    Args:
        working_dir: the session's working directory (relative file paths are made absolute with it).
        known_texts: files as the editor has them (by absolute path): a diff's old text is taken from here.
    """

    def __init__(self, working_dir: Path, known_texts: Mapping[str, str] | None = None) -> None:
        self.working_dir = working_dir
        self.known_texts: Mapping[str, str] = known_texts if known_texts is not None else {}
        self.calls: dict[str, _Call] = {}  # by tool call id (parts included)
        self._by_key: dict[tuple[str, str], _Call] = {}  # (agent id, corr id) → the model's call
        self._requests: dict[int, str] = {}  # id(ApprovalRequest) → tool call id
        self._streamed_text = False
        self._streamed_thoughts = False
        self.cancelled = False
        self.error_kinds: list[str] = []
        """The kinds of the main agent's errors in this turn, in order (the stop reason reads them)."""

    @staticmethod
    def _key_id(agent_id: str, corr_id: str) -> str:
        return corr_id if agent_id == "main" else f"{agent_id}:{corr_id}"

    def tool_call_id(self, request: ApprovalRequest) -> str:
        """The tool call id a request was shown under (``see`` must have seen it)."""
        return self._requests[id(request)]

    def see(self, event: AgentEvent) -> list[Update]:
        main = event.agent_id == "main"
        if main and isinstance(event, ThoughtsChunk | Thoughts | ResponseChunk | Response | Nudge):
            return self._words(event)
        match event:
            case ApprovalRequest():
                return self._request(event)
            case CodeExecutionOutputChunk(text=text):
                return self._chunk(event.agent_id, event.corr_id, text)
            case CodeExecutionOutput(text=text, images=images, is_error=is_error):
                return self._end(event.agent_id, event.corr_id, output_content(text, images), is_error)
            case ToolOutput(content=text, is_error=is_error, image=image):
                return self._end(event.agent_id, event.corr_id, output_content(text, image=image), is_error)
            case SubagentStatus(state=state, detail=detail):
                return self._subagent(event.corr_id, state, detail)
            case Cancelled() if main:
                self.cancelled = True
                return self.close_open("Cancelled.")
            case AgentError(message=message, kind=kind) if main:
                self.error_kinds.append(kind)
                return [update_agent_message_text(f"\n\n**Error:** {message}\n")]
        return []

    def _words(self, event: ThoughtsChunk | Thoughts | ResponseChunk | Response | Nudge) -> list[Update]:
        """The main agent's thoughts and replies, streamed or whole (a whole one is sent when nothing of it was)."""
        match event:
            case ThoughtsChunk(content=text):
                self._streamed_thoughts = self._streamed_thoughts or bool(text)
                return [update_agent_thought_text(visible(text))] if text else []
            case Thoughts(content=text):
                streamed, self._streamed_thoughts = self._streamed_thoughts, False
                return [] if streamed or not text else [update_agent_thought_text(visible(text))]
            case ResponseChunk(content=text):
                self._streamed_text = self._streamed_text or bool(text)
                return [update_agent_message_text(visible(text))] if text else []
            case Response(content=text):
                streamed, self._streamed_text = self._streamed_text, False
                return [] if streamed or not text else [update_agent_message_text(visible(text))]
            case Nudge(reason=reason):  # the reply just sent is not the answer: say so before the next one
                return [update_agent_message_text(nudge_note(reason))]

    def _request(self, request: ApprovalRequest) -> list[Update]:
        key = (request.agent_id, request.corr_id)
        parent = self._by_key.get(key)
        call = request.tool_call
        if parent is not None and isinstance(call, _PART_TYPES):
            tool_call_id = f"{parent.id}/{len(parent.parts) + 1}"
            parent.parts.append(tool_call_id)
        else:
            tool_call_id = self._key_id(*key)
            if tool_call_id in self.calls:  # the same call asked again (a retry): a new id
                tool_call_id = f"{tool_call_id}#{len(self.calls)}"
        view = describe(call, request.tool_args, self.working_dir, self.known_texts)
        entry = _Call(tool_call_id, view)
        self.calls[tool_call_id] = entry
        if parent is None:
            self._by_key[key] = entry
        self._requests[id(request)] = tool_call_id
        decision = request.decision
        status: ToolCallStatus = "pending" if decision is None else decided_status(decision)
        content = list(view.content)
        if decision is not None and not decision.approved:
            content += note_content(decision_note(decision))
            entry.done = True
        return [
            start_tool_call(
                tool_call_id, view.title, kind=view.kind, status=status, content=content,
                locations=view.locations or None, raw_input=view.raw_input,
            )
        ]  # fmt: skip

    def decided(self, request: ApprovalRequest, decision: Decision) -> list[Update]:
        """The update for a decision given over ACP (after ``request_permission``)."""
        entry = self.calls[self.tool_call_id(request)]
        if decision.approved:
            return [update_tool_call(entry.id, status="in_progress")]
        entry.done = True
        content = [*entry.view.content, *note_content(decision_note(decision))]
        return [update_tool_call(entry.id, status="failed", content=content)]

    def _chunk(self, agent_id: str, corr_id: str, text: str) -> list[Update]:
        entry = self._by_key.get((agent_id, corr_id))
        if entry is None or not text:
            return []
        entry.output = (entry.output + text)[-(OUTPUT_LIMIT + 1) :]  # only the tail is shown: per chunk, a bound
        content: list[ToolContent] = [*entry.view.content, *output_content(entry.output)]
        return [update_tool_call(entry.id, status="in_progress", content=content)]

    def _end(self, agent_id: str, corr_id: str, output: list[ToolContent], is_error: bool) -> list[Update]:
        entry = self._by_key.get((agent_id, corr_id))
        if entry is None:
            return self._unasked_end(agent_id, corr_id, output, is_error)
        status: ToolCallStatus = "failed" if is_error else "completed"
        updates: list[Update] = []
        for part_id in entry.parts:
            part = self.calls[part_id]
            if not part.done:
                part.done = True
                updates.append(update_tool_call(part_id, status=status))
        entry.done = True
        updates.append(update_tool_call(entry.id, status=status, content=[*entry.view.content, *output]))
        return updates

    def _unasked_end(
        self, agent_id: str, corr_id: str, output: list[ToolContent], is_error: bool
    ) -> list[Update]:
        """A call that ended without ever being asked about (it failed before it could run: bad
        arguments, a path that cannot be used): a failed call still reaches the client, as a tool call
        of its own that starts failed; a result of a call never shown is nothing to show."""
        if not is_error:
            return []
        tool_call_id = self._key_id(agent_id, corr_id or f"call-{len(self.calls) + 1}")
        if tool_call_id in self.calls:
            tool_call_id = f"{tool_call_id}#{len(self.calls)}"
        entry = _Call(
            tool_call_id, CallView("Tool call (failed before it ran)", "other", [], [], {}), done=True
        )
        self.calls[tool_call_id] = entry
        self._by_key[(agent_id, corr_id)] = entry
        return [
            start_tool_call(tool_call_id, entry.view.title, kind="other", status="failed", content=output)
        ]

    def _subagent(self, corr_id: str, state: str, detail: str) -> list[Update]:
        entry = self._by_key.get(("main", corr_id))
        if entry is None or entry.done:
            return []
        if state in ("failed", "cancelled"):
            entry.done = True
            note = note_content(f"Subagent {state}{': ' + detail if detail else ''}.")
            return [update_tool_call(entry.id, status="failed", content=[*entry.view.content, *note])]
        return [update_tool_call(entry.id, status="in_progress")]

    def close_open(self, note: str) -> list[Update]:
        """Fail every call still open (the turn was cancelled or ended without their output)."""
        updates: list[Update] = []
        for entry in self.open_calls():
            entry.done = True
            content = [*entry.view.content, *output_content(entry.output), *note_content(note)]
            updates.append(update_tool_call(entry.id, status="failed", content=content))
        return updates

    def open_calls(self) -> Iterable[_Call]:
        return [c for c in self.calls.values() if not c.done]


__all__ = ["TurnUpdates", "Update", "decided_status", "decision_note"]
