"""Headless runs (``freeact-tui run PROMPT``): one turn without the terminal UI, for scripts, CI and pipes.

Nobody is there to approve actions: an action that needs approval and that no rule allows is
refused (the model is told why) and the run ends with exit code 2, naming the ``--allow`` pattern
that would allow it. Output formats: ``text`` (the final answer), ``json`` (one object, see
``result_object``) and ``stream-json`` (one object per line for every agent event, schema version
``STREAM_SCHEMA_VERSION``, documented in ``docs/headless.md``). Nothing here imports the TUI.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import signal
import sys
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from freeact_tui.agent.policy.text_protocol import said
from freeact_tui.agent.reply_stops import LastReply
from freeact_tui.cli.exit_codes import EXIT_CODES as EXIT_TABLE
from freeact_tui.cli.exit_codes import Status
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CheckpointNotice,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Decision,
    KernelStatus,
    ModelWaiting,
    Nudge,
    ProjectFileRefused,
    Response,
    ResponseChunk,
    ThoughtsChunk,
    ToolOutput,
)
from freeact_tui.permissions.patterns import exact_pattern
from freeact_tui.permissions.rules import KINDS, PermissionRules, rules_for
from freeact_tui.reach.breadth import EFFECT_PREFIX, FOLDER_CLASSES
from freeact_tui.reach.named_paths import describe
from freeact_tui.text.codeshow import summary
from freeact_tui.text.safe import visible
from freeact_tui.toolcalls import CodeAction, ToolCall

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.project.config import Config

OutputFormat = Literal["text", "json", "stream-json"]

STREAM_SCHEMA_VERSION = 1
WAIT_NOTE_EVERY = 15.0
STREAM_PIECES = (ResponseChunk, ThoughtsChunk, CodeExecutionOutputChunk)
"""Events that are a piece of a stream: their stream-json lines are flushed together (``PIECE_FLUSH_S``)."""
PIECE_FLUSH_S = 0.05
"""The longest a piece of a stream waits in the output buffer before it is flushed."""
"""Seconds between the stderr lines of a text run whose model request stays silent (``ModelWaiting``)."""
EXIT_CODES: dict[Status, int] = {status: code for status, (code, _) in EXIT_TABLE.items()}
"""Each status's exit code (``cli/exit_codes.py`` is the one table)."""


class RuleSyntaxError(ValueError):
    """An ``--allow``/``--deny`` value is not a valid rule; ``str(error)`` says why."""


def parse_rule(text: str) -> tuple[str, str]:
    """Split a command-line rule ``[KIND:]PATTERN`` into ``(kind, pattern)``.

    ``KIND`` is one of the permission kinds (``code``, ``shell``, ``script``, ``mcp``, ``tool``,
    ``subagent``, ``read``, ``write``) or ``*``; without it the rule applies to every kind. The
    pattern has the syntax of saved rules (``path:`` patterns included): ``shell:git status *``,
    ``code:*``, ``*rm -rf*``.

    Raises:
        RuleSyntaxError: the pattern is empty.
    """
    kind, sep, rest = text.partition(":")
    if sep and kind in (*KINDS, "*"):
        pattern = rest
    else:
        kind, pattern = "*", text
    if not pattern.strip():
        raise RuleSyntaxError(f"empty pattern in rule {text!r} (expected [KIND:]PATTERN, e.g. 'shell:git *')")
    return kind, pattern


def allow_hint(call: ToolCall, effect_class: str | None = None, rules: PermissionRules | None = None) -> str:
    """The ``--allow`` value that would let ``call`` run, and nothing that does more: for code that stays
    in the folder, its effect class; otherwise the exact action (``exact_pattern``).

    ``""`` when no ``--allow`` value would let it run: a rule of ``rules`` that asks or refuses decides it
    (the secrets' ask rules, a deny rule), and such a rule comes before every allow rule."""
    held = rules.matching_rule(call) if rules is not None else None
    if held is not None and held.effect != "allow":
        return ""
    if isinstance(call, CodeAction) and effect_class in FOLDER_CLASSES:
        return f"{call.kind}:{EFFECT_PREFIX}{effect_class}"
    return f"{call.kind}:{exact_pattern(call)}"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, ToolCall):
        return {"kind": value.kind, "subject": value.subject, "text": value.display_text()}
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _jsonable(getattr(value, f.name)) for f in fields(value) if not f.name.startswith("_")
        }
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def event_object(event: AgentEvent) -> dict[str, Any]:
    """One ``stream-json`` line: ``{"v", "type", "agent_id", "corr_id", "parent_corr_id", …fields}``."""
    out: dict[str, Any] = {"v": STREAM_SCHEMA_VERSION, "type": _snake(type(event).__name__)}
    out.update(_jsonable(event))
    if isinstance(event, ApprovalRequest):
        out["tool_name"] = event.tool_name
        out["tool_args"] = _jsonable(event.tool_args)
        out["decision"] = _jsonable(event.decision)
    return out


@dataclass
class Action:
    """A tool call of the model (with the approvals it needed and its output), for the ``json`` result."""

    agent_id: str
    id: str
    tool_name: str
    args: dict[str, Any]
    approvals: list[dict[str, Any]] = field(default_factory=list)
    output: str | None = None
    is_error: bool = False


@dataclass
class Refusal:
    agent_id: str
    corr_id: str
    kind: str
    subject: str
    text: str  # the action as shown to a person
    allow: str  # the --allow value that would have allowed it ("" when a deny rule refused it)
    reason: str


HEADLESS_EVENTS: dict[str, str] = {
    "Response": "the answer (the main agent's last reply)",
    "Nudge": "the reply before it is not the answer: the answer is cleared",
    "ApprovalRequest": "an action of the result, with its approvals and refusals",
    "CodeExecutionOutput": "the output of its action",
    "ToolOutput": "the output of its action",
    "AgentError": "errors, and the status (max_turns, stalled, error)",
    "Cancelled": "status interrupted",
    "ReplyStopped": "status cut or filtered when it is the turn's last reply (LastReply)",
    "UsageUpdate": "usage and cost_usd, read from the agent at the end",
    "KernelStatus": "the kernel's start failure, if any (stderr)",
    "ThoughtsChunk": "stream-json only: every event is a line; not in the result",
    "Thoughts": "stream-json only",
    "ResponseChunk": "stream-json only",
    "CodeExecutionOutputChunk": "stream-json only",
    "SubagentStatus": "stream-json only",
    "ProtocolSwitch": "stream-json only",
    "CheckpointNotice": "a warning on stderr (skipped files, failed checkpoints), once each",
    "ProjectFileRefused": "a warning on stderr (the project file not used, and why), once each",
    "ModelWaiting": "text: a line on stderr while the request stays silent; stream-json: a line",
    "ModelRetry": "stream-json only",
    "OutputClaim": "stream-json only",
    "ContextUpdate": "stream-json only",
    "Compacting": "stream-json only",
    "Compacted": "stream-json only",
}
"""How each agent event shows in a headless run (by event class name): total over ``freeact_tui/events.py``
(``tests/fast/acp/test_event_mappings.py``)."""


@dataclass
class RunRecord:
    """What a headless run saw, summed up from the events."""

    session_id: str
    answer: str = ""
    actions: dict[tuple[str, str], Action] = field(default_factory=dict)
    refusals: list[Refusal] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    error_after_answer: bool = False
    limit_reached: bool = False
    stalled: bool = False
    interrupted: bool = False
    last_reply: LastReply = field(default_factory=LastReply)
    """Whether the last reply was cut short (its status and notice: ``agent/reply_stops.py``)."""
    usage: dict[str, Any] = field(default_factory=dict)
    path_warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    """What the checkpoints said (one skipped, or turned off and why) and the project files not used, each
    once, for stderr."""
    """One line for each action that names paths outside the working directory or in the app's installation."""

    def see(self, event: AgentEvent) -> None:
        main = event.agent_id == "main"
        self.last_reply.see(event)
        match event:
            case Response(content=content) if main:
                self.answer = content
                self.error_after_answer = False
            case ApprovalRequest():
                key = (event.agent_id, event.corr_id)
                if key not in self.actions:
                    self.actions[key] = Action(
                        event.agent_id, event.corr_id, event.tool_name, event.tool_args
                    )
                decision = event.decision
                if decision is not None and decision.by_rule and not decision.approved:
                    self.refusals.append(_refusal(event, "", decision.reason or "denied by a rule"))
                self.actions[key].approvals.append(
                    {
                        "kind": event.tool_call.kind,
                        "subject": event.tool_call.subject,
                        "approved": bool(decision and decision.approved),
                        "by_rule": bool(decision and decision.by_rule),
                        "reason": decision.reason if decision else None,
                        "named_paths": _jsonable(event.named_paths),
                    }
                )
                if event.named_paths:
                    self.path_warnings.append(_path_warning(event))
            case (
                CodeExecutionOutput(text=text, is_error=is_error)
                | ToolOutput(content=text, is_error=is_error)
            ):
                action = self.actions.get((event.agent_id, event.corr_id))
                if action is not None:
                    action.output = (action.output or "") + (text or "")
                    action.is_error = action.is_error or is_error
            case AgentError(message=message, kind=kind) if main:
                self.errors.append({"kind": kind, "message": message})
                if kind == "limit":
                    self.limit_reached = True
                elif kind == "stalled":
                    self.stalled = True
                else:
                    self.error_after_answer = True
            case Cancelled() if main:
                self.interrupted = True
            case Nudge() if main:  # the reply before it is not the answer
                self.answer = ""
            case CheckpointNotice(text=text) | ProjectFileRefused(text=text) if text not in self.notices:
                self.notices.append(text)

    @property
    def status(self) -> Status:
        if self.interrupted:
            return "interrupted"
        if self.refusals:
            return "refused"
        if self.limit_reached:
            return "max_turns"
        if self.stalled:
            return "stalled"
        if self.last_reply.stop is not None:  # cut short: never a complete answer
            return self.last_reply.stop.status
        if self.error_after_answer or not said(self.answer):  # whitespace or thinking only: no answer
            return "error"
        return "answered"

    @property
    def final_answer(self) -> str:
        """The answer the turn ended with, or ``""``: a turn that ended without one (stalled, max_turns,
        refused, interrupted, an error) has none, whatever the model wrote on the way (a code block, the
        text beside a call); its status and errors say why. A reply cut short is its answer as far as it
        went (its status says it is incomplete). The one reading of the answer for every output format."""
        status = self.status
        stop = self.last_reply.stop
        ended_on_it = status == "answered" or (stop is not None and status == stop.status)
        return self.answer if ended_on_it and said(self.answer) else ""  # thinking only is no answer

    def result_object(self) -> dict[str, Any]:
        """The ``json`` output (also the last ``stream-json`` line, with ``"type": "result"``)."""
        return {
            "v": STREAM_SCHEMA_VERSION,
            "status": self.status,
            "exit_code": EXIT_CODES[self.status],
            "answer": self.final_answer,
            "session_id": self.session_id,
            "usage": {k: v for k, v in self.usage.items() if k != "cost_usd"},
            "cost_usd": self.usage.get("cost_usd"),
            "actions": [_jsonable(a) for a in self.actions.values()],
            "refusals": [_jsonable(r) for r in self.refusals],
            "errors": self.all_errors,
        }

    @property
    def all_errors(self) -> list[dict[str, str]]:
        """The errors met, and for a turn that ended with no answer and no other error, that one: an
        empty reply, whitespace or thinking only (``error`` with ``errors: []`` said nothing); for a turn
        whose last reply was cut short (``cut``, ``filtered``), why (it was on stderr only)."""
        if self.status == "error" and not self.errors:
            return [{"kind": "model", "message": NO_ANSWER}]
        stop = self.last_reply.stop
        if stop is not None and self.status == stop.status:
            return [*self.errors, {"kind": stop.status, "message": stop.notice}]
        return self.errors


NO_ANSWER = "the model gave no answer (its reply was empty, whitespace or thinking only)."


def _path_warning(request: ApprovalRequest) -> str:
    """``code action 'open("/etc/x")…' (run): ⚠ Names paths outside the working directory: /etc/x``."""
    head, *paths = describe(request.named_paths)
    decision = request.decision
    state = "run" if decision is not None and decision.approved else "refused"
    who = "" if request.agent_id == "main" else f"subagent {request.agent_id}: "
    listed = ", ".join(p.strip() for p in paths)
    return f"{who}{request.tool_call.kind} action {_short(request.tool_call.display_text())!r} ({state}): {head} {listed}"


def refuse_unattended(
    request: ApprovalRequest, record: RunRecord, rules: PermissionRules | None = None
) -> None:
    """Reject an undecided request: nobody is present to approve it, and no rule allows it."""
    hint = allow_hint(request.tool_call, request.effect_class, rules)
    held = rules.matching_rule(request.tool_call) if rules is not None and not hint else None
    does = f"it {request.effects}; " if request.effects else ""
    if held is not None:
        why = f"{does}the rule `{held.kind}:{held.pattern}` asks for it and nobody is present to approve it"
        reason = f"{why} (headless run; no --allow rule overrides a rule that asks)"
    else:
        why = f"{does}no rule allows it and nobody is present to approve it"
        reason = f"{why} (headless run; allow it with --allow {shlex.quote(hint)})"
    request.resolve(Decision(False, reason=reason))
    record.refusals.append(_refusal(request, hint, why))


def _refusal(request: ApprovalRequest, hint: str, reason: str) -> Refusal:
    call = request.tool_call
    return Refusal(
        request.agent_id, request.corr_id, call.kind, call.subject, call.display_text(), hint, reason
    )


@dataclass
class HeadlessRun:
    """One headless turn: run ``prompt`` on ``agent`` and report in ``output_format``.

    Args:
        agent: the agent, not started yet (the run starts and stops it).
        prompt: the user's message.
        output_format: ``text``, ``json`` or ``stream-json``.
        max_turns: the most model requests of the turn (``None``: no limit).
        out / err: where the result and the diagnostics go.
    """

    agent: Agent
    prompt: str
    output_format: OutputFormat = "text"
    max_turns: int | None = None
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    err: IO[str] = field(default_factory=lambda: sys.stderr)

    _wait_said: float = field(default=-1.0, init=False, repr=False)
    """Seconds of the current model wait last said on stderr (-1: none said in this wait)."""
    _flush_timer: asyncio.TimerHandle | None = field(default=None, init=False, repr=False)
    """The flush of stream pieces written since the last flush (None: none waiting)."""

    def run(self) -> int:
        """Run the turn to its end; return the exit code."""
        try:
            return asyncio.run(self._main())
        except KeyboardInterrupt:
            self.err.write("freeact-tui: interrupted.\n")
            return EXIT_CODES["interrupted"]

    def _line(self, payload: dict[str, Any], *, piece: bool = False) -> None:
        """One JSON line. A piece of a stream (a delta of text, thought or output) is flushed within
        ``PIECE_FLUSH_S`` with the pieces after it; anything else at once (with the pieces before it): a
        reply in 4-character deltas is 30,000 lines, and a write to a pipe each cost more than the rest."""
        self.out.write(json.dumps(payload, ensure_ascii=False) + "\n")
        if not piece:
            self._flush()
        elif self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(PIECE_FLUSH_S, self._flush)

    def _flush(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        self.out.flush()

    async def _main(self) -> int:
        agent = self.agent
        record = RunRecord(agent.session_id)
        streaming = self.output_format == "stream-json"
        loop = asyncio.get_running_loop()
        main_task = asyncio.current_task()

        def interrupt() -> None:
            record.interrupted = True
            if agent.busy:
                agent.cancel()
            elif main_task is not None:
                main_task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, interrupt)
        if streaming:
            agent.subscribe(lambda e: self._line(event_object(e)) if isinstance(e, KernelStatus) else None)
            self._line(
                {"v": STREAM_SCHEMA_VERSION, "type": "start", "session_id": agent.session_id,
                 "model": agent.model_name}
            )  # fmt: skip
        try:
            async with agent:
                async for event in agent.stream(self.prompt, max_turns=self.max_turns):
                    if isinstance(event, ApprovalRequest) and not event.decided:
                        refuse_unattended(event, record, agent.permissions)
                    record.see(event)
                    self._show(event)
        except asyncio.CancelledError:
            record.interrupted = True
        except Exception as exc:  # e.g. a session that cannot be read: a message, not a traceback
            from freeact_tui.agent.turn.failures import failure_of

            error = failure_of(exc).event()  # the error a turn would end on: the same status and exit code
            record.see(error)
            if streaming:
                self._line(event_object(error))
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
        record.usage = _jsonable(agent.usage)
        for key in ("agent_id", "corr_id", "parent_corr_id"):
            record.usage.pop(key, None)
        if not record.usage.get("estimated"):  # only said when the server reported no usage
            record.usage.pop("estimated", None)
        self._report(record)
        return EXIT_CODES[record.status]

    def _show(self, event: AgentEvent) -> None:
        """What is said while the turn runs: every event in ``stream-json``; in text, a silent model."""
        if self.output_format == "stream-json":
            self._line(event_object(event), piece=isinstance(event, STREAM_PIECES))
        elif self.output_format == "text" and isinstance(event, ModelWaiting):
            self._say_waiting(event)

    def _say_waiting(self, event: ModelWaiting) -> None:
        """A line on stderr when a model request has been silent a while, and every ``WAIT_NOTE_EVERY`` s
        after (text output only: json has its result, stream-json every event)."""
        if event.agent_id != "main":
            return
        if event.seconds < self._wait_said:  # a new wait (the model spoke in between)
            self._wait_said = -1.0
        if self._wait_said >= 0 and event.seconds - self._wait_said < WAIT_NOTE_EVERY:
            return
        self._wait_said = event.seconds
        self.err.write(
            f"freeact-tui: waiting for the model: nothing for {int(event.seconds)} s "
            f"(gives up at {event.idle_timeout:g} s, model_idle_timeout)\n"
        )
        self.err.flush()

    def _report(self, record: RunRecord) -> None:
        status = record.status
        if self.output_format == "json":
            self._line(record.result_object())
        elif self.output_format == "stream-json":
            self._line({**record.result_object(), "type": "result"})
        elif record.final_answer:
            # a reply cut short is printed as far as it went; the line on stderr says it is incomplete
            answer = record.final_answer.rstrip("\n")
            # At a terminal the model's text is shown, never obeyed (escape sequences made visible);
            # into a pipe or file it goes as written.
            self.out.write((visible(answer) if _is_terminal(self.out) else answer) + "\n")
            self.out.flush()
        for warning in [*record.notices, *record.path_warnings]:
            self.err.write(f"freeact-tui: {visible(warning, multiline=False)}\n")
        for error in record.all_errors:
            self.err.write(f"freeact-tui: {visible(error['message'])}\n")
        for refusal in record.refusals:
            fix = (
                f" To allow it, run again with --allow {shlex.quote(refusal.allow)}." if refusal.allow else ""
            )
            who = "" if refusal.agent_id == "main" else f"subagent {refusal.agent_id}: "
            self.err.write(
                f"freeact-tui: {who}refused {refusal.kind} action {_short(refusal.text)!r}: {refusal.reason}.{fix}\n"
            )
        if status == "interrupted":
            self.err.write("freeact-tui: interrupted.\n")


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


def _short(text: str, limit: int = 80) -> str:
    """The first non-blank line of ``text`` made visible, cut at ``limit`` characters, and how many
    more lines follow (a decoy first line never stands for the whole action)."""
    return summary(text, limit)


def session_rules(rules: PermissionRules, allow: list[str], deny: list[str]) -> None:
    """Add ``--allow``/``--deny`` values as session rules.

    Raises:
        RuleSyntaxError: a value is not ``[KIND:]PATTERN``.
    """
    for effect, values in (("allow", allow), ("deny", deny)):
        for value in values:
            kind, pattern = parse_rule(value)
            rules.add(kind, pattern, scope="session", effect=effect)  # type: ignore[arg-type]


def run_from_config(
    config: Config,
    prompt: str,
    *,
    session_id: str | None = None,
    output_format: OutputFormat = "text",
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    max_turns: int | None = None,
) -> int:
    """Run ``prompt`` headless with the agent ``config`` describes; return the exit code.

    The saved permission rules apply, plus ``allow``/``deny`` (``[KIND:]PATTERN``) for this run only.
    """
    from freeact_tui.agent.agent import Agent
    from freeact_tui.agent.models import ModelSetupError, missing_setup
    from freeact_tui.permissions.rules import PermissionsFileError
    from freeact_tui.project.freeact_dir import FreeactConfigError

    problem = missing_setup(config.model, config.base_url, config.api_key_env, config.provider_keys)
    if problem:
        sys.stderr.write(f"freeact-tui: {problem}\n")
        return EXIT_CODES["error"]
    working_dir = config.resolved_working_dir()
    try:
        # The same rules as the app (user file, project file, defaults), --allow/--deny on top.
        rules = rules_for(
            working_dir, skip_permissions=config.skip_permissions, trusted=config.project_trusted
        )
        session_rules(rules, allow or [], deny or [])
    except (PermissionsFileError, FreeactConfigError, ValueError) as exc:
        sys.stderr.write(f"freeact-tui: {exc}\n")
        return EXIT_CODES["error"]

    try:
        # One turn: the kernel starts at the first code action, no subagent kernel is kept warm.
        agent = Agent.from_config(
            config, session_id=session_id, permissions=rules, eager_kernel=False, subagent_pool_size=0
        )
    except ModelSetupError as exc:
        sys.stderr.write(f"freeact-tui: {exc}\n")
        return EXIT_CODES["error"]
    return HeadlessRun(agent, prompt, output_format, max_turns).run()


def read_prompt(argument: str | None, stdin: IO[str]) -> str:
    """The prompt: the argument, followed by whatever was piped into stdin (not read from a terminal)."""
    piped = "" if stdin.isatty() else stdin.read()
    parts = [p for p in (argument, piped.strip("\n")) if p and p.strip()]
    return "\n\n".join(parts)


__all__ = [
    "EXIT_CODES",
    "STREAM_SCHEMA_VERSION",
    "HeadlessRun",
    "RuleSyntaxError",
    "RunRecord",
    "allow_hint",
    "event_object",
    "parse_rule",
    "read_prompt",
    "run_from_config",
    "session_rules",
]
