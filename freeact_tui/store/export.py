"""Render a session history for people: plain text (``sessions show``), markdown or JSON (``export``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from freeact_tui.store import transcript as tr
from freeact_tui.store.rewind_file import RewindMark
from freeact_tui.text.safe import visible
from freeact_tui.toolcalls import CodeAction, SubagentTask

ExportFormat = Literal["md", "json", "text"]


@dataclass(frozen=True)
class Block:
    """One readable piece of a conversation: a heading and a body (``lang`` set for code)."""

    kind: str
    heading: str
    body: str
    lang: str | None = None


def _call_block(entry: tr.CallEntry) -> Block:
    match entry.call:
        case CodeAction(code=code):
            return Block("code", "Code action", code, "python")
        case SubagentTask(prompt=prompt):
            return Block("tool_call", "Subagent task", prompt)
    return Block(
        "tool_call",
        f"Tool call: {entry.tool_name}",
        json.dumps(entry.args, indent=2, ensure_ascii=False),
        "json",
    )


def blocks(
    messages: Sequence[ModelMessage], *, include_system: bool = True, rewinds: Sequence[RewindMark] = ()
) -> Iterator[Block]:
    """The conversation as readable blocks, in order (``rewinds`` marked where they happened).

    Control characters are shown as symbols: a stored session printed or exported must not drive
    the terminal it is read in.
    """
    for block in _raw_blocks(messages, include_system=include_system, rewinds=rewinds):
        yield replace(block, heading=visible(block.heading, multiline=False), body=visible(block.body))


def _raw_blocks(
    messages: Sequence[ModelMessage], *, include_system: bool, rewinds: Sequence[RewindMark]
) -> Iterator[Block]:
    for entry in tr.walk(messages, rewinds):
        match entry:
            case tr.SystemEntry(text=text):
                if include_system:
                    yield Block("system", "System prompt", text)
            case tr.PromptEntry(text=text):
                yield Block("user", "User", text)
            case tr.ResultEntry():
                label = (
                    "Tool result"
                    if entry.part_outcome == "success"
                    else f"Tool result ({entry.part_outcome})"
                )
                yield Block("tool_result", f"{label}: {entry.tool_name}", entry.text)
            case tr.ThoughtEntry(text=text):
                yield Block("thinking", "Thinking", text)
            case tr.AnswerEntry(text=text):
                yield Block("response", "Assistant", text)
            case tr.CallEntry():
                yield _call_block(entry)
            case tr.CompactionEntry(summary=summary, replaced=replaced):
                heading = f"Context compacted ({replaced} earlier messages summarised for the model)"
                yield Block("other", heading, summary)
            case tr.RewindEntry(mark=mark):
                yield Block("other", "Rewound", mark.describe())
            case tr.NudgeEntry(reason=reason, text=text):
                yield Block("other", f"Nudge ({reason})", text)
            case tr.ErrorEntry(kind=kind, message=message):
                yield Block("other", f"Error ({kind})", message)
            case tr.OtherEntry(kind=kind, text=text):
                yield Block("other", kind.replace("-", " ").capitalize(), text)


def render_text(
    messages: Sequence[ModelMessage], *, include_system: bool = False, rewinds: Sequence[RewindMark] = ()
) -> str:
    """Plain text for a terminal: a ``── Heading`` rule before each block, bodies as they are."""
    out = []
    for block in blocks(messages, include_system=include_system, rewinds=rewinds):
        body = block.body if block.kind not in ("code", "tool_result") else _indent(block.body)
        out.append(f"── {block.heading} " + "─" * max(3, 60 - len(block.heading)) + f"\n{body.rstrip()}\n")
    return "\n".join(out)


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else line for line in text.splitlines())


def _fence(body: str, lang: str | None) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=2)
    ticks = "`" * (longest + 1)
    return f"{ticks}{lang or ''}\n{body.rstrip()}\n{ticks}"


def render_markdown(
    messages: Sequence[ModelMessage],
    *,
    title: str | None = None,
    include_system: bool = True,
    rewinds: Sequence[RewindMark] = (),
) -> str:
    """Markdown: a section per block; code, tool calls and tool results fenced, thinking quoted."""
    out = [f"# {visible(title, multiline=False)}\n"] if title else []
    for block in blocks(messages, include_system=include_system, rewinds=rewinds):
        if block.kind in ("code", "tool_call", "tool_result", "system"):
            body = _fence(block.body, block.lang)
        elif block.kind == "thinking":
            body = "\n".join(f"> {line}" if line else ">" for line in block.body.rstrip().splitlines())
        else:
            body = block.body.rstrip()
        out.append(f"## {block.heading}\n\n{body}\n")
    return "\n".join(out)


def render_json(messages: Sequence[ModelMessage]) -> str:
    """The messages as a JSON array in pydantic-ai's own format (binary content base64-encoded)."""
    return ModelMessagesTypeAdapter.dump_json(list(messages), indent=2).decode("utf-8") + "\n"


def render(
    messages: Sequence[ModelMessage],
    fmt: ExportFormat,
    *,
    title: str | None = None,
    rewinds: Sequence[RewindMark] = (),
) -> str:
    """Render in one of the export formats (JSON holds the messages only: the cut history).

    Raises:
        ValueError: an unknown format.
    """
    if fmt == "md":
        return render_markdown(messages, title=title, rewinds=rewinds)
    if fmt == "json":
        return render_json(messages)
    if fmt == "text":
        return render_text(messages, include_system=True, rewinds=rewinds)
    raise ValueError(f"Unknown export format {fmt!r} (expected md, json or text)")
