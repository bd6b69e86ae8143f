"""Generated sessions for tests: turns of every kind the agent stores, and a damaged line."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.toolcalls import CODE_TOOL

KINDS = ("text", "thought", "code", "error", "interrupted", "two-calls")


def turn(i: int, kind: str) -> list[ModelMessage]:
    """The messages of one turn of ``kind`` (the agent's own shapes: outcomes in the returns' metadata)."""
    prompt = ModelRequest(parts=[UserPromptPart(f"question {i}")])
    answer = ModelResponse(parts=[TextPart(f"answer {i}")])
    if kind == "text":
        return [prompt, answer]
    if kind == "thought":
        return [prompt, ModelResponse(parts=[ThinkingPart(f"thinking {i}"), TextPart(f"answer {i}")])]
    calls = 2 if kind == "two-calls" else 1
    outcome = {"error": "error", "interrupted": "interrupted"}.get(kind, "ok")
    call_ids = [f"c{i}-{n}" for n in range(calls)]
    return [
        prompt,
        ModelResponse(parts=[ToolCallPart(CODE_TOOL, {"code": f"print({i})"}, c) for c in call_ids]),
        ModelRequest(
            parts=[ToolReturnPart(CODE_TOOL, f"{i}\n", c, metadata={"outcome": outcome}) for c in call_ids]
        ),
        answer,
    ]


def damage(path: Path, line: int, how: str) -> None:
    """Replace one line of the file (counted from 0, modulo the lines) by a damaged one."""
    lines = path.read_bytes().split(b"\n")[:-1]
    bad = {
        "json": b'{"v": 1, "message": {',
        "envelope": b'{"v": 2, "message": {}, "meta": {"ts": "x"}}',
        "message": b'{"v": 1, "message": {"kind": "request", "parts": 7}, "meta": {"ts": "x"}}',
    }[how]
    lines[line % len(lines)] = bad
    path.write_bytes(b"\n".join(lines) + b"\n")
