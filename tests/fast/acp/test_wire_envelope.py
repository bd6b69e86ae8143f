"""#44 (second attack): the one envelope check of JSON-RPC 2.0 in ``wire.py`` (kernel-free).

Before: request ids that were objects, arrays, ``true`` or ``1.5`` and envelopes with ``"jsonrpc": "1.0"``
(or none) were taken as requests; a client's answer to one of our requests that was not a valid response
(no ``result``/``error``, an ``error`` that is a string) was handed to the SDK as it was, so the request it
answered waited for its bound (a permission request: 30 minutes). Generated envelopes go through the real
``LineTransport``; each has exactly the outcome JSON-RPC 2.0 gives it, written here as a table.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fast.acp.test_wire import through

ABSENT = object()
IDS = st.sampled_from([ABSENT, None, 0, 7, -3, 10**20, "a", "", True, False, 1.5, 2.0, [], [1], {}, {"a": 1}])
VERSIONS = st.sampled_from([ABSENT, "2.0", "1.0", 2.0, None, "2"])
METHODS = st.sampled_from([ABSENT, "session/list", 5, None])
BODIES = st.sampled_from(
    [
        {},
        {"result": {}},
        {"result": None},
        {"error": {"code": -1, "message": "no"}},
        {"error": "no"},
        {"error": {"code": "x", "message": "no"}},
        {"error": {"code": True, "message": "no"}},
        {"result": 1, "error": {"code": -1, "message": "no"}},
    ]
)


def envelope(version: Any, id_: Any, method: Any, body: dict[str, Any]) -> dict[str, Any]:
    message = {k: v for k, v in (("jsonrpc", version), ("id", id_), ("method", method)) if v is not ABSENT}
    return {**message, **body}


def expected(message: dict[str, Any]) -> str:
    """JSON-RPC 2.0's outcome: ``"on"`` (handed on as it is), ``"fails"`` (an answer that names a request
    but is not a valid response: handed on as an error answer to it) or ``"invalid"`` (-32600, id null)."""
    if "method" not in message and type(message.get("id")) is float and message["id"].is_integer():
        return "fails"  # an answer to our request ``2`` spelled ``2.0`` (#44, third attack): it fails at once
    id_ok = "id" not in message or message["id"] is None or type(message["id"]) in (str, int)
    if not id_ok or not ("id" in message or "method" in message):
        return "invalid"
    if "method" in message:
        return "on" if message.get("jsonrpc") == "2.0" and isinstance(message["method"], str) else "invalid"
    error = message.get("error")
    valid = (
        message.get("jsonrpc") == "2.0"
        and ("result" in message) != ("error" in message)
        and (
            "result" in message
            or (isinstance(error, dict) and type(error.get("code")) is int and isinstance(error.get("message"), str))
        )
    )
    if valid:
        return "on"
    return "invalid" if message["id"] is None else "fails"


@settings(max_examples=400, deadline=None)
@given(VERSIONS, IDS, METHODS, BODIES)
def test_each_envelope_has_the_outcome_json_rpc_gives_it(version: Any, id_: Any, method: Any, body: Any) -> None:
    message = envelope(version, id_, method, body)
    received, written = asyncio.run(through((json.dumps(message) + "\n").encode()))
    answers = [json.loads(line) for line in written.splitlines()]
    outcome = expected(message)
    if outcome == "invalid":
        assert received == [] and len(answers) == 1, (message, received, answers)
        assert answers[0]["id"] is None and answers[0]["error"]["code"] == -32600
    elif outcome == "on":
        assert received == [message] and answers == [], (message, received, answers)
    else:
        assert answers == [] and len(received) == 1, (message, received, answers)
        assert received[0]["id"] == message["id"] and received[0]["error"]["code"] == -32600
        assert "Invalid response from the client" in received[0]["error"]["message"]


def test_the_reported_envelopes() -> None:
    lines = [
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/list", "params": {}},
        {"jsonrpc": "2.0", "id": [1], "method": "session/list", "params": {}},
        {"jsonrpc": "2.0", "id": True, "method": "session/list", "params": {}},
        {"jsonrpc": "2.0", "id": 1.5, "method": "session/list", "params": {}},
        {"jsonrpc": "1.0", "id": 5, "method": "session/list", "params": {}},
        {"id": 6, "method": "session/list", "params": {}},
    ]
    received, written = asyncio.run(through(b"".join((json.dumps(m) + "\n").encode() for m in lines)))
    assert received == []
    assert [(a["id"], a["error"]["code"]) for a in map(json.loads, written.splitlines())] == [(None, -32600)] * 6
