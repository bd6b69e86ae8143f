"""One line of a session's history: freeact's envelope (``{"v": 1, "message": …, "meta": {"ts": …}}``),
written, read and checked; a line too large to be a normal message is cut on loading."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any


class EnvelopeError(ValueError):
    """A history line that is not a valid freeact envelope; ``str(error)`` says why."""

    def __init__(self, reason: str, *, bad_json: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.bad_json = bad_json


def utc_now_ts() -> str:
    """The current time in freeact's envelope form (UTC ISO-8601 with a ``Z``)."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def encode_envelope(message: Any, ts: str, extra_meta: dict[str, Any] | None = None) -> bytes:
    """One history line: ``message`` must already be JSON-able (``to_jsonable_python``).

    ``extra_meta`` adds keys to the envelope's ``meta`` (freeact reads only ``ts``), e.g. a rewind marker.
    """
    meta = {"ts": ts, **(extra_meta or {})}
    return (json.dumps({"v": 1, "message": message, "meta": meta}) + "\n").encode("utf-8")


def decode_envelope(line: bytes | str) -> dict[str, Any]:
    """Parse one history line and check freeact's envelope rules.

    Returns:
        The envelope dict (``v``, ``message``, ``meta``).

    Raises:
        EnvelopeError: not JSON (``bad_json``), not an envelope, ``v`` other than 1, no ``meta.ts``,
            or a forbidden ``meta.agent_id``.
    """
    try:
        envelope = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EnvelopeError(f"not valid JSON ({exc})", bad_json=True) from None
    if not isinstance(envelope, dict) or not {"v", "message", "meta"} <= envelope.keys():
        raise EnvelopeError("not a session envelope (expected keys v, message, meta)")
    if envelope["v"] != 1:
        raise EnvelopeError(f"unsupported envelope version {envelope['v']!r} (only 1 is known)")
    meta = envelope["meta"]
    if not isinstance(meta, dict) or "ts" not in meta:
        raise EnvelopeError("envelope meta has no ts")
    if "agent_id" in meta:
        raise EnvelopeError("envelope meta.agent_id is forbidden")
    if not isinstance(envelope["message"], dict):
        raise EnvelopeError("envelope message is not an object")
    return envelope


# A history line past this size is not a normal message (tool results past a few KB are moved to
# tool-results/): listing does not parse it, and loading cuts its long strings (``shrink_oversized``).
MAX_LINE_BYTES = 8 * 1024 * 1024
_KEEP_CHARS = 64 * 1024  # what is kept of each long string of an oversized line
_BINARY_KEYS = frozenset({"data"})  # base64 image/file bytes: cut, they would be corrupt, so kept whole


def shrink_oversized(message: Any, line: int, size: int) -> Any:
    """``message`` (a too large line's) with each string past ``_KEEP_CHARS`` cut, saying so in its text.

    Iterative, so that a deeply nested line cannot exhaust the stack either.
    """
    note = (
        f"\n\n[… cut when the session was loaded: line {line} of the history is {size / 1e6:.1f} MB, "
        f"larger than {MAX_LINE_BYTES // (1024 * 1024)} MB; the full text stays in the file …]"
    )
    root: dict[str, Any] = {"m": message}
    stack: list[dict[str, Any] | list[Any]] = [root]
    while stack:
        node = stack.pop()
        keys: Any = node.keys() if isinstance(node, dict) else range(len(node))
        for key in list(keys):
            value = node[key]
            if isinstance(value, str) and len(value) > _KEEP_CHARS and key not in _BINARY_KEYS:
                node[key] = value[:_KEEP_CHARS] + note
            elif isinstance(value, dict | list):
                stack.append(value)
    return root["m"]
