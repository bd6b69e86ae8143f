"""Resuming a session as it was started: the printed ``freeact-tui --session-id ID`` opens it with the
model, action protocol and base URL of its last turn (the session's ``launch`` record in ``meta.json``).

The model and the base URL are one endpoint: when the command line names either, the record gives
nothing (its protocol was chosen for the other endpoint). Otherwise each key the command line leaves
open comes from the record, before the config files. Keys stay in the environment: the record holds
none (only the names the user typed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, get_args

from freeact_tui.project.config import ActionProtocolSetting

if TYPE_CHECKING:
    from freeact_tui.project.config import Config

ENDPOINT_KEYS = ("model", "base_url")
RESUMED_KEYS = (*ENDPOINT_KEYS, "action_protocol")
"""The config keys a resumed session takes from its record."""

_PROTOCOLS = frozenset(get_args(ActionProtocolSetting))


def resumed_overrides(recorded: Mapping[str, object], given: Mapping[str, object]) -> dict[str, str]:
    """The config keys to take from a session's ``launch`` record.

    Args:
        recorded: The record (``SessionMeta.launch``; from a file: anything).
        given: The command line's config overrides (``None``: not given).

    Returns:
        The keys to add to the overrides (never one the command line gave).
    """
    if any(given.get(key) is not None for key in ENDPOINT_KEYS):
        return {}
    taken: dict[str, str] = {}
    for key in RESUMED_KEYS:
        value = recorded.get(key)
        if given.get(key) is not None or not isinstance(value, str) or not value.strip():
            continue
        if key == "action_protocol" and value not in _PROTOCOLS:
            continue  # a damaged or foreign record: the config's choice stands
        taken[key] = value
    return taken


def session_launch(config: Config, session_id: str) -> dict[str, str]:
    """The ``launch`` record of a session (empty when it has none or its ``meta.json`` is unreadable)."""
    from freeact_tui.store.index import read_meta
    from freeact_tui.store.sessions import SessionStore

    meta = read_meta(SessionStore(config.resolved_sessions_dir()).session(session_id).dir)
    return dict(meta.launch) if meta is not None else {}


__all__ = ["RESUMED_KEYS", "resumed_overrides", "session_launch"]
