"""A stored conversation as ACP ``session/update`` payloads, for ``session/load``.

One walk of the history (``store/transcript.py``, the same one the app's replay and ``sessions show``
read): prompts become ``user_message_chunk``s, thinking ``agent_thought_chunk``s, answers
``agent_message_chunk``s, each call a ``tool_call`` with its parts (as decided then) and its result a
``tool_call_update`` (``completed``, or ``failed`` when it was rejected, interrupted or an error) with
the content sent live: a code action's output and its images as image blocks.
Sessions written by freeact have no decisions stored; their calls show with their results.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from acp import (
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.schema import ImageContentBlock, ToolCallStatus, UserMessageChunk
from pydantic_ai.messages import ModelMessage

from freeact_tui.acp.toolcall_view import CallView, ToolContent, describe, note_content, output_content
from freeact_tui.acp.turn_updates import Update, decision_note
from freeact_tui.actions.code import REJECTED_PART_NOTE
from freeact_tui.store import transcript as tr
from freeact_tui.text.safe import visible
from freeact_tui.toolcalls import CODE_TOOL, call_record

ReplayUpdate = Update | UserMessageChunk


def _prompt(entry: tr.PromptEntry) -> Iterator[ReplayUpdate]:
    if isinstance(entry.content, str) or entry.content is None:  # what the user typed, not the agent's notes
        if entry.shown.typed:
            yield update_user_message_text(visible(entry.shown.typed))
        return
    items: Sequence[Any] = entry.content
    for item in items:
        data, media = getattr(item, "data", None), getattr(item, "media_type", "")
        if isinstance(data, bytes) and isinstance(media, str) and media.startswith("image/"):
            encoded = base64.b64encode(data).decode("ascii")
            yield update_user_message(ImageContentBlock(type="image", data=encoded, mime_type=media))
        else:
            text = tr.content_text(item)
            if text:
                yield update_user_message_text(visible(text))


def replay_updates(messages: Sequence[ModelMessage], working_dir: Path) -> Iterator[ReplayUpdate]:
    """The updates that show ``messages`` (a session's main history) in a client, in order."""
    views: dict[str, CallView] = {}
    for entry in tr.walk(messages):
        match entry:
            case tr.PromptEntry():
                yield from _prompt(entry)
            case tr.ThoughtEntry(text=text):
                yield update_agent_thought_text(visible(text))
            case tr.AnswerEntry(text=text) if text:
                yield update_agent_message_text(visible(text))
            case tr.CallEntry(corr_id=corr, args=args, call=call):
                view = describe(call, args, working_dir)
                views[corr] = view
                yield start_tool_call(
                    corr, view.title, kind=view.kind, status="pending", content=view.content,
                    locations=view.locations or None, raw_input=view.raw_input,
                )  # fmt: skip
            case tr.ResultEntry(corr_id=corr) if corr in views:
                yield from _result(entry, views[corr])
            case tr.CompactionEntry(replaced=replaced):
                yield update_agent_thought_text(
                    f"[{replaced} earlier messages were summarised for the model]"
                )
            case tr.RewindEntry():
                yield update_agent_thought_text(visible(f"[{entry.text}]"))


def _result(entry: tr.ResultEntry, view: CallView) -> Iterator[ReplayUpdate]:
    parts = [r for r in entry.approvals if r.call is not None]
    for n, record in enumerate(parts, 1):
        assert record.call is not None
        part = describe(record.call, call_record(record.call), Path("."))
        status: ToolCallStatus = (
            "failed" if not record.decision.approved else ("failed" if entry.is_error else "completed")
        )
        yield start_tool_call(
            f"{entry.corr_id}/{n}", part.title, kind=part.kind, status=status,
            content=[*part.content, *note_content(decision_note(record.decision))], raw_input=part.raw_input,
        )  # fmt: skip
    rejection = next((r.decision for r in entry.approvals if not r.decision.approved), None)
    note = note_content(decision_note(rejection)) if rejection is not None and entry.rejected else []
    yield update_tool_call(
        entry.corr_id,
        status="failed" if entry.is_error else "completed",
        content=[*view.content, *_output(entry), *note],
    )


def _output(entry: tr.ResultEntry) -> list[ToolContent]:
    """A result's content as it was sent live: a code action's kernel output and its images (not the
    lines that name the images for the model, nor the note on a rejected part), anything else's text."""
    if entry.tool_name != CODE_TOOL:
        return output_content(entry.text)
    whole = entry.whole_output()
    text = entry.kernel_output if whole is None else whole
    if any(not r.decision.approved for r in entry.approvals if r.call is not None):
        at = text.rfind(REJECTED_PART_NOTE)  # live, the output ended before the note to the model
        text = text[:at].rstrip() if at >= 0 else text
    return output_content(text, entry.images)


__all__ = ["ReplayUpdate", "replay_updates"]
