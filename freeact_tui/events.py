"""Events yielded by ``Agent.stream()``: frozen dataclasses, each carrying the agent id and correlation ids.

``corr_id`` is the id of the tool call an event belongs to ("" for model text outside a call);
``parent_corr_id`` is the parent agent's call that started a subagent (``None`` for the main agent).

One channel carries them (``agent/channel.py``). In a turn, every event an agent reports — the
turn's own and status events alike (``KernelStatus``, ``UsageUpdate``, ``SubagentStatus``,
``ContextUpdate``, ``CheckpointNotice``) — is yielded by ``Agent.stream()``, in order, and
listeners get nothing. Idle (no ``stream()`` running), events go to the callbacks given to
``Agent.subscribe()`` (the kernel starting, ``/compact``, a subagent pool warming up); with no
listener they are dropped. No event is delivered twice.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from freeact_tui.toolcalls import (
    CODE_TOOL,
    EDIT_TEXT_TOOL,
    READ_MEDIA_TOOL,
    READ_TEXT_TOOL,
    SUBAGENT_TOOL,
    WRITE_TEXT_TOOL,
    CodeAction,
    FileEdit,
    FileRead,
    FileWrite,
    JsonToolCall,
    NamedPath,
    ProgrammaticToolCall,
    ShellAction,
    ShellScript,
    SubagentTask,
    ToolCall,
)

RememberScope = Literal["always", "session"]


class Phase(StrEnum):
    """What a turn (or one of its calls) is doing; equal to its string value (``Phase.MODEL == "model"``)."""

    MODEL = "model"
    APPROVAL = "approval"
    EXECUTION = "execution"
    SUBAGENT = "subagent"
    IDLE = "idle"


@dataclass(frozen=True)
class AgentEvent:
    agent_id: str = field(default="main", kw_only=True)
    corr_id: str = field(default="", kw_only=True)
    parent_corr_id: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class ThoughtsChunk(AgentEvent):
    content: str


@dataclass(frozen=True)
class Thoughts(AgentEvent):
    content: str


@dataclass(frozen=True)
class ResponseChunk(AgentEvent):
    content: str


@dataclass(frozen=True)
class Response(AgentEvent):
    content: str


@dataclass(frozen=True)
class Decision:
    """A user's (or a rule's) answer to an approval request.

    ``remember`` with a ``pattern`` also adds a rule: an allow rule when approved, a deny rule when not.
    ``reason`` says why an action was refused; the model is told it.
    """

    approved: bool
    remember: RememberScope | None = None
    pattern: str | None = None
    by_rule: bool = False
    reason: str | None = None
    per_part: bool = False
    """A code action that is only shell parts: not asked itself, each part is asked instead."""
    instruction: str | None = None
    """Said by the user with a rejection: what to do instead. The model is told it and the turn goes on."""
    by_mode: str | None = None
    """The approval mode that decided it (``freeact_tui.effects.modes``); ``by_rule`` is then set too."""


@dataclass(frozen=True)
class ApprovalRequest(AgentEvent):
    """An action waits for a decision. Pre-approved actions arrive already decided.

    The agent awaits ``approved()``; a UI calls ``approve(True/False)`` exactly once.
    """

    tool_call: ToolCall
    _future: asyncio.Future[Decision] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future(), repr=False, compare=False
    )
    named_paths: tuple[NamedPath, ...] = field(default=(), kw_only=True)
    """Paths the action names outside the working directory or in the app's installation (a warning)."""
    effects: str = field(default="", kw_only=True)
    """What a code action does, in one line (``freeact_tui.effects.describe``); empty for other actions."""
    effect_class: str | None = field(default=None, kw_only=True)
    """The narrowest effect class that covers the code (``effects:<class>`` rules); ``None``: none does."""

    @property
    def tool_name(self) -> str:
        match self.tool_call:
            case CodeAction():
                return CODE_TOOL
            case ShellAction() | ShellScript():
                return "shell"
            case ProgrammaticToolCall(server=server, tool=tool):
                return f"{server}.{tool}"
            case JsonToolCall(tool_name=name):
                return name
            case SubagentTask():
                return SUBAGENT_TOOL
            case FileRead(media=media):
                return READ_MEDIA_TOOL if media else READ_TEXT_TOOL
            case FileWrite():
                return WRITE_TEXT_TOOL
            case FileEdit():
                return EDIT_TEXT_TOOL
        return self.tool_call.kind

    @property
    def tool_args(self) -> dict[str, Any]:
        match self.tool_call:
            case CodeAction(code=code):
                return {"code": code}
            case ShellAction(command=command):
                return {"cmd": command}
            case ShellScript(script=script):
                return {"cmd": script}
            case ProgrammaticToolCall(args=args) | JsonToolCall(tool_args=args):
                return dict(args)
            case SubagentTask(prompt=prompt, max_turns=max_turns):
                return {"prompt": prompt, "max_turns": max_turns}
            case FileRead(path=path, offset=offset, limit=limit):
                return {
                    "path": path,
                    **({"offset": offset} if offset else {}),
                    **({"limit": limit} if limit else {}),
                }
            case FileWrite(path=path, content=content):
                return {"path": path, "content": content}
            case FileEdit(path=path, edits=edits):
                return {
                    "path": path,
                    "edits": [{"old_text": e.old_text, "new_text": e.new_text} for e in edits],
                }
        return {}

    @property
    def decided(self) -> bool:
        return self._future.done()

    @property
    def decision(self) -> Decision | None:
        if self._future.done() and not self._future.cancelled():
            return self._future.result()
        return None

    @property
    def pre_approved(self) -> bool:
        """True when a permission rule (or ``--skip-permissions``) decided before the UI saw it."""
        d = self.decision
        return d is not None and d.by_rule

    def approve(
        self,
        decision: bool,
        *,
        remember: RememberScope | None = None,
        pattern: str | None = None,
        instruction: str | None = None,
    ) -> None:
        """Decide this request. ``remember`` with a ``pattern`` also adds a permission rule.

        The rule allows such actions when ``decision`` is True and denies them when it is False.
        ``instruction`` (with a rejection) tells the model what to do instead; the turn goes on.
        """
        told = (instruction or "").strip() or None
        self.resolve(
            Decision(decision, remember=remember, pattern=pattern, instruction=None if decision else told)
        )

    def resolve(self, decision: Decision) -> None:
        if not self._future.done():
            self._future.set_result(decision)

    async def approved(self) -> bool:
        return (await self.wait()).approved

    async def wait(self) -> Decision:
        return await asyncio.shield(self._future)


@dataclass(frozen=True)
class CodeExecutionOutputChunk(AgentEvent):
    text: str


@dataclass(frozen=True)
class CodeExecutionOutput(AgentEvent):
    text: str | None
    images: list[Path] = field(default_factory=list)
    is_error: bool = False
    truncated: bool = False
    result_path: Path | None = None


@dataclass(frozen=True)
class ToolOutput(AgentEvent):
    content: str
    is_error: bool = False
    image: bytes | None = field(default=None, repr=False)
    """An image the tool gave the model (a file tool's media read), for a preview."""
    truncated: bool = False
    """Longer than the inline limit: the model got its head and tail, ``result_path`` holds it all."""
    result_path: Path | None = None


@dataclass(frozen=True)
class Cancelled(AgentEvent):
    phase: Phase = Phase.MODEL


ErrorKind = Literal["model", "kernel", "config", "limit", "stalled", "repeat", "internal"]
"""Why a turn ended on an error.

- ``limit``: the turn's request budget ran out (``max_model_requests``, or ``max_turns`` for one turn), or
  a usage limit of the model library.
  Headless: status ``max_turns``, exit code 3. ACP: ``stopReason`` ``max_turn_requests``.
- ``stalled``: ``max_steps_without_progress`` steps in a row made no progress (broken or refused calls,
  the same failure again, code that already ran in the turn run again whatever it printed, replies that
  neither acted nor answered), or ``max_failing_steps`` failing steps came with no action that worked
  (``agent/policy/progress.py`` ``STEP_RULES``); the message says what kept failing
  and what the user can do; the bound is lowered to what is left of ``max_model_requests`` when that is
  smaller (not to a caller's ``max_turns``). The same in every protocol (``tools``, ``text``, ``auto``). Headless: status
  ``stalled``, exit code 4. ACP: ``stopReason`` ``max_turn_requests`` (the turn hit a bound, it did not
  answer), with the message as an agent message chunk.
- ``repeat``: stored by older versions (the same error twice); read back from old sessions, no longer emitted.
- ``model``, ``kernel``, ``config``, ``internal``: a failure of that part (``model``: any error of the model
  path, a failed compaction before a request included; ``internal``: a bug, its message names the log file).
  Headless: status ``error``, exit 1; ACP: ``end_turn`` with the message.

Which exception ends a turn as which kind is one table: ``agent/turn/failures.py``.
"""


@dataclass(frozen=True)
class AgentError(AgentEvent):
    """The turn ended on an error the user must see (model API error, kernel failure, …)."""

    message: str
    kind: ErrorKind = "internal"


@dataclass(frozen=True)
class ReplyStopped(AgentEvent):
    """The model's reply did not end on its own: ``finish`` is its finish reason (pydantic-ai's
    ``ModelResponse.finish_reason``: ``length``, ``content_filter``), ``message`` the one line for the
    user. Emitted after the reply's ``Response``; how each front end reports it is one table:
    ``agent/reply_stops.py``."""

    finish: str
    message: str


@dataclass(frozen=True)
class ModelRetry(AgentEvent):
    """A transient model error (rate limit, overload, dropped connection): retry ``attempt`` of ``attempts`` follows in ``delay`` s."""

    reason: str
    attempt: int
    attempts: int
    delay: float


@dataclass(frozen=True)
class ModelWaiting(AgentEvent):
    """A model request has sent nothing for ``seconds`` (more than a few): said about once a second until
    it sends something, fails, or reaches ``idle_timeout`` (``model_idle_timeout``) and counts as stalled.
    The TUI shows a live line, headless text runs a line on stderr now and then, ``stream-json`` a
    ``model_waiting`` line; ACP sends nothing."""

    seconds: float
    idle_timeout: float


KernelState = Literal["starting", "ready", "busy", "restarting", "failed", "stopped"]


@dataclass(frozen=True)
class KernelStatus(AgentEvent):
    state: KernelState
    detail: str = ""


@dataclass(frozen=True)
class UsageUpdate(AgentEvent):
    """Token usage of the session so far (all requests of this agent), and cost where known."""

    input_tokens: int
    output_tokens: int
    requests: int
    cost_usd: float | None = None
    estimated: bool = False
    """Some of the counts are estimates: the server reported no usage for a response."""


@dataclass(frozen=True)
class ProtocolSwitch(AgentEvent):
    """The session's action protocol changed (``auto``: the model cannot call tools, so it writes code blocks)."""

    protocol: Literal["tools", "text"]
    reason: str


@dataclass(frozen=True)
class CheckpointNotice(AgentEvent):
    """What the checkpoint before an action left out (files over the size limits) or why it failed."""

    text: str


@dataclass(frozen=True)
class ProjectFileRefused(AgentEvent):
    """A project file the agent did not use (``AGENTS.md``, a skill, a saved tool: changed since the folder
    was trusted, too big, not a regular file, ...): every front end shows ``text``, one line
    (``project.refusals.notice``)."""

    text: str
    reason: str
    """Why, as a ``project.refusals.Reason`` value."""


@dataclass(frozen=True)
class Nudge(AgentEvent):
    """The agent told the model to act or answer instead of ending the turn (``auto``/``text``; ``agent/nudge.py``)."""

    reason: str
    """Why, for the log ("the reply claims results no action produced")."""
    message: str
    """What the model was told."""


@dataclass(frozen=True)
class OutputClaim(AgentEvent):
    """The model's reply shows output of code that had not run (``Output:`` and a block): its claim, not a result."""

    text: str
    """What a UI can show next to the reply."""


@dataclass(frozen=True)
class ContextUpdate(AgentEvent):
    """How full the model's context window is: ``used`` of ``window`` tokens.

    ``estimated`` is true when ``used`` is not the provider's own count (before the first answer,
    or right after a compaction); ``source`` says where ``window`` comes from (``setting``,
    ``provider``, ``table`` or ``default``).
    """

    used: int
    window: int
    estimated: bool = True
    source: str = "default"

    @property
    def fraction(self) -> float:
        return self.used / self.window if self.window > 0 else 0.0


@dataclass(frozen=True)
class Compacting(AgentEvent):
    """A compaction started: the model is summarising the older turns (``auto`` or by hand)."""

    reason: Literal["auto", "manual"]
    messages: int
    tokens: int


@dataclass(frozen=True)
class Compacted(AgentEvent):
    """A compaction ended: ``replaced`` messages became one summary; tokens are estimates."""

    reason: Literal["auto", "manual"]
    replaced: int
    kept: int
    tokens_before: int
    tokens_after: int
    seconds: float
    summary: str
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0


SubagentState = Literal["queued", "running", "waiting", "done", "failed", "cancelled"]


@dataclass(frozen=True)
class SubagentStatus(AgentEvent):
    """Lifecycle of a subagent; ``agent_id`` is the subagent's id, ``corr_id`` the parent call id."""

    state: SubagentState
    task: str
    detail: str = ""


__all__ = [
    "AgentEvent",
    "ErrorKind",
    "FileEdit",
    "FileRead",
    "FileWrite",
    "AgentError",
    "ApprovalRequest",
    "Cancelled",
    "CheckpointNotice",
    "CodeExecutionOutput",
    "CodeExecutionOutputChunk",
    "Compacted",
    "Compacting",
    "ContextUpdate",
    "Decision",
    "KernelState",
    "KernelStatus",
    "ModelRetry",
    "ModelWaiting",
    "Nudge",
    "OutputClaim",
    "ProjectFileRefused",
    "ProtocolSwitch",
    "RememberScope",
    "ReplyStopped",
    "Response",
    "ResponseChunk",
    "SubagentState",
    "SubagentStatus",
    "Thoughts",
    "ThoughtsChunk",
    "ToolOutput",
    "UsageUpdate",
]
