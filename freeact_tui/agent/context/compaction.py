"""Compaction: older turns summarised by the model into one message, recent turns kept verbatim.

``ContextKeeper`` is mixed into the agent (through ``TurnLoop``). Before every model request it
brings the prepared history up to date (``PreparedHistory``), reports how full the window is
(``ContextUpdate``) and, past ``compact_threshold`` of the window, compacts first. ``compact()``
does the same by hand (``/compact [focus]``). The summary is written to the session file as a
compaction record (see ``store/compaction.py``); the earlier messages stay in the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.agent.cancels import as_sent
from freeact_tui.agent.context.window import (
    message_tokens,
    trim_text,
)
from freeact_tui.agent.model_call import ModelCallError
from freeact_tui.store import transcript as tr

if TYPE_CHECKING:
    pass

SUMMARY_INSTRUCTION = """\
You compact the history of a conversation between a user and a coding agent that acts by running \
Python code. Write a summary that lets the agent continue the work without the original messages. \
Keep: the user's goals and requests, every fact, name, number, path and decision established so \
far, files created or changed, what was tried and what failed, the current state, and open tasks. \
Write it as compact notes in the first person plural ("we found …"). Do not invent anything."""

KEEP_FRACTION = 0.3
"""At most this share of the window is kept verbatim (the most recent turns)."""
CHUNK_FRACTION = 0.5
"""The summariser reads at most this share of the window per request (longer histories: several passes)."""
RESULT_CHARS = 4000
"""A tool result is shown to the summariser with at most this many characters (head and tail)."""


SQUEEZE_CHARS = 2000
"""Characters a recent result keeps when the current turn alone would overfill the window and
trimming of old results is off (``trim_result_chars = 0``); at most an eighth of the window."""


class CompactionError(ModelCallError):
    """The history could not be compacted (it is unchanged); ``str(error)`` is meant for the user."""


def is_cut_point(messages: Sequence[ModelMessage], index: int) -> bool:
    """Whether the history can be cut before ``messages[index]`` without parting a tool call from its return."""
    if index <= 0 or index >= len(messages):
        return False
    msg = messages[index]
    if isinstance(msg, ModelResponse):
        return True
    return any(isinstance(p, UserPromptPart) for p in msg.parts) and not any(
        isinstance(p, ToolReturnPart) for p in msg.parts
    )


def choose_cut(messages: Sequence[ModelMessage], keep_tokens: int) -> int:
    """The index from which messages are kept verbatim: as many recent ones as fit ``keep_tokens``,
    at a turn start where possible, never between a tool call and its return. 0: nothing to compact."""
    suffix = 0
    best = 0
    turn_start = 0
    for index in range(len(messages) - 1, 0, -1):
        suffix += message_tokens(messages[index])
        if suffix > keep_tokens and best:
            break
        if is_cut_point(messages, index):
            if best == 0 or suffix <= keep_tokens:
                best = index
            if isinstance(messages[index], ModelRequest) and suffix <= keep_tokens:
                turn_start = index
    if turn_start and turn_start > 1:
        return turn_start
    return best if best > 1 else 0  # replacing only the first message by a summary gains nothing


def render_for_summary(messages: Sequence[ModelMessage]) -> str:
    """The conversation as plain text for the summariser (results cut to a head and tail), as the model
    had it: a request cancelled before any answer is not in it (``cancels.as_sent``)."""
    lines: list[str] = []
    for entry in tr.walk(as_sent(messages)):
        match entry:
            case tr.SystemEntry():
                continue
            case tr.CompactionEntry(summary=summary):  # an earlier compaction: its summary goes on
                lines.append(f"SUMMARY OF THE CONVERSATION BEFORE:\n{summary}")
            case tr.PromptEntry(text=text) | tr.NudgeEntry(text=text):
                lines.append(f"USER: {text}")
            case tr.ThoughtEntry():
                continue
            case tr.AnswerEntry(text=text):
                lines.append(f"AGENT: {text}")
            case tr.CallEntry(tool_name=name, args=args):
                code = args.get("code") if isinstance(args.get("code"), str) else None
                shown = code if code is not None else ", ".join(f"{k}={v!r}" for k, v in args.items())
                lines.append(
                    f"AGENT ACTION ({name}):\n{trim_text(shown, RESULT_CHARS, 'cut for the summary')}"
                )
            case tr.ResultEntry(text=text):
                lines.append(f"RESULT:\n{trim_text(text, RESULT_CHARS, 'cut for the summary')}")
            case tr.OtherEntry(text=text):
                lines.append(text)
    return "\n\n".join(lines)


def chunks(text: str, max_chars: int) -> list[str]:
    """``text`` in pieces of at most ``max_chars``, split at blank lines where possible."""
    out: list[str] = []
    while len(text) > max_chars:
        split = text.rfind("\n\n", 0, max_chars)
        split = split if split > max_chars // 2 else max_chars
        out.append(text[:split])
        text = text[split:].lstrip("\n")
    if text:
        out.append(text)
    return out


def plausible(response: ModelResponse, estimate: int) -> bool:
    """Whether a response's usage counts its whole context (some servers report none, or a placeholder)."""
    tokens = response.usage.input_tokens or 0
    return tokens > 0 and tokens >= estimate // 2


__all__ = [
    "SUMMARY_INSTRUCTION",
    "CompactionError",
    "plausible",
    "choose_cut",
    "chunks",
    "is_cut_point",
    "render_for_summary",
]
