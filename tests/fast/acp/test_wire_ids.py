"""#44 (third attack, F6): a client's request id comes back exactly as it was sent, and an answer to one of
our requests whose id is that number spelled as a fraction (``0.0``) fails that request at once.

Before: a string id with a lone surrogate (``"\\ud800"``, valid JSON) was answered as ``"\\ufffd"`` (the
client never matched the answer), and an answer with ``"id": 0.0`` was refused as an invalid request with id
null while our request 0 waited for its bound."""

from __future__ import annotations

import asyncio
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.wire import decode_message, encode_message
from tests.fast.acp.test_wire import through

IDS = st.text(
    st.one_of(st.characters(), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)), max_size=12
)


@settings(max_examples=300, deadline=None)
@given(IDS)
def test_every_string_id_is_echoed_exactly(id_: str) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": id_, "method": "session/list", "params": {}}) + "\n"
    request = decode_message(line.encode())
    answer = json.loads(encode_message({"jsonrpc": "2.0", "id": request["id"], "result": {"sessions": []}}))
    assert answer["id"] == id_


def test_the_reported_ids() -> None:
    line = b'{"jsonrpc":"2.0","id":"\\ud800","method":"session/list","params":{}}\n'
    request = decode_message(line)
    written = encode_message({"jsonrpc": "2.0", "id": request["id"], "result": {"text": "\ud800 kept valid"}})
    assert json.loads(written)["id"] == "\ud800"
    assert "\\ud800" not in json.loads(written)["result"]["text"].encode("unicode_escape").decode()
    received, answers = asyncio.run(through(b'{"jsonrpc":"2.0","id":0.0,"result":{}}\n'))
    assert answers == b""
    assert [(m["id"], type(m["id"]), m["error"]["code"]) for m in received] == [(0, int, -32600)]
