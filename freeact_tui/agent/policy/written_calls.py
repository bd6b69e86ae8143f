"""Tool calls a model wrote into its reply as text, recovered as real calls (``auto`` on tool calls).

Small models often write a call instead of making it, in two shapes:

- an object ``{"name": "filesystem_write_text_file", "arguments": {...}}`` in a ```json fence,
  bare, or in ``<tool_call>`` tags, and often not as valid JSON (single quotes, Python
  triple-quoted strings). An object counts only if its ``name`` is a tool offered in that request
  and it has arguments (an object, or a string holding one); it is decoded as JSON, else as a
  Python literal.
- a Python call of the tool as if it were a function, ``ipybox_execute_ipython_cell("!wc -l
  rows.csv")``, alone or in a code block (``out = ipybox_execute_ipython_cell(...)``,
  ``print(out)``). It counts only if the name is an offered tool, every argument is a literal
  (positional ones are the tool's parameters in their order) and the call is its line's statement
  (alone, assigned or printed); ``tool(code)`` with a variable, as in a sentence explaining the
  tool, and ``with tool("a.txt") as f:`` in example code are not calls. Nobody shows a user an example that calls the
  agent's own tool: such code is a call the model meant to make.

A server may turn valid objects into calls; the rest reach the app as text. Anything else stays text.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

_LITERALS = re.compile(r"\b(true|false|null)\b")
_PY = {"true": "True", "false": "False", "null": "None"}


def _objects(text: str) -> Iterator[tuple[int, str]]:
    """Every top-level ``{…}`` span of ``text`` with its start (strings, triple-quoted ones included, are skipped over)."""
    i, n = 0, len(text)
    while i < n:
        if text[i] != "{":
            i += 1
            continue
        j = _closing(text, i)
        if j is None:  # unbalanced: no object from here on
            return
        yield i, text[i : j + 1]
        i = j + 1


def _closing(text: str, i: int) -> int | None:
    """Where the bracket opened at ``text[i]`` closes (strings skipped over), ``None`` if it does not."""
    opening = text[i]
    closing = {"{": "}", "(": ")"}[opening]
    n = len(text)
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
        if c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return None


def decode_object(span: str) -> Any:
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


def call_arguments(call: dict[str, Any]) -> dict[str, Any] | None:
    args = call.get("arguments", call.get("parameters"))
    if isinstance(args, str):
        decoded = decode_object(args)
        args = decoded if isinstance(decoded, dict) else None
    if isinstance(args, dict) and all(isinstance(k, str) for k in args):
        return {k: _dedent(v) if isinstance(v, str) else v for k, v in args.items()}
    return None


def _dedent(value: str) -> str:
    """A triple-quoted string starts with a newline and may be indented: code needs neither."""
    return textwrap.dedent(value).strip("\n") if value.startswith("\n") else value


ToolParameters = Mapping[str, Sequence[str]]
"""The offered tools: name → parameter names in their order (positional arguments of a Python-form call)."""


_STATEMENT = re.compile(r"\s*(?:[A-Za-z_]\w*\s*=\s*|print\(\s*|<\w+>\s*|`)?")
"""What may precede a Python-form call on its line: it is the statement (``out = tool(…)``,
``print(tool(…))``), not a part of example code (``with tool(…) as f:``)."""


def _python_calls(text: str, tools: ToolParameters) -> Iterator[tuple[int, int, ToolCallPart]]:
    """The Python-form calls of offered tools in ``text``: start, end and the call."""
    if not tools:
        return
    # A reply that defines a tool as a function (``def filesystem_read_text_file(path): ...``) is
    # example code: its calls of that name are not calls.
    stubbed = {name for name in tools if re.search(rf"\bdef\s+{re.escape(name)}\s*\(", text)}
    names = "|".join(re.escape(name) for name in sorted(set(tools) - stubbed, key=len, reverse=True))
    if not names:
        return
    pattern = re.compile(rf"(?<![\w.])({names})\s*\(")
    at = 0
    while (match := pattern.search(text, at)) is not None:
        opened = match.end() - 1
        closed = _closing(text, opened)
        if closed is None:
            return
        line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
        call = None
        if _STATEMENT.fullmatch(line):
            call = _python_call(match.group(1), text[match.start() : closed + 1], tools[match.group(1)])
        if call is None:
            at = opened + 1  # look inside: ``print(tool("x"))``
            continue
        yield match.start(), closed + 1, call
        at = closed + 1


def _python_call(name: str, source: str, parameters: Sequence[str]) -> ToolCallPart | None:
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    call = tree.body
    if not isinstance(call, ast.Call) or len(call.args) > len(parameters):
        return None
    if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Dict):
        # ``tool({"code": "..."})``: the JSON arguments object passed whole, keys the tool's parameters
        whole = _arguments_object(call.args[0], name, parameters)
        if whole is not None:
            return ToolCallPart(name, whole, tool_call_id=f"written_{uuid.uuid4().hex[:16]}")
    given = [*zip(parameters, call.args, strict=False), *((k.arg, k.value) for k in call.keywords)]
    if not given or any(key is None for key, _ in given):  # no arguments, or ``**kwargs``
        return None
    args: dict[str, Any] = {}
    for key, node in given:
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None  # a variable or an expression: not a call the model meant to make
        args[str(key)] = _dedent(value) if isinstance(value, str) else value
    return ToolCallPart(name, args, tool_call_id=f"written_{uuid.uuid4().hex[:16]}")


def _arguments_object(node: ast.Dict, name: str, parameters: Sequence[str]) -> dict[str, Any] | None:
    """A dict literal whose keys are all parameters of the tool, as the call's arguments (else ``None``).

    Also the whole JSON call, ``{"name": tool, "arguments": {...}}``, passed to the tool it names.
    """
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, dict) and set(value) == {"name", "arguments"} and value["name"] == name:
        value = value["arguments"]  # #30 held-out biggest_city: twice so, both broken, auto gave up
    if not isinstance(value, dict):
        return None
    if not value or not all(isinstance(k, str) and k in parameters for k in value):
        return None
    return {k: _dedent(v) if isinstance(v, str) else v for k, v in value.items()}


def _parameters(tools: ToolParameters | Collection[str]) -> ToolParameters:
    return tools if isinstance(tools, Mapping) else {name: () for name in tools}


def written_tool_calls(text: str, tools: ToolParameters | Collection[str]) -> list[ToolCallPart]:
    """The calls of offered ``tools`` the model wrote in ``text``, in order (objects and Python-form calls).

    ``tools``: the offered tools' names, or a mapping of each name to its parameter names in order
    (without it, a Python-form call takes keyword arguments only).
    """
    return [call for _, _, call in _found(text, _parameters(tools))]


def _found(text: str, offered: ToolParameters) -> list[tuple[int, int, ToolCallPart]]:
    """The written calls with their spans in ``text``, in order."""
    found = list(_python_calls(text, offered))
    spans = [(start, end) for start, end, _ in found]
    for start, span in _objects(text):
        if any(s <= start < e for s, e in spans):
            continue  # an argument of a Python-form call
        call = decode_object(span)
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            call = call["function"]  # OpenAI's shape: {"type": "function", "function": {...}}
        if not isinstance(call, dict) or call.get("name") not in offered:
            continue
        args = call_arguments(call)
        if args is not None:
            part = ToolCallPart(call["name"], args, tool_call_id=f"written_{uuid.uuid4().hex[:16]}")
            found.append((start, start + len(span), part))
    return sorted(found, key=lambda item: item[0])


_WRAPPING = re.compile(r"```[\w-]*|</?(?:tool_call|tools|function_call|tool_response)>|[\s:;,.]")


def _only_calls(text: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether ``text`` is nothing but the calls (in fences or tags): no prose of its own to keep."""
    rest, at = [], 0
    for start, end in spans:
        rest.append(text[at:start])
        at = max(at, end)
    rest.append(text[at:])
    return not _WRAPPING.sub("", "".join(rest))


def with_written_calls(
    response: ModelResponse, tools: ToolParameters | Collection[str]
) -> ModelResponse | None:
    """The response with the calls its text holds as real calls.

    Its text is kept when it says more than the calls (prose around a Python-form call: what the
    model said stays in the session), dropped when it was only the calls. ``None`` if it already
    has calls or its text holds none.
    """
    if any(isinstance(p, ToolCallPart) for p in response.parts):
        return None
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    found = _found(text, _parameters(tools))
    if not found:
        return None
    calls = [call for _, _, call in found]
    dropped = _only_calls(text, [(start, end) for start, end, _ in found])
    kept = [p for p in response.parts if not (dropped and isinstance(p, TextPart))]
    return replace(response, parts=[*kept, *calls], finish_reason="tool_call")


__all__ = ["ToolParameters", "call_arguments", "decode_object", "with_written_calls", "written_tool_calls"]
