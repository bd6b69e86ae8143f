"""Tool calls a model wrote into its reply as text, recovered as real calls (``auto`` on tool calls).

Small models often write a call instead of making it: ``{"name": "filesystem_write_text_file",
"arguments": {...}}`` in a ```json fence, bare, or in ``<tool_call>`` tags, and often not as valid
JSON (single quotes, Python triple-quoted strings). A server may turn valid ones into calls; the
rest reach the app as text. Here an object counts only if its ``name`` is a tool offered in that
request and it has arguments (an object, or a string holding one); it is decoded as JSON, else as
a Python literal. Anything else stays text.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
import uuid
from collections.abc import Collection, Iterator
from dataclasses import replace
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

_LITERALS = re.compile(r"\b(true|false|null)\b")
_PY = {"true": "True", "false": "False", "null": "None"}


def _objects(text: str) -> Iterator[str]:
    """Every top-level ``{…}`` span of ``text`` (strings, triple-quoted ones included, are skipped over)."""
    i, n = 0, len(text)
    while i < n:
        if text[i] != "{":
            i += 1
            continue
        depth, j, quote = 0, i, ""
        while j < n:
            if quote:
                if text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(quote, j):
                    j += len(quote)
                    quote = ""
                    continue
                j += 1
                continue
            c = text[j]
            if c in "\"'":
                quote = c * 3 if text.startswith(c * 3, j) else c
                j += len(quote)
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= n:  # unbalanced: no object from here on
            return
        yield text[i : j + 1]
        i = j + 1


def _decode(span: str) -> Any:
    try:
        return json.loads(span)
    except ValueError:
        pass
    for candidate in (span, _LITERALS.sub(lambda m: _PY[m.group(1)], span)):
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    return None


def _arguments(call: dict[str, Any]) -> dict[str, Any] | None:
    args = call.get("arguments", call.get("parameters"))
    if isinstance(args, str):
        decoded = _decode(args)
        args = decoded if isinstance(decoded, dict) else None
    if isinstance(args, dict) and all(isinstance(k, str) for k in args):
        return {k: _dedent(v) if isinstance(v, str) else v for k, v in args.items()}
    return None


def _dedent(value: str) -> str:
    """A triple-quoted string starts with a newline and may be indented: code needs neither."""
    return textwrap.dedent(value).strip("\n") if value.startswith("\n") else value


def written_tool_calls(text: str, tools: Collection[str]) -> list[ToolCallPart]:
    """The calls of offered ``tools`` the model wrote in ``text``, in order."""
    calls: list[ToolCallPart] = []
    for span in _objects(text):
        call = _decode(span)
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            call = call["function"]  # OpenAI's shape: {"type": "function", "function": {...}}
        if not isinstance(call, dict) or call.get("name") not in tools:
            continue
        args = _arguments(call)
        if args is not None:
            calls.append(ToolCallPart(call["name"], args, tool_call_id=f"written_{uuid.uuid4().hex[:16]}"))
    return calls


def with_written_calls(response: ModelResponse, tools: Collection[str]) -> ModelResponse | None:
    """The response with the calls its text holds as real calls (its text dropped: it was the calls).

    ``None`` if it already has calls or its text holds none.
    """
    if any(isinstance(p, ToolCallPart) for p in response.parts):
        return None
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    calls = written_tool_calls(text, tools)
    if not calls:
        return None
    kept = [p for p in response.parts if not isinstance(p, TextPart)]
    return replace(response, parts=[*kept, *calls], finish_reason="tool_call")


__all__ = ["with_written_calls", "written_tool_calls"]
