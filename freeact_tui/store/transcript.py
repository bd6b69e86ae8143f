"""One walk of stored history: pydantic-ai messages → a flat, typed transcript.

``sessions show``/``export`` and the TUI's replay of a resumed session both read this, so a
stored tool call, its result and its outcome (kept by the agent as tool-return metadata) are
interpreted in one place. Sessions written before outcomes were stored (or by freeact) have no
metadata; their outcome is then ``None`` and readers show the plain result. Event records
(``event_record.py``: a turn's error, and the turn a failed model request took back) become the
entries of the messages they keep, then an ``ErrorEntry``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest

from freeact_tui.events import Decision
from freeact_tui.store import checked_read
from freeact_tui.store.compaction import CompactionTiming, compaction_info, summary_text
from freeact_tui.store.decision_record import decision_from_record
from freeact_tui.store.event_record import IMAGE_NOTE, KERNEL_DIED, event_of, withdrawn_messages
from freeact_tui.store.meta_keys import NUDGE_KEY, SWITCH_KEY, TEXT_ACTIONS_KEY
from freeact_tui.store.prompt_record import (
    CANCELLED_NOTE,
    PROMPT_KEY,
    TypedPrompt,
    added_items,
    response_cut,
    split_prompt,
)
from freeact_tui.store.rewind_file import RewindMark
from freeact_tui.store.step_record import StepRecord, stored_text_actions
from freeact_tui.toolcalls import CODE_TOOL, ToolCall, call_from_record, call_from_tool


@dataclass(frozen=True)
class SystemEntry:
    text: str


@dataclass(frozen=True)
class PromptEntry:
    text: str
    content: Any = None
    """The prompt as stored (a string or a list of multimodal parts)."""
    typed: TypedPrompt | None = None
    """What the user typed, and the ``!command`` runs the agent put before it (``text`` when ``None``)."""

    @property
    def shown(self) -> TypedPrompt:
        return self.typed if self.typed is not None else TypedPrompt(self.text)


@dataclass(frozen=True)
class SwitchEntry:
    """The session switched to text actions here (the model's tool calls did not work)."""

    reason: str


@dataclass(frozen=True)
class CutEntry:
    """The response above was cut: the user cancelled the turn (or quit) while the model wrote it."""


@dataclass(frozen=True)
class ThoughtEntry:
    text: str


@dataclass(frozen=True)
class AnswerEntry:
    text: str


@dataclass(frozen=True)
class NudgeEntry:
    """The agent told the model to act instead of ending the turn (a user message the user did not write)."""

    reason: str
    text: str
    """What the model was told."""


@dataclass(frozen=True)
class CallEntry:
    """A tool call of the model, typed (a code action, a subagent task, a JSON tool call)."""

    corr_id: str
    tool_name: str
    args: dict[str, Any]
    call: ToolCall


@dataclass(frozen=True)
class ResultEntry:
    """The result of a call: its text, its outcome (``ok``/``rejected``/``error``/``interrupted``) if stored."""

    corr_id: str
    tool_name: str
    text: str
    record: StepRecord = StepRecord()
    """What the app stored with it (freeact stores nothing: ``StepRecord()``)."""
    retry: bool = False
    """A retry prompt (pydantic-ai asked the model to fix a call), always an error."""
    part_outcome: str = "success"
    """pydantic-ai's own outcome of the return part (``success``, ``failed``, ``denied``)."""

    @property
    def outcome(self) -> str | None:
        return self.record.outcome

    @property
    def is_error(self) -> bool:
        return self.retry or self.outcome in ("error", "interrupted", "rejected")

    @property
    def approvals(self) -> list[ApprovalRecord]:
        """How the call and its parts were decided, in order (stored by this app; freeact stores none)."""
        return [r for r in (ApprovalRecord.parse(item) for item in self.record.approvals) if r is not None]

    @property
    def rejected(self) -> bool:
        return self.outcome == "rejected"

    @property
    def images(self) -> list[Path]:
        """The images a code action made, as the log linked them (freeact names them in the text)."""
        if self.record.images:
            return [Path(p) for p in self.record.images]
        if self.outcome is None and self.tool_name == CODE_TOOL:
            return [Path(p) for p in _FREEACT_IMAGE.findall(self.text)]
        return []

    @property
    def truncated(self) -> tuple[bool, Path | None]:
        """Whether the output was over the inline limit (the model got a head and tail), and where it all is."""
        path = self.record.result_path
        return self.record.truncated, Path(path) if path else None

    def whole_output(self) -> str | None:
        """The whole of an output over the inline limit, as the log showed it (``None``: not saved, or gone)."""
        over, path = self.truncated
        if not over or path is None:
            return None
        try:
            return checked_read.read_own(path, limit=MAX_WHOLE_OUTPUT).decode("utf-8", errors="replace")
        except OSError:
            return None

    @property
    def kernel_output(self) -> str:
        """A code action's output as the log showed it: without what names its images for the model
        (and what follows them) or the attached images themselves."""
        if self.record.images:
            at = self.text.find(f"{IMAGE_NOTE}{self.record.images[0]}]")
            return self.text[:at].rstrip("\n") if at >= 0 else self.text
        if self.outcome is None and self.tool_name == CODE_TOOL:
            return _FREEACT_IMAGE_LINE.sub("", self.text).rstrip("\n")
        return self.text


@dataclass(frozen=True)
class ApprovalRecord:
    """One decision on a call or on a part of it: ``call`` is ``None`` for the model's call itself."""

    kind: str
    call: ToolCall | None
    decision: Decision
    skip_permissions: bool = False
    """Allowed by ``--skip-permissions`` rather than by a rule."""

    @classmethod
    def parse(cls, item: Any) -> ApprovalRecord | None:
        if not isinstance(item, Mapping) or not isinstance(item.get("call"), dict):
            return None
        kind = item["call"].get("kind")
        read = decision_from_record(item)
        if not isinstance(kind, str) or read is None:
            return None
        decision, skip = read
        return cls(kind, call_from_record(item["call"]), decision, skip_permissions=skip)


@dataclass(frozen=True)
class CompactionEntry:
    """Where the context was compacted: the messages before were summarised for the model (they stay here)."""

    summary: str
    replaced: int
    tokens_before: int
    tokens_after: int
    timing: CompactionTiming | None = None
    """How it ran (the line the live log showed above the summary); records of earlier versions have none."""


@dataclass(frozen=True)
class RewindEntry:
    """Where the conversation was rewound: what was withdrawn there, and where it is kept."""

    mark: RewindMark

    @property
    def text(self) -> str:
        return self.mark.describe()


@dataclass(frozen=True)
class ErrorEntry:
    """The turn ended on this error (``AgentError``'s ``kind`` and ``message``); ``corr_id`` names the
    action it came from (a kernel that died), empty for the turn's own."""

    kind: str
    message: str
    corr_id: str = ""


@dataclass(frozen=True)
class NoticeEntry:
    """A notice the app showed in the log about the session (an undo), kept as an event record."""

    title: str
    text: str


@dataclass(frozen=True)
class OtherEntry:
    kind: str
    text: str


Entry = (
    SystemEntry
    | PromptEntry
    | ThoughtEntry
    | AnswerEntry
    | CallEntry
    | ResultEntry
    | CompactionEntry
    | RewindEntry
    | NudgeEntry
    | CutEntry
    | SwitchEntry
    | ErrorEntry
    | NoticeEntry
    | OtherEntry
)


MAX_WHOLE_OUTPUT = 4 * 1024 * 1024
"""Past this, a resumed log shows the head and tail the model got instead of the saved file."""
_FREEACT_IMAGE = re.compile(r"^!\[Image\]\((.+)\)$", re.MULTILINE)  # freeact's CodeExecutionOutput.format()
_FREEACT_IMAGE_LINE = re.compile(r"\n?^!\[Image\]\(.+\)$", re.MULTILINE)


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MB"


def content_text(content: Any) -> str:
    """Text of a prompt or tool result; images and other files become a short placeholder."""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        return "\n".join(content_text(item) for item in content)
    data = getattr(content, "data", None)
    if isinstance(data, bytes):
        return f"[{getattr(content, 'media_type', 'binary')}, {_size(len(data))}]"
    url = getattr(content, "url", None)
    if isinstance(url, str):
        return f"[{getattr(content, 'kind', 'file')}: {url}]"
    text = getattr(content, "content", None)
    if isinstance(text, str):
        return text
    return json.dumps(content, indent=2, ensure_ascii=False, default=str)


def _args(part: Any) -> dict[str, Any]:
    try:
        args = part.args_as_dict()
    except Exception:  # arguments the model wrote as broken JSON: keep them as text
        return {"arguments": str(part.args)}
    return args if isinstance(args, dict) else {"arguments": args}




def _text_actions(message: ModelMessage) -> Iterator[Entry]:
    """The code blocks a text-protocol results message reports, as calls with their results."""
    for block in stored_text_actions(getattr(message, "metadata", None)):
        if block.code is None:
            continue
        args = {"code": block.code}
        yield CallEntry(block.id, CODE_TOOL, args, call_from_tool(CODE_TOOL, args))
        yield ResultEntry(block.id, CODE_TOOL, block.output, block.step)
        if block.step.kernel_died:
            yield ErrorEntry("kernel", KERNEL_DIED, block.id)


def walk(messages: Sequence[ModelMessage], rewinds: Sequence[RewindMark] = ()) -> Iterator[Entry]:
    """The conversation as typed entries, in order; ``rewinds`` (``LoadedHistory.rewinds``) are
    placed where they happened.

    A text-protocol results message (a user message to the model) becomes the calls and results it
    reports, as a tool-call session's would.
    """
    marks = sorted(rewinds, key=lambda m: m.at)
    for index, message in enumerate(messages):
        while marks and marks[0].at <= index:
            yield RewindEntry(marks.pop(0))
        yield from _entries(message)
    yield from (RewindEntry(m) for m in marks)


def _entries(message: ModelMessage) -> Iterator[Entry]:
    """The entries of one message."""
    info = compaction_info(message)
    if info is not None:
        yield CompactionEntry(
            summary_text(message), info.replaced, info.tokens_before, info.tokens_after, info.timing
        )
        return
    event = event_of(message)
    if event is not None:
        yield from _event_entries(event)
        return
    parts: Sequence[Any] = message.parts  # duck-typed: pydantic-ai has many part types
    if isinstance(message, ModelRequest):
        marked = _marked_entries(message)
        if marked is not None:
            yield from marked
            return
        for part in parts:
            yield from _request_part(part, message)
    else:
        for part in parts:
            yield from _response_part(part)
        texts = [p.content for p in parts if getattr(p, "part_kind", "") == "text"]
        if response_cut(message.metadata, texts):
            yield CutEntry()


def _event_entries(event: dict[str, Any]) -> Iterator[Entry]:
    """An app event stored in the session: an error (after what it took back) or a notice."""
    if event["kind"] == "error":
        for taken_back in withdrawn_messages(event):
            yield from _entries(taken_back)
        yield ErrorEntry(str(event.get("error", "internal")), str(event.get("message", "")))
    elif event["kind"] == "notice":
        yield NoticeEntry(str(event.get("title", "")), str(event.get("text", "")))
    # a kind of a later version: nothing this one can show


def _marked_entries(message: ModelRequest) -> list[Entry] | None:
    """The entries of a request the app wrote (a protocol switch, text-protocol results, a nudge), or
    ``None`` for a request of the user's own."""
    meta = message.metadata
    if not isinstance(meta, dict):
        return None
    entries: list[Entry] = [SwitchEntry(str(meta[SWITCH_KEY]))] if SWITCH_KEY in meta else []
    if TEXT_ACTIONS_KEY in meta:
        return [*entries, *_text_actions(message)]
    if entries:
        return entries  # what the model was told about the switch: not the user's words
    if NUDGE_KEY in meta:
        told = "\n".join(content_text(getattr(p, "content", "")) for p in message.parts)
        return [NudgeEntry(str(meta[NUDGE_KEY]), told)]
    return None


def _request_part(part: Any, message: ModelRequest) -> Iterator[Entry]:
    kind = getattr(part, "part_kind", "")
    if kind == "system-prompt":
        yield SystemEntry(part.content)
    elif kind == "user-prompt":
        yield PromptEntry(content_text(part.content), part.content, _typed(part.content, message.metadata))
    elif kind in ("tool-return", "retry-prompt") and hasattr(part, "tool_name"):
        record = StepRecord.of_part(part)
        yield ResultEntry(
            part.tool_call_id,
            part.tool_name or "",
            content_text(part.content),
            record,
            retry=kind == "retry-prompt",
            part_outcome=str(getattr(part, "outcome", "success")),
        )
        if record.kernel_died:
            yield ErrorEntry("kernel", KERNEL_DIED, part.tool_call_id)
    elif hasattr(part, "content"):
        yield OtherEntry(kind, content_text(part.content))


def _response_part(part: Any) -> Iterator[Entry]:
    kind = getattr(part, "part_kind", "")
    if kind == "thinking":
        if part.content:
            yield ThoughtEntry(part.content)
    elif kind == "text":
        if part.content != CANCELLED_NOTE:  # said to the model only
            yield AnswerEntry(part.content)
    elif hasattr(part, "args_as_dict"):
        args = _args(part)
        yield CallEntry(part.tool_call_id, part.tool_name, args, call_from_tool(part.tool_name, args))
    elif hasattr(part, "content"):
        yield OtherEntry(kind, content_text(part.content))


def _typed(content: Any, metadata: Any) -> TypedPrompt:
    """What the user typed of a stored prompt (the agent's notes and shell runs taken off)."""
    if isinstance(content, str):
        return split_prompt(content, metadata)
    items = list(content)
    added = added_items(metadata)
    head = "\n\n".join(i for i in items[:added] if isinstance(i, str))
    shell = split_prompt(head + "\n\n", {PROMPT_KEY: {"added": len(head) + 2}}).shell if head else ()
    return TypedPrompt(content_text(items[added:]), shell)


__all__ = [
    "AnswerEntry",
    "ApprovalRecord",
    "CallEntry",
    "CompactionEntry",
    "CutEntry",
    "Entry",
    "ErrorEntry",
    "NoticeEntry",
    "NUDGE_KEY",
    "NudgeEntry",
    "OtherEntry",
    "PromptEntry",
    "ResultEntry",
    "RewindEntry",
    "SWITCH_KEY",
    "SwitchEntry",
    "SystemEntry",
    "ThoughtEntry",
    "content_text",
    "walk",
]
