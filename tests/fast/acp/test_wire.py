"""#44 F2-F4: the line transport takes from a client only what it can hold and send back (kernel-free).

Before: a message nested ~1000 levels raised RecursionError out of ``receive`` (the server died); a lone
surrogate (``"\\ud800"``, valid JSON) in a method name made the answer unencodable (no answer at all),
and in prompt text it poisoned the session's history; ``1e400`` as an id was echoed as ``Infinity`` and
``NaN`` was accepted. Generated lines (deep nesting, surrogates anywhere, numbers out of range, the
non-JSON constants, wrong types, bad bytes) go through the real ``LineTransport``: each line is either
handed on (then every string in it is valid Unicode, every number finite, and it encodes strictly) or
answered with exactly one error, and every byte written is a line of strict JSON.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.stdio import LineTransport
from freeact_tui.acp.wire import MAX_DEPTH, PARSE_ERROR, client_text, encode_message


class Sink:
    def __init__(self) -> None:
        self.data = bytearray()

    async def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


def strict(line: bytes) -> Any:
    """``line`` as JSON, refusing everything that is not JSON (what a strict client does)."""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    return json.loads(line.decode("utf-8"), parse_constant=refuse)


def holdable(value: Any, depth: int = 0) -> bool:
    """Valid strings, finite numbers, bounded nesting: what the agent can keep and send back."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, str):
        return client_text(value) == value
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(holdable(k) and holdable(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(holdable(v, depth + 1) for v in value)
    return True


SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXT = st.text(st.one_of(st.characters(), SURROGATES), max_size=8)
NUMBERS = st.sampled_from(
    ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "1" * 5000, "0", "-1.5", "1e308"]
)


def raw(value: Any) -> str:
    """JSON text of ``value`` as a client may write it (lone surrogates as ``\\udXXX`` escapes)."""
    return json.dumps(value, ensure_ascii=True)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["deep", "text", "number", "types", "bytes", "answer"]))
    method = draw(st.one_of(st.just("session/prompt"), st.just("initialize"), TEXT))
    head = f'"jsonrpc":"2.0","method":{raw(method)}'
    if kind == "deep":
        n = draw(st.integers(MAX_DEPTH - 2, 3000))
        return f'{{{head},"id":1,"params":{{"x":{"[" * n}{"]" * n}}}}}\n'.encode()
    if kind == "text":
        key, value, ident = draw(TEXT), draw(TEXT), draw(st.one_of(TEXT, st.integers()))
        return f'{{{head},"id":{raw(ident)},"params":{{{raw(key)}:{raw(value)}}}}}\n'.encode()
    if kind == "answer":  # a client's answer to a request of ours (fs/read_text_file, terminal output)
        return f'{{"jsonrpc":"2.0","id":5,"result":{{"content":{raw(draw(TEXT))}}}}}\n'.encode()
    if kind == "number":
        where = draw(st.sampled_from(["id", "param"]))
        number = draw(NUMBERS)
        if where == "id":
            return f'{{{head},"id":{number}}}\n'.encode()
        return f'{{{head},"id":2,"params":{{"protocolVersion":{number}}}}}\n'.encode()
    if kind == "types":
        value = draw(st.sampled_from(["[]", "3", '"x"', "null", "true", '{"id":[]}', '{"method":5}']))
        return (value + "\n").encode()
    return draw(st.binary(min_size=1, max_size=20)).replace(b"\n", b" ") + b"\n"


async def through(data: bytes) -> tuple[list[Any], bytes]:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    sink = Sink()
    transport = LineTransport(reader, sink)
    received = []
    while (message := await transport.receive()) is not None:
        received.append(message)
    return received, bytes(sink.data)


@settings(max_examples=300, deadline=None)
@given(st.lists(lines(), min_size=1, max_size=5))
def test_every_line_is_handed_on_holdable_or_answered_once_with_strict_json(batch: list[bytes]) -> None:
    received, written = asyncio.run(through(b"".join(batch)))
    answers = [strict(line) for line in written.splitlines()]  # every written line is strict JSON
    assert written == b"".join(line + b"\n" for line in written.splitlines())
    assert all(a["error"]["code"] in (PARSE_ERROR, -32600) and a["id"] is None for a in answers)
    assert len(received) + len(answers) == sum(1 for line in batch if line.strip())  # one outcome each
    for message in received:
        assert holdable(message), message
        encode_message(message).decode("utf-8")  # and it encodes: the fast path, no fallback needed
        json.dumps(message, ensure_ascii=False, allow_nan=False).encode("utf-8")


@given(
    st.recursive(
        st.one_of(TEXT, st.floats(), st.integers(), st.none()),
        lambda c: st.lists(c) | st.dictionaries(TEXT, c),
    )
)
def test_whatever_the_process_sends_is_one_line_of_strict_json(value: Any) -> None:
    line = encode_message({"jsonrpc": "2.0", "id": 1, "result": {"value": value}})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert strict(line)["id"] == 1


def test_the_reported_lines() -> None:
    batch = [
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b"[" * 1200 + b"]" * 1200 + b"}\n",
        b'{"jsonrpc":"2.0","id":2,"method":"session/\\ud800"}\n',
        b'{"jsonrpc":"2.0","id":1e400,"method":"initialize"}\n',
        b'{"jsonrpc":"2.0","id":NaN,"method":"initialize"}\n',
        b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1e400}}\n',
    ]
    received, written = asyncio.run(through(b"".join(batch)))
    assert [m["id"] for m in received] == [2]
    assert received[0]["method"] == "session/\ufffd"
    assert [strict(line)["error"]["code"] for line in written.splitlines()] == [PARSE_ERROR] * 4
