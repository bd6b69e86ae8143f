"""Notes to the model about what changed behind its back (an ``/undo``, a ``/rewind``): given with the
next user message, withdrawn when a rewind takes back the actions they are about."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage, UserContent


@dataclass
class ModelNotes:
    """The notes waiting for the next user message of one history."""

    history: Callable[[], list[ModelMessage]]
    _notes: list[tuple[str, int | None]] = field(default_factory=list, init=False, repr=False)
    """Each with the index of the message whose actions it is about (None: about none; never withdrawn)."""
    _delivered: tuple[str, int] | None = field(default=None, init=False, repr=False)
    """The last note given, and the history's length before the message that carried it."""

    @property
    def pending(self) -> str | None:
        """What goes to the model with the next user message (None: nothing)."""
        return "\n".join(note for note, _ in self._notes) or None

    def tell(self, note: str, about: int | None = None) -> None:
        """Queue a note that goes to the model with the next user message.

        Args:
            note: The note (one line).
            about: The index of the user message whose actions it is about: a rewind to that
                message or before it withdraws the note.
        """
        self._notes.append((note, about))

    def withdraw(self, start: int, *, cut: bool) -> None:
        """Drop the notes about the actions of messages from ``start`` on (a rewind withdrew them).

        ``cut``: the conversation was cut to its first ``start`` messages, so a note delivered in a
        message that is gone now is not given again either.
        """
        self._notes = [(note, about) for note, about in self._notes if about is None or about < start]
        if cut and self._delivered is not None and self._delivered[1] >= start:
            self._delivered = None

    def take(self, prompt: str | Sequence[UserContent]) -> str | Sequence[UserContent]:
        """``prompt`` with the pending note in front of it (the note is then cleared).

        A note whose message was rolled back since (a failed model request) is given again.
        """
        history_len = len(self.history())
        lost = self._delivered[0] if self._delivered and history_len <= self._delivered[1] else None
        note = "\n".join(n for n in (lost, self.pending) if n) or None
        self._notes, self._delivered = [], None
        if not note:
            return prompt
        self._delivered = (note, history_len)
        return put_before(note, prompt)


def put_before(text: str | None, prompt: str | Sequence[UserContent]) -> str | Sequence[UserContent]:
    """``prompt`` with ``text`` (a paragraph the agent adds for the model) in front, if any."""
    if not text:
        return prompt
    return f"{text}\n\n{prompt}" if isinstance(prompt, str) else [text, *prompt]
