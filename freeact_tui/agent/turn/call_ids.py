"""Tool call ids unique in the session: the model's ids are its words, not identities.

A model may give two calls of one reply the same id, reuse an id of an earlier turn, or give none; every
part of the agent (approval records, phases, the kernel's notes) and every front end (the TUI's blocks,
ACP's ``toolCallId``) keys a call by its id, so a repeated id mixed two calls' outputs and decisions.
``CallIds.fresh`` gives each call of a reply, when the reply comes, an id no call of the session has had
(the model's own id when it is new); the history keeps the new ids, so a call and its return still match.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart


def _call_ids(messages: Iterable[ModelMessage]) -> set[str]:
    return {
        part.tool_call_id
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    }


class CallIds:
    """The tool call ids a session has used (those in its history and every one given out here).

    The history is read once and then only what was added since (a request's work must not grow with
    the history); a history that got shorter (a rewind, a compaction) is read again.
    """

    def __init__(self) -> None:
        self._taken: set[str] = set()
        self._read = 0

    def fresh(self, response: ModelResponse, history: Sequence[ModelMessage]) -> ModelResponse:
        """``response`` with each call's id unique in the session (``history``: what the session holds)."""
        if len(history) < self._read:
            self._read = 0
        self._taken |= _call_ids(history[self._read :])
        self._read = len(history)
        parts = []
        for part in response.parts:
            if isinstance(part, ToolCallPart):
                part = dataclasses.replace(part, tool_call_id=self._unique(part.tool_call_id))
            parts.append(part)
        return dataclasses.replace(response, parts=parts)

    def _unique(self, wanted: str) -> str:
        base = wanted or "call"
        chosen, n = wanted, 1
        while not chosen or chosen in self._taken:
            n += 1
            chosen = f"{base}~{n}"
        self._taken.add(chosen)
        return chosen


__all__ = ["CallIds"]
