"""What the live log showed that is no message to the model, kept in the history file as an event record.

An event record is a ``ModelRequest`` with no parts whose metadata holds the event under
``EVENT_KEY``. freeact validates every line of a history as a pydantic-ai message, so a line of
another shape would break it; an empty request loads in every pydantic-ai reader and providers send
nothing for it (OpenAI maps no part, Anthropic skips a request without content). This app keeps
records out of the history the model sees (``compaction.compacted_view``) and replays them where
they happened (``transcript.walk``).

The kinds: ``error``, a turn that ended on an error (a model API error, a request budget run out,
the same error twice); ``notice``, what the app said in the log about the session (an undo). ``withdrawn`` holds the messages of the turn that were taken back
(a failed model request rolls its turn back, but the user saw it), so the log can still show them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelRequest

EVENT_KEY = "freeact_tui_event"
KERNEL_DIED = "The kernel died while running this action and was restarted; variables are lost."
"""The error shown when an action's kernel died (its return's metadata says ``kernel_died``)."""
IMAGE_NOTE = "\n[image saved: "
"""Starts the line that names an image of a code action in its result for the model (``actions/code.py``)."""


def error_record(
    kind: str, message: str, withdrawn: Sequence[ModelMessage] = (), *, spent: dict[str, Any] | None = None
) -> ModelRequest:
    """The record of a turn that ended on an error (``AgentError``'s ``kind`` and ``message``); ``spent``:
    the usage record of a request that left no reply (``agent/usage.py`` counts it on resume)."""
    from pydantic_ai.messages import ModelRequest
    from pydantic_core import to_jsonable_python

    event: dict[str, Any] = {"kind": "error", "error": kind, "message": message}
    if withdrawn:
        event["withdrawn"] = to_jsonable_python(list(withdrawn), bytes_mode="base64")
    if spent is not None:
        event["spent"] = spent
    return ModelRequest(parts=[], metadata={EVENT_KEY: event})


def notice_record(title: str, text: str) -> ModelRequest:
    """The record of a notice the app showed in the log about the session (an undo), for a resumed log."""
    from pydantic_ai.messages import ModelRequest

    return ModelRequest(parts=[], metadata={EVENT_KEY: {"kind": "notice", "title": title, "text": text}})


def event_of(message: Any) -> dict[str, Any] | None:
    """The event a message records, or ``None`` for a message of the conversation."""
    meta = getattr(message, "metadata", None)
    if (
        getattr(message, "kind", "") != "request"
        or getattr(message, "parts", None)
        or not isinstance(meta, dict)
    ):
        return None
    event = meta.get(EVENT_KEY)
    return event if isinstance(event, dict) and isinstance(event.get("kind"), str) else None


def is_event_record(message: Any) -> bool:
    """Whether a message, loaded or serialized (a dict), is an event record rather than conversation."""
    if isinstance(message, dict):
        meta = message.get("metadata")
        return (
            message.get("kind") == "request"
            and not message.get("parts")
            and isinstance(meta, dict)
            and isinstance(meta.get(EVENT_KEY), dict)
        )
    return event_of(message) is not None


def withdrawn_messages(event: dict[str, Any]) -> list[ModelMessage]:
    """The messages an error record took back from the history (none if they do not load)."""
    import pydantic
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    raw = event.get("withdrawn")
    if not isinstance(raw, list):
        return []
    try:
        return ModelMessagesTypeAdapter.validate_python(raw)
    except pydantic.ValidationError:  # damaged by hand: the error itself still shows
        return []


__all__ = ["EVENT_KEY", "IMAGE_NOTE", "KERNEL_DIED", "error_record", "event_of", "is_event_record", "withdrawn_messages"]
