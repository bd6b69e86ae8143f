"""How full the model's context window is, and the history as it is sent to the model.

Public interface:

- ``resolve_window(model, configured)``: the window in tokens and where the figure came from (the
  ``context_window`` setting wins, then the provider's figure, then a table of known models, then a default).
- ``estimate_tokens(text)`` / ``message_tokens(message)``: rough token counts (about 4 characters a token;
  a fixed figure per image). Every number here that is not a provider's usage is an estimate.
- ``ContextBreakdown`` / ``breakdown(messages, tools)``: system prompt, tools, history, tool results, images.
- ``PreparedHistory``: the history sent to the model, kept incrementally (adjacent requests merged, old tool
  results and images trimmed to a head/tail with a marker); the stored history is never changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelSettingsDeltaPart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition

from freeact_tui.agent.cancels import contribution, is_close, kept_parts, open_requests
from freeact_tui.agent.model_stream import PreparedMessages
from freeact_tui.text.encodable import encodable

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
"""Estimated tokens of one image (Anthropic: about width*height/750, scaled to ~1.15 MP at most)."""
DEFAULT_WINDOW = 128_000

# Prefix of the model name -> window in tokens, longest prefix first when looked up.
KNOWN_WINDOWS: dict[str, int] = {
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3-5": 200_000,
    "claude-3": 200_000,
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini-2.5": 1_048_576,
    "gemini-2.0": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5": 1_048_576,
    "gemini-3": 1_048_576,
    "qwen": 32_768,
    "llama-3": 128_000,
    "mistral-large": 128_000,
    "deepseek": 128_000,
}


def resolve_window(model: Model | None, configured: int | None = None) -> tuple[int, str]:
    """The context window in tokens and its source (``setting``, ``provider``, ``table``, ``default``)."""
    if configured:
        return configured, "setting"
    if model is not None:
        try:
            figure = model.context_window
        except Exception:  # a model without a resolvable profile
            figure = None
        if isinstance(figure, int) and figure > 0:
            return figure, "provider"
        name = model.model_name.split(":")[-1].split("/")[-1].lower()
        for prefix in sorted(KNOWN_WINDOWS, key=len, reverse=True):
            if name.startswith(prefix):
                return KNOWN_WINDOWS[prefix], "table"
    return DEFAULT_WINDOW, "default"


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _content_tokens(content: Any) -> tuple[int, int]:
    """(text tokens, image tokens) of a prompt's or a tool result's content."""
    if isinstance(content, str):
        return estimate_tokens(content), 0
    if isinstance(content, BinaryContent | ImageUrl):
        return 0, IMAGE_TOKENS if getattr(content, "is_image", True) else estimate_tokens(str(content))
    if isinstance(content, list | tuple):
        text = images = 0
        for item in content:
            t, i = _content_tokens(item)
            text, images = text + t, images + i
        return text, images
    try:
        return estimate_tokens(json.dumps(content, default=str)), 0
    except (TypeError, ValueError):
        return estimate_tokens(str(content)), 0


@dataclass
class ContextBreakdown:
    """Estimated tokens by kind (system prompt, tool definitions, conversation, tool results, images)."""

    system: int = 0
    tools: int = 0
    history: int = 0
    tool_results: int = 0
    images: int = 0

    @property
    def total(self) -> int:
        return self.system + self.tools + self.history + self.tool_results + self.images

    def add(self, other: ContextBreakdown, sign: int = 1) -> None:
        self.system += sign * other.system
        self.tools += sign * other.tools
        self.history += sign * other.history
        self.tool_results += sign * other.tool_results
        self.images += sign * other.images


def message_breakdown(message: ModelMessage) -> ContextBreakdown:
    out = ContextBreakdown()
    parts: Sequence[Any] = message.parts
    for part in parts:
        if isinstance(part, SystemPromptPart):
            out.system += estimate_tokens(part.content)
        elif isinstance(part, ToolReturnPart | RetryPromptPart):
            text, images = _content_tokens(part.content)
            out.tool_results += text
            out.images += images
        elif isinstance(part, UserPromptPart):
            text, images = _content_tokens(part.content)
            out.history += text
            out.images += images
        elif isinstance(part, TextPart | ThinkingPart):
            out.history += estimate_tokens(part.content)
        elif isinstance(part, ToolCallPart):
            out.history += estimate_tokens(part.args_as_json_str()) + 4
        else:
            text, images = _content_tokens(getattr(part, "content", ""))
            out.history += text
            out.images += images
    return out


def message_tokens(message: ModelMessage) -> int:
    return message_breakdown(message).total


def tools_tokens(tools: Sequence[ToolDefinition]) -> int:
    return sum(
        estimate_tokens(t.name + (t.description or "") + json.dumps(t.parameters_json_schema)) for t in tools
    )


def breakdown(messages: Sequence[ModelMessage], tools: Sequence[ToolDefinition] = ()) -> ContextBreakdown:
    """The estimated tokens of a request with ``messages`` and ``tools``, by kind."""
    out = ContextBreakdown(tools=tools_tokens(tools))
    for message in messages:
        out.add(message_breakdown(message))
    return out


# -- trimming old results ---------------------------------------------------------------------------------

TRIM_MARK = "[… {cut} characters of this {what} trimmed from the context; {where} …]"
_TRIMMED = re.compile(r"\[… \d+ characters of this [^\]]* trimmed from the context;")


def trim_text(text: str, keep: int, where: str, what: str = "old result") -> str:
    """``text`` cut to its head and tail (``keep`` characters together) around a marker (a text cut
    before is left as it is: its marker names where the whole text is)."""
    if len(text) <= keep + 200 or _TRIMMED.search(text):  # trimming must save something worth the marker
        return text
    half = keep // 2
    marker = TRIM_MARK.format(cut=len(text) - 2 * half, where=where, what=what)
    return f"{text[:half]}\n\n{marker}\n\n{text[-half:]}"


def _trim_content(content: Any, keep: int, where: str) -> Any:
    if isinstance(content, str):
        return trim_text(content, keep, where)
    if isinstance(content, BinaryContent) and content.is_image:
        return f"[an image ({content.media_type}, {len(content.data)} bytes) was removed from the context; {where}]"
    if isinstance(content, list | tuple):
        return [_trim_content(item, keep, where) for item in content]
    return content


def trim_request(message: ModelRequest, keep: int, where: Callable[[ToolReturnPart], str]) -> ModelRequest:
    """``message`` with long tool results cut to a head and tail and images replaced by a note."""
    changed = False
    parts: list[ModelRequestPart] = []
    for part in message.parts:
        if isinstance(part, ToolReturnPart) and _trimmable(part.content, keep):
            part = replace(part, content=_trim_content(part.content, keep, where(part)))
            changed = True
        elif isinstance(part, UserPromptPart) and not isinstance(part.content, str):
            if any(isinstance(c, BinaryContent) and c.is_image for c in part.content):
                content = _trim_content(part.content, keep, "the image stays in the session")
                part = replace(part, content=[c for c in content if isinstance(c, str)] or "")
                changed = True
        parts.append(part)
    return replace(message, parts=parts) if changed else message


def _trimmable(content: Any, keep: int) -> bool:
    if isinstance(content, str):
        return len(content) > keep + 200 and not _TRIMMED.search(content)
    if isinstance(content, BinaryContent):
        return content.is_image
    if isinstance(content, list | tuple):
        return any(_trimmable(c, keep) for c in content)
    return False


# -- the prepared history ----------------------------------------------------------------------------------


_SPECIAL = (RetryPromptPart, RetryFeedbackPart, ModelSettingsDeltaPart)


class PreparedHistory:
    """The history as sent to the model, brought up to date with only what changed since the last request.

    Adjacent requests (left by a rejected or cancelled turn) are merged, so providers that need
    alternating roles accept it. Tool results and images older than ``trim_age`` prepared messages
    are trimmed (``trim_chars`` characters kept; 0 turns trimming off). ``rebuild()`` starts over
    (after a rollback or a compaction); ``update(history)`` otherwise only looks at new messages.
    """

    def __init__(
        self, *, trim_chars: int = 0, trim_age: int = 6, where: Callable[[ToolReturnPart], str] | None = None
    ) -> None:
        self.trim_chars = trim_chars
        self.trim_age = trim_age
        self._where = where or (lambda part: "the full text stays in the session")
        self.messages = PreparedMessages()
        self._special = 0  # messages with parts that make pydantic-ai prepare the whole history
        self._tokens: list[ContextBreakdown] = []
        self.sources: list[int] = []
        """For each prepared message, the index in the history of the (first) message it comes from."""
        self.total = ContextBreakdown()
        self._source_len = 0
        self._source: list[ModelMessage] | None = None
        self._generation = -1
        self._trimmed = 0  # prepared messages before this index are in their final, trimmed form

    def rebuild(self) -> None:
        self._generation = -1

    def update(self, history: list[ModelMessage], generation: int = 0) -> PreparedMessages:
        """The prepared messages for ``history`` (the same list object, updated in place)."""
        if generation != self._generation or history is not self._source or len(history) < self._source_len:
            self.messages, self._tokens, self.total = PreparedMessages(), [], ContextBreakdown()
            self.sources = []
            self._special = 0
            self._source, self._source_len, self._trimmed = history, 0, 0
            self._generation = generation
        for source, stored in enumerate(history[self._source_len :], start=self._source_len):
            msg = encodable(stored)  # a lone surrogate (a model's reply, a call id) never fails a request
            if isinstance(msg, ModelResponse) and is_close(msg):  # a cancelled request: ``agent/cancels.py``
                sends = contribution(msg)
                if not sends.asks:
                    self._withdraw(open_requests(history, source))
                if not sends.reply:
                    continue
            if isinstance(msg, ModelRequest):
                if msg.instructions is not None:
                    self.messages.instructions = msg.instructions
                if any(isinstance(p, _SPECIAL) for p in msg.parts):
                    self._special += 1
            if (
                isinstance(msg, ModelRequest)
                and self.messages
                and isinstance(self.messages[-1], ModelRequest)
            ):
                prev = self.messages[-1]
                merged = ModelRequest(
                    parts=[*prev.parts, *msg.parts], instructions=prev.instructions or msg.instructions
                )
                self._set(len(self.messages) - 1, merged)
            else:
                self.messages.append(msg)
                self.sources.append(source)
                tokens = message_breakdown(msg)
                self._tokens.append(tokens)
                self.total.add(tokens)
        self._source_len = len(history)
        self.messages.plain = self._special == 0
        if self.trim_chars > 0:
            limit = len(self.messages) - self.trim_age
            while self._trimmed < limit:
                msg = self.messages[self._trimmed]
                if isinstance(msg, ModelRequest):
                    trimmed = trim_request(msg, self.trim_chars, self._where)
                    if trimmed is not msg:
                        self._set(self._trimmed, trimmed)
                self._trimmed += 1
        return self.messages

    def squeeze(self, excess: int, keep: int) -> int:
        """Cut the tool results that are not trimmed yet (the recent ones: the current turn's), largest
        first, to ``keep`` characters each until about ``excess`` estimated tokens are saved; return the
        tokens saved. For a turn that alone would overfill the window; the full texts stay in the session."""
        saved = 0
        recent = range(self._trimmed, len(self.messages))
        for index in sorted(recent, key=lambda i: self._tokens[i].tool_results, reverse=True):
            message = self.messages[index]
            if saved >= excess or self._tokens[index].tool_results == 0:
                break
            if not isinstance(message, ModelRequest):
                continue
            parts: list[ModelRequestPart] = []
            for part in message.parts:
                if isinstance(part, ToolReturnPart) and isinstance(part.content, str):
                    if _trimmable(part.content, keep):
                        cut: Any = trim_text(part.content, keep, self._where(part), what="result")
                        part = replace(part, content=cut)
                parts.append(part)
            if parts == message.parts:
                continue
            before = self._tokens[index].total
            self._set(index, replace(message, parts=parts))
            saved += before - self._tokens[index].total
        return saved

    def _withdraw(self, requests: Sequence[ModelRequest]) -> None:
        """Take the asks of ``requests`` (cancelled before any answer) off the last prepared request, whose
        last parts they are; what records what happened stays (``cancels.kept_parts``)."""
        index = len(self.messages) - 1
        last = self.messages[index] if self.messages else None
        count = sum(len(r.parts) for r in requests)
        if not isinstance(last, ModelRequest) or count == 0:
            return
        parts = [*last.parts[:-count], *(p for r in requests for p in kept_parts(r))]
        if parts:
            self._set(index, ModelRequest(parts=parts, instructions=last.instructions))
        else:
            self.total.add(self._tokens[index], -1)
            del self.messages[index], self._tokens[index], self.sources[index]
        self._trimmed = min(self._trimmed, len(self.messages))

    def _set(self, index: int, message: ModelMessage) -> None:
        self.total.add(self._tokens[index], -1)
        self.messages[index] = message
        self._tokens[index] = message_breakdown(message)
        self.total.add(self._tokens[index])

    def tokens_after(self, index: int) -> int:
        """Estimated tokens of the prepared messages after ``index``."""
        return sum(t.total for t in self._tokens[index + 1 :])

    def last_response_index(self) -> int:
        for i in range(len(self.messages) - 1, -1, -1):
            if isinstance(self.messages[i], ModelResponse):
                return i
        return -1


__all__ = [
    "DEFAULT_WINDOW",
    "KNOWN_WINDOWS",
    "ContextBreakdown",
    "PreparedHistory",
    "breakdown",
    "estimate_tokens",
    "message_breakdown",
    "message_tokens",
    "resolve_window",
    "tools_tokens",
    "trim_request",
    "trim_text",
]
