"""Render a session history for people: plain text (``sessions show``), markdown or JSON (``export``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse

ExportFormat = Literal["md", "json", "text"]

CODE_TOOL = "ipybox_execute_ipython_cell"
SUBAGENT_TOOL = "subagent_task"


@dataclass(frozen=True)
class Block:
    """One readable piece of a conversation: a heading and a body (``lang`` set for code)."""

    kind: str
    heading: str
    body: str
    lang: str | None = None


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MB"


def _content_text(content: Any) -> str:
    """Text of a prompt or tool result; images and other files become a short placeholder."""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        return "\n".join(_content_text(item) for item in content)
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


def _tool_call_block(part: Any) -> Block:
    args: dict[str, Any] = part.args_as_dict()
    if part.tool_name == CODE_TOOL and isinstance(args.get("code"), str):
        return Block("code", "Code action", args["code"], "python")
    if part.tool_name == SUBAGENT_TOOL and isinstance(args.get("prompt"), str):
        return Block("tool_call", "Subagent task", args["prompt"])
    return Block(
        "tool_call", f"Tool call: {part.tool_name}", json.dumps(args, indent=2, ensure_ascii=False), "json"
    )


def blocks(messages: Sequence[ModelMessage], *, include_system: bool = True) -> Iterator[Block]:
    """The conversation as a sequence of readable blocks, in order."""
    for message in messages:
        parts: Sequence[Any] = message.parts  # duck-typed: pydantic-ai has many part types
        for part in parts:
            kind = getattr(part, "part_kind", "")
            if isinstance(message, ModelRequest):
                if kind == "system-prompt":
                    if include_system:
                        yield Block("system", "System prompt", part.content)
                elif kind == "user-prompt":
                    yield Block("user", "User", _content_text(part.content))
                elif kind in ("tool-return", "retry-prompt") and hasattr(part, "tool_name"):
                    outcome = getattr(part, "outcome", "success")
                    label = "Tool result" if outcome == "success" else f"Tool result ({outcome})"
                    yield Block("tool_result", f"{label}: {part.tool_name}", _content_text(part.content))
                elif hasattr(part, "content"):
                    yield Block("other", kind.replace("-", " ").capitalize(), _content_text(part.content))
            elif isinstance(message, ModelResponse):
                if kind == "thinking":
                    if part.content:
                        yield Block("thinking", "Thinking", part.content)
                elif kind == "text":
                    yield Block("response", "Assistant", part.content)
                elif hasattr(part, "args_as_dict"):
                    yield _tool_call_block(part)
                elif hasattr(part, "content"):
                    yield Block("other", kind.replace("-", " ").capitalize(), _content_text(part.content))


def render_text(messages: Sequence[ModelMessage], *, include_system: bool = False) -> str:
    """Plain text for a terminal: a ``── Heading`` rule before each block, bodies as they are."""
    out = []
    for block in blocks(messages, include_system=include_system):
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
    messages: Sequence[ModelMessage], *, title: str | None = None, include_system: bool = True
) -> str:
    """Markdown: a section per block; code, tool calls and tool results fenced, thinking quoted."""
    out = [f"# {title}\n"] if title else []
    for block in blocks(messages, include_system=include_system):
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


def render(messages: Sequence[ModelMessage], fmt: ExportFormat, *, title: str | None = None) -> str:
    """Render in one of the export formats.

    Raises:
        ValueError: an unknown format.
    """
    if fmt == "md":
        return render_markdown(messages, title=title)
    if fmt == "json":
        return render_json(messages)
    if fmt == "text":
        return render_text(messages, include_system=True)
    raise ValueError(f"Unknown export format {fmt!r} (expected md, json or text)")
