"""Running one approved code action in an executor, with the approvals that arise inside it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from freeact_tui.actions.ports import Overflow, TurnPorts
from freeact_tui.events import CodeExecutionOutput, CodeExecutionOutputChunk
from freeact_tui.execution.base import ExecApproval, ExecChunk, ExecResult, Executor
from freeact_tui.project import files as projectfiles
from freeact_tui.shell.words import split_command
from freeact_tui.store.event_record import IMAGE_NOTE
from freeact_tui.store.step_record import Outcome, StepRecord
from freeact_tui.toolcalls import ProgrammaticToolCall, ShellAction, ShellScript, ToolCall

REJECTED_PART_NOTE = "The user rejected "
"""Starts the note that tells the model which shell part or MCP call was rejected (after the output)."""

CheckpointFn = Callable[[Sequence[ToolCall], str], Awaitable[None]]
"""Called with an approved action's calls and its tool call id just before it runs (may write files)."""


@dataclass
class ActionOutcome:
    """What the model is told about an action, and how the turn should go on."""

    content: str
    rejected: bool = False
    is_error: bool = False
    kernel_died: bool = False
    subagent_id: str | None = None
    malformed: bool = False
    """The call itself was broken (invalid JSON arguments, a missing argument, an unknown tool)."""
    attachments: list[Any] = field(default_factory=list)
    """Multimodal content sent with the result (pydantic-ai ``BinaryContent``: a file tool's image or PDF)."""
    shown: StepRecord = StepRecord()
    """What the log showed of it besides the text (images, a file call's path and diff), stored for UIs."""
    instructed: bool = False
    """Rejected, but the user said what to do instead: stored as rejected, and the turn goes on."""

    def tool_content(self) -> Any:
        """The tool return's content: the text, followed by any attachments."""
        return [self.content, *self.attachments] if self.attachments else self.content

    @property
    def outcome(self) -> Outcome:
        return "rejected" if self.rejected or self.instructed else "error" if self.is_error else "ok"

    def record(self) -> StepRecord:
        """Stored with the tool return so a resumed UI can show the outcome without parsing text."""
        return replace(
            self.shown,
            outcome=self.outcome,
            subagent_id=self.subagent_id,
            malformed=self.malformed,
            kernel_died=self.kernel_died,
        )


@dataclass
class ActionProgress:
    """Output seen so far, kept for the synthetic result of an interrupted action."""

    chunks: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.chunks)


class CodeActionRunner:
    """Streams one cell through an executor, asking for each shell command, script and MCP call."""

    def __init__(
        self,
        ports: TurnPorts,
        *,
        execution_timeout: float | None,
        model_profile: Callable[[], Any] | None = None,
        checkpoint: CheckpointFn | None = None,
    ) -> None:
        self._checkpoint = checkpoint
        self._ask = ports.ask
        self._emit = ports.emit
        self._ids = ports.ids
        self._timeout = execution_timeout
        self._overflow = ports.overflow
        self._model_profile = model_profile

    async def _decide(self, item: ExecApproval, corr_id: str) -> tuple[bool, str, str | None]:
        """Ask for every part of the request; return (approved, what was rejected and why, the user's instruction)."""
        calls: list[ToolCall]
        if item.kind == "shell":
            parts = split_command(item.command) or [item.command]
            calls = [ShellAction(part, full_command=item.command) for part in parts]
        elif item.kind == "script":
            calls = [ShellScript(item.command.rstrip("\n"))]
        else:
            calls = [ProgrammaticToolCall(item.server, item.tool, dict(item.args))]
        for call in calls:
            decision = await self._ask(call, corr_id)
            if not decision.approved:
                why = f" ({decision.reason})" if decision.reason else ""
                return False, f"`{call.display_text()}`{why}", decision.instruction
        if self._checkpoint is not None:  # the cell waits here: files are as they are before it runs
            await self._checkpoint(calls, corr_id)
        return True, "", None

    async def run(
        self, executor: Executor, code: str, corr_id: str, progress: ActionProgress
    ) -> ActionOutcome:
        ids = self._ids(corr_id)
        rejected: str | None = None
        instruction: str | None = None
        result: ExecResult | None = None
        async for item in executor.stream(code, timeout=self._timeout):
            match item:
                case ExecApproval():
                    approved, what, told = await self._decide(item, corr_id)
                    if approved:
                        await item.accept()
                    else:
                        rejected, instruction = (rejected, instruction) if rejected else (what, told)
                        await item.reject()
                case ExecChunk(text=text):
                    progress.chunks.append(text)
                    self._emit(CodeExecutionOutputChunk(text, **ids))
                case ExecResult():
                    result = item
        if result is None:  # the protocol promises a result; be safe anyway
            result = ExecResult(text=progress.text(), is_error=True)
        kept = self._overflow(result.text or "")
        content = kept.content
        self._emit(
            CodeExecutionOutput(
                result.text,
                images=list(result.images),
                is_error=result.is_error,
                truncated=kept.truncated,
                result_path=kept.path,
                **ids,
            )
        )
        attachments: list[Any] = []
        if result.images:
            content += "".join(f"{IMAGE_NOTE}{p}]" for p in result.images)
            attachments, note = image_attachments(list(result.images), self._model_profile)
            content += note
        if rejected is not None:
            then = (
                f"Instead, the user says: {instruction}"
                if instruction
                else "Wait for the user's next instruction."
            )
            content = f"{content}\n\n{REJECTED_PART_NOTE}{rejected}; the action was stopped. {then}".strip()
        if not content.strip():
            content = "(no output)"
        return ActionOutcome(
            content=content,
            rejected=rejected is not None and instruction is None,
            instructed=instruction is not None,
            is_error=result.is_error or instruction is not None,
            kernel_died=result.kernel_died,
            attachments=attachments,
            shown=shown_record(result.images, kept),
        )


def shown_record(images: Sequence[Path], kept: Overflow) -> StepRecord:
    """What the log showed of an output besides the model's text (its images, the whole of a long output),
    stored with the result for a resumed session."""
    return StepRecord(
        images=tuple(str(p) for p in images),
        truncated=kept.truncated,
        result_path=str(kept.path) if kept.truncated and kept.path is not None else None,
    )


MAX_IMAGES = 4  # attached per action (the first ones; the rest are named by path)
MAX_IMAGE_BYTES = 2 * 1024 * 1024


def image_attachments(images: list[Path], model_profile: Callable[[], Any] | None) -> tuple[list[Any], str]:
    """The images a code action made, as content for a model that takes images, and a note for the text.

    A model whose profile refuses images gets only their paths (and is told why); images beyond
    ``MAX_IMAGES`` or bigger than ``MAX_IMAGE_BYTES`` are named, not attached.
    """
    from pydantic_ai.messages import BinaryContent

    from freeact_tui.actions.file_ops import media_refusal

    if model_profile is None:
        return [], ""
    refusal = media_refusal(model_profile(), "image/png")
    if refusal is not None:
        return [], "\n(This model does not take images: only their paths are given.)"
    attached: list[Any] = []
    skipped: list[str] = []
    for path in images:
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if len(attached) >= MAX_IMAGES or size > MAX_IMAGE_BYTES:
            skipped.append(path.name)
            continue
        try:  # never through a link put in its place (the folder may be one the kernel writes)
            data = projectfiles.read_bytes(path, limit=MAX_IMAGE_BYTES, follow=False)
        except OSError:
            skipped.append(path.name)
            continue
        attached.append(BinaryContent(data, media_type="image/png", identifier=path.name))
    note = f"\n({len(attached)} image(s) attached below.)" if attached else ""
    if skipped:
        note += f"\n(Not attached, too many or too big: {', '.join(skipped)}.)"
    return attached, note
