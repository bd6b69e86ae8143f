"""Agent events → ACP ``session/update`` payloads, for one turn (one translator per ``session/prompt``).

Model text and thinking of the main agent stream as ``agent_message_chunk``/``agent_thought_chunk``.
Every action is a ``tool_call`` the first time its ``ApprovalRequest`` shows: the model's call (code
action, file tool, JSON/MCP tool, subagent task) under its own id, and each part asked inside it (a
shell command, a ``%%bash`` script, an MCP call from code) under ``<call id>/<n>``; a subagent's calls
under ``<subagent id>:<call id>``. ``tool_call_update``s carry the decision, the output as it streams,
and the end (``completed`` or ``failed``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    CheckpointNotice,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Compacted,
    Compacting,
    ContextUpdate,
    Decision,
    KernelStatus,
    ModelRetry,
    ModelWaiting,
    Nudge,
    OutputClaim,
    ProjectFileRefused,
    ProtocolSwitch,
    ReplyStopped,
    Response,
    ResponseChunk,
    SubagentStatus,
    Thoughts,
    ThoughtsChunk,
    ToolOutput,
    UsageUpdate,
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


def info_note(text: str) -> str:
    """An info line of the app's own in the agent's message (a project file not used): set apart from
    the model's words before and after it."""
    return f"\n\n_(freeact-tui: {visible(text, multiline=False)})_\n\n"


def nudge_note(reason: str) -> str:
    """What ends a reply the app did not take as the answer (a ``Nudge``), so that the next reply does not
    read as its continuation ("The answer is 91234.You did not run any code…")."""
    return f"\n\n---\n_(Not the answer — {visible(reason)}; the model was asked again.)_\n\n"


class TurnUpdates:
    """Translates one turn's events; ``see(event)`` returns the updates to send for it.

    Args:
        working_dir: the session's working directory (relative file paths are made absolute with it).
        known_texts: files as the editor has them (by absolute path): a diff's old text is taken from here.
    """

    def __init__(
        self, working_dir: Path, known_texts: Mapping[str, str] | None = None, used_ids: set[str] | None = None
    ) -> None:
        self.working_dir = working_dir
        self.used_ids: set[str] = used_ids if used_ids is not None else set()
        """Every ``toolCallId`` the session has sent (shared by its turns): no id starts twice."""
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

    def _mint(self, wanted: str) -> str:
        """A ``toolCallId`` no tool call of the session has had: ``wanted``, or it with a number."""
        chosen, n = wanted, 1
        while chosen in self.used_ids or chosen in self.calls:
            n += 1
            chosen = f"{wanted}#{n}"
        self.used_ids.add(chosen)
        return chosen

    def tool_call_id(self, request: ApprovalRequest) -> str:
        """The tool call id a request was shown under (``see`` must have seen it)."""
        return self._requests[id(request)]

    def see(self, event: AgentEvent) -> list[Update]:
        """The updates for ``event``: its row of ``EVENT_UPDATES`` (a kind in ``NOT_SHOWN`` gives none)."""
        handler = EVENT_UPDATES.get(type(event))
        return handler(self, event) if handler is not None else []

    def _thoughts_chunk(self, event: ThoughtsChunk) -> list[Update]:
        if event.agent_id != "main" or not event.content:
            return []
        self._streamed_thoughts = True
        return [update_agent_thought_text(visible(event.content))]

    def _thoughts(self, event: Thoughts) -> list[Update]:
        if event.agent_id != "main":
            return []
        streamed, self._streamed_thoughts = self._streamed_thoughts, False
        return [] if streamed or not event.content else [update_agent_thought_text(visible(event.content))]

    def _response_chunk(self, event: ResponseChunk) -> list[Update]:
        if event.agent_id != "main" or not event.content:
            return []
        self._streamed_text = True
        return [update_agent_message_text(visible(event.content))]

    def _response(self, event: Response) -> list[Update]:
        if event.agent_id != "main":
            return []
        streamed, self._streamed_text = self._streamed_text, False
        return [] if streamed or not event.content else [update_agent_message_text(visible(event.content))]

    def _nudge(self, event: Nudge) -> list[Update]:
        """The reply just sent is not the answer: say so before the next one (the main agent's)."""
        if event.agent_id != "main":
            return []
        return [update_agent_message_text(nudge_note(event.reason))]

    def _code_output(self, event: CodeExecutionOutput) -> list[Update]:
        return self._end(
            event.agent_id, event.corr_id, output_content(event.text, event.images), event.is_error
        )

    def _tool_output(self, event: ToolOutput) -> list[Update]:
        content = output_content(event.content, image=event.image)
        return self._end(event.agent_id, event.corr_id, content, event.is_error)

    def _output_chunk(self, event: CodeExecutionOutputChunk) -> list[Update]:
        return self._chunk(event.agent_id, event.corr_id, event.text)

    def _subagent_status(self, event: SubagentStatus) -> list[Update]:
        return self._subagent(event.corr_id, event.state, event.detail)

    def _cancelled(self, event: Cancelled) -> list[Update]:
        if event.agent_id != "main":
            return []
        self.cancelled = True
        return self.close_open("Cancelled.")

    def _refused(self, event: ProjectFileRefused) -> list[Update]:
        """A project file the agent did not use: an info line of the turn (the main agent's)."""
        if event.agent_id != "main":
            return []
        return [update_agent_message_text(info_note(event.text))]

    def _checkpoint(self, event: CheckpointNotice) -> list[Update]:
        """What a checkpoint left out (an /undo will not restore it) or what the app undid after a sandboxed
        action (a planted `.git/config`): files on the editor's disk changed or unprotected, an info line."""
        return [update_agent_message_text(info_note(event.text))]

    def _error(self, event: AgentError) -> list[Update]:
        if event.agent_id != "main":  # a subagent's error ends its task (``SubagentStatus``)
            return []
        self.error_kinds.append(event.kind)
        return [update_agent_message_text(f"\n\n**Error:** {event.message}\n")]

    def _request(self, request: ApprovalRequest) -> list[Update]:
        key = (request.agent_id, request.corr_id)
        parent = self._by_key.get(key)
        call = request.tool_call
        if parent is not None and isinstance(call, _PART_TYPES):
            tool_call_id = self._mint(f"{parent.id}/{len(parent.parts) + 1}")
            parent.parts.append(tool_call_id)
        elif parent is not None:  # the same call asked again (a retry): a new id, ended with the call
            tool_call_id = self._mint(f"{parent.id}#{len(self.calls)}")
            parent.parts.append(tool_call_id)
        else:
            tool_call_id = self._mint(self._key_id(*key))
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
        if entry.done:  # ended already (the turn was cancelled while the client was asked)
            return []
        if decision.approved:
            return [update_tool_call(entry.id, status="in_progress")]
        entry.done = True
        content = [*entry.view.content, *note_content(decision_note(decision))]
        return [update_tool_call(entry.id, status="failed", content=content)]

    def _chunk(self, agent_id: str, corr_id: str, text: str) -> list[Update]:
        entry = self._by_key.get((agent_id, corr_id))
        if entry is None or entry.done or not text:
            return []
        entry.output = (entry.output + text)[
            -(OUTPUT_LIMIT + 1) :
        ]  # only the tail is shown: per chunk, a bound
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
        if (
            entry.done
        ):  # its end was sent (refused, its subagent failed, cancelled): the output, no new status
            if output:
                updates.append(update_tool_call(entry.id, content=[*entry.view.content, *output]))
            return updates
        entry.done = True
        updates.append(update_tool_call(entry.id, status=status, content=[*entry.view.content, *output]))
        return updates

    def _unasked_end(
        self, agent_id: str, corr_id: str, output: list[ToolContent], is_error: bool
    ) -> list[Update]:
        """A call that ended without ever being asked about (it failed before it could run: bad
        arguments, an unknown tool, a guard, a path that cannot be used): it still reaches the client, as
        a tool call of its own that starts in its end state."""
        tool_call_id = self._mint(self._key_id(agent_id, corr_id or f"call-{len(self.calls) + 1}"))
        title = "Tool call (failed before it ran)" if is_error else "Tool call"
        entry = _Call(tool_call_id, CallView(title, "other", [], [], {}), done=True)
        self.calls[tool_call_id] = entry
        self._by_key[(agent_id, corr_id)] = entry
        status: ToolCallStatus = "failed" if is_error else "completed"
        return [start_tool_call(tool_call_id, title, kind="other", status=status, content=output)]

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

    def named(self, agent_id: str | None = None, corr_id: str | None = None) -> str:
        """What the model's call ``(agent_id, corr_id)`` (its parts too) was given, every text of its
        arguments on a line of its own; without a call, what every call of the turn was given. It says
        which files the call names (``PlanWatch``: a plan is the session's whose call names it)."""
        entry = self._by_key.get((agent_id, corr_id)) if agent_id is not None and corr_id is not None else None
        if agent_id is not None and entry is None:
            return ""
        entries = [entry, *(self.calls[p] for p in entry.parts)] if entry is not None else self.calls.values()
        return "\n".join(text for e in entries for text in _texts(e.view.raw_input))


def _texts(value: Any) -> Iterable[str]:
    """Every string inside ``value`` (the arguments of a call, as the model gave them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)


EventHandler = Callable[[TurnUpdates, Any], list[Update]]

EVENT_UPDATES: dict[type[AgentEvent], EventHandler] = {
    ThoughtsChunk: TurnUpdates._thoughts_chunk,
    Thoughts: TurnUpdates._thoughts,
    ResponseChunk: TurnUpdates._response_chunk,
    Response: TurnUpdates._response,
    Nudge: TurnUpdates._nudge,
    ApprovalRequest: TurnUpdates._request,
    CodeExecutionOutputChunk: TurnUpdates._output_chunk,
    CodeExecutionOutput: TurnUpdates._code_output,
    ToolOutput: TurnUpdates._tool_output,
    SubagentStatus: TurnUpdates._subagent_status,
    Cancelled: TurnUpdates._cancelled,
    AgentError: TurnUpdates._error,
    ProjectFileRefused: TurnUpdates._refused,
    CheckpointNotice: TurnUpdates._checkpoint,
}
"""Every kind of agent event that becomes ``session/update``s here, and how: the one place agent events
become ACP updates. Every step of the agent (ran, refused, rejected, broken, unknown tool, guarded, cut
by a limit, cancelled) reaches the client as one ``tool_call`` that ends ``completed`` or ``failed``:
an ``ApprovalRequest`` starts it (or, for a call never asked, its output does), its output or decision
ends it, and ``close_open`` ends whatever the turn left open."""

NOT_SHOWN: dict[type[AgentEvent], str] = {
    UsageUpdate: "the runner sends it as usage_update",
    ReplyStopped: "the turn's stop reason (max_tokens, refusal), read by the runner",
    ContextUpdate: "usage_update carries the context fill",
    ModelRetry: "a transient model error retried within the same request",
    KernelStatus: "the kernel's state; a failure that ends a call ends it with its output or an AgentError",
    ProtocolSwitch: "the action protocol is the agent's business; its actions show as tool calls",
    OutputClaim: "a note on the model's text, which the client has",
    Compacting: "a /compact command answers with its own text",
    Compacted: "a /compact command answers with its own text",
    ModelWaiting: "the editor shows the prompt as running; a chunk would stay in the transcript after the wait",
}
"""Every kind of agent event that is no update over ACP, and why (a table test checks that the two
tables cover every kind, so a new kind of event is a decision here, never silence)."""


__all__ = [
    "EVENT_UPDATES",
    "NOT_SHOWN",
    "TurnUpdates",
    "Update",
    "decided_status",
    "decision_note",
    "info_note",
    "nudge_note",
]
