"""#44 (second attack): the one guard before the SDK's router (``acp/dispatch.py``), kernel-free.

Before: a notification whose params did not validate (or whose method was unknown) made the SDK log a
traceback; ``mcpServers`` entries the SDK's schema could not read were dropped without a word. Generated
notifications go through the real SDK router behind ``guarded``: none raises, each logs at most one line
and none a traceback. Generated ``mcpServers`` lists: the guard refuses exactly those the SDK would not keep
whole, naming the first entry it would drop or cut.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from acp import RequestError
from acp.agent.router import build_agent_router
from acp.schema import NewSessionRequest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.dispatch import check_mcp_servers, guarded
from freeact_tui.acp.server import FreeactAcpAgent
from freeact_tui.project.config import Config

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=8,
)
PARAMS = st.one_of(
    JSON,
    st.fixed_dictionaries({"sessionId": JSON}),
    st.fixed_dictionaries({"sessionId": st.text(max_size=8)}),
)
METHODS = st.sampled_from(["session/cancel", "session/prompt", "no/such", "_ext/thing", "", "initialize"])


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _handler() -> Any:
    agent = FreeactAcpAgent(lambda path: Config())
    return guarded(build_agent_router(agent, use_unstable_protocol=True))  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(METHODS, PARAMS)
def test_a_notification_never_raises_and_logs_at_most_one_line_without_a_traceback(
    method: str, params: Any
) -> None:
    records = Records()
    root = logging.getLogger()
    root.addHandler(records)
    try:
        assert asyncio.run(_handler()(method, params, True)) is None
    finally:
        root.removeHandler(records)
    assert len(records.records) <= 1, [r.getMessage() for r in records.records]
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in records.records)


def test_the_reported_notifications() -> None:
    for params in ({"x": 1}, [1], None, {"sessionId": 5}):
        asyncio.run(_handler()("session/cancel", params, True))  # no exception, one line each (above)


STDIO = {"name": "s", "command": "/bin/true", "args": ["-x"], "env": [{"name": "A", "value": "1"}]}
HTTP = {
    "type": "http",
    "name": "h",
    "url": "http://127.0.0.1:1/mcp",
    "headers": [{"name": "X", "value": "y"}],
}
BAD_VALUES = st.sampled_from([None, 3, "x", [], {}, [1], [{"name": 1}], [{"value": "v"}], True])


@st.composite
def entries(draw: st.DrawFn) -> Any:
    entry = dict(draw(st.sampled_from([STDIO, HTTP])))
    change = draw(st.sampled_from(["none", "drop", "set", "whole"]))
    if change == "drop":
        entry.pop(draw(st.sampled_from(sorted(entry))))
    elif change == "set":
        entry[draw(st.sampled_from(sorted(entry)))] = draw(BAD_VALUES)
    elif change == "whole":
        return draw(BAD_VALUES)
    return entry


def _kept_whole(entry: Any) -> bool:
    """Whether the SDK's own schema keeps ``entry`` with every item of its lists."""
    kept = NewSessionRequest.model_validate({"cwd": "/", "mcpServers": [entry]}).mcp_servers
    if len(kept) != 1:
        return False
    return all(
        len(getattr(kept[0], key, None) or []) == len(entry[key])
        for key in ("args", "env", "headers")
        if isinstance(entry.get(key), list)
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(entries(), max_size=4))
def test_mcp_servers_are_refused_exactly_where_the_schema_would_drop_something(servers: list[Any]) -> None:
    dropped = [i for i, entry in enumerate(servers) if not _kept_whole(entry)]
    if not dropped:
        check_mcp_servers({"cwd": "/", "mcpServers": servers})
        return
    with pytest.raises(RequestError) as refused:
        check_mcp_servers({"cwd": "/", "mcpServers": servers})
    assert refused.value.code == -32602
    assert str(refused.value).startswith(f"mcpServers[{dropped[0]}]"), (servers, str(refused.value))


def test_an_entry_is_named_by_its_index_and_name() -> None:
    with pytest.raises(RequestError, match=r"mcpServers\[1\] \('h'\)"):
        check_mcp_servers({"mcpServers": [STDIO, {"type": "http", "name": "h"}]})
