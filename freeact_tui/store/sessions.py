"""Sessions on disk in freeact's format: one JSONL history per agent in a dir named by the session id.

```
<sessions_dir>/<session-id>/main.jsonl        one line per pydantic-ai ModelMessage
<sessions_dir>/<session-id>/sub-xxxx.jsonl    one file per subagent
<sessions_dir>/<session-id>/tool-results/     large results moved out of the history
<sessions_dir>/<session-id>/meta.json         our listing cache (freeact ignores it)
<sessions_dir>/<session-id>/rewound/          histories as they were before each rewind (``rewind_file``)
```

The names importers use, from the modules of one concept each: ``session`` (one session),
``session_store`` (all of them), ``history`` (reading a history file), ``ids`` (ids and errors),
``rewind_file`` (a rewind on disk).
"""

from freeact_tui.store.history import LoadedHistory, read_history
from freeact_tui.store.ids import (
    AmbiguousSessionId,
    InvalidSessionId,
    SessionDamaged,
    SessionNotFound,
    new_session_id,
    validate_agent_id,
    validate_session_id,
)
from freeact_tui.store.rewind_file import rewind_marker
from freeact_tui.store.session import Session
from freeact_tui.store.session_store import SessionStore

__all__ = [
    "AmbiguousSessionId",
    "InvalidSessionId",
    "LoadedHistory",
    "Session",
    "SessionDamaged",
    "SessionNotFound",
    "SessionStore",
    "new_session_id",
    "read_history",
    "rewind_marker",
    "validate_agent_id",
    "validate_session_id",
]
