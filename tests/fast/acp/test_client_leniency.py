"""#44 F7: what a client sends is read as the protocol means it, in one place (``acp/legacy.py``), and an
``initialize`` answered early never drops what it cannot tell is valid (kernel-free).

- a notification sent as a request (``session/cancel`` with an id) is applied and answered ``{}``;
- a legacy method with params that are not an object reaches the current method (invalid params, not
  "method not found");
- a client's answer with both ``result`` and ``error`` is an error; an id written as digits is the number;
- the early ``initialize`` answer is given only for params the SDK's schema takes: generated params
  (bad capabilities among them) that the schema refuses are left to the SDK's validation (-32602).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from acp.schema import InitializeRequest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from freeact_tui.acp.handshake import early_answer, initialize_problem
from freeact_tui.acp.legacy import upgrade
from freeact_tui.acp.stdio import LineTransport


class Sink:
    def __init__(self) -> None:
        self.data = bytearray()

    async def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


def test_a_cancel_sent_as_a_request_is_applied_and_answered_at_once() -> None:
    async def go() -> tuple[dict[str, Any] | None, bytes]:
        reader = asyncio.StreamReader()
        line = {"jsonrpc": "2.0", "id": 9, "method": "session/cancel", "params": {"sessionId": "s"}}
        reader.feed_data(json.dumps(line).encode() + b"\n")
        reader.feed_eof()
        sink = Sink()
        received = await LineTransport(reader, sink, rewrite=upgrade).receive()
        return received, bytes(sink.data)

    received, written = asyncio.run(go())
    assert received == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
    assert json.loads(written) == {"jsonrpc": "2.0", "id": 9, "result": {}}


def test_a_legacy_method_with_params_not_an_object_reaches_the_current_method() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "session/set_model", "params": [1, 2]}
    assert upgrade(message).message["method"] == "session/set_config_option"
    assert upgrade(message).message["params"] == [1, 2]


def test_an_answer_with_both_result_and_error_is_an_error_and_digit_ids_are_numbers() -> None:
    both = {"jsonrpc": "2.0", "id": "0", "result": {"outcome": {}}, "error": {"code": 1, "message": "x"}}
    read = upgrade(both).message
    assert read == {"jsonrpc": "2.0", "id": 0, "error": {"code": 1, "message": "x"}}
    assert upgrade({"jsonrpc": "2.0", "id": "x0", "result": {}}).message["id"] == "x0"


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 70000) | st.text(max_size=4),
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "_meta", "fs", "name"]), c, max_size=3)
    ),
    max_leaves=6,
)
CAPS = st.one_of(
    JSONISH,
    st.fixed_dictionaries(
        {},
        optional={
            "fs": JSONISH
            | st.fixed_dictionaries(
                {}, optional={"readTextFile": JSONISH, "writeTextFile": JSONISH, "_meta": JSONISH}
            ),
            "terminal": JSONISH,
            "_meta": JSONISH,
            "session": JSONISH,
        },
    ),
)
INFO = st.one_of(
    JSONISH,
    st.fixed_dictionaries({}, optional={"name": JSONISH, "version": JSONISH, "title": JSONISH}),
)


@settings(max_examples=400, deadline=None)
@given(
    st.fixed_dictionaries(
        {"protocolVersion": st.just(1)},
        optional={"clientCapabilities": CAPS, "clientInfo": INFO, "_meta": JSONISH, "other": JSONISH},
    )
)
def test_the_early_answer_is_given_only_for_params_the_sdk_takes(params: dict[str, Any]) -> None:
    answer = early_answer({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    refused = initialize_problem(params) is not None
    assert refused == (answer is not None and "error" in answer)  # refused: at once, -32602
    if refused:
        assert answer is not None and answer["error"]["code"] == -32602
        return
    upgraded = upgrade({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert upgraded.message is not None and upgraded.answer is None  # a later initialize: the same reading
    try:
        taken = InitializeRequest.model_validate(params)
    except ValidationError as exc:
        assert answer is None, f"answered early, but the SDK refuses {params}: {exc}"
        return
    # nothing the client said about the known capabilities is dropped
    given = params.get("clientCapabilities") or {}
    fs = given.get("fs") or {} if isinstance(given, dict) else {}
    kept = taken.client_capabilities
    for key, attr in (("readTextFile", "read_text_file"), ("writeTextFile", "write_text_file")):
        if isinstance(fs, dict) and fs.get(key) is not None:
            assert kept is not None and kept.fs is not None and getattr(kept.fs, attr) == fs[key], params
    if isinstance(given, dict) and given.get("terminal") is not None:
        assert kept is not None and kept.terminal == given["terminal"], params


def test_the_usual_params_are_answered_early_and_bad_capabilities_are_not() -> None:
    usual = {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
        "clientInfo": {"name": "zed", "version": "1.0"},
    }
    assert early_answer({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": usual}) is not None
    bad = {**usual, "clientCapabilities": {"fs": "yes"}}
    refused = early_answer({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": bad})
    assert refused is not None and refused["error"]["code"] == -32602
