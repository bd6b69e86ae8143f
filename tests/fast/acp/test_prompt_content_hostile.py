"""#44 (atk9a F1): a resource URI ``urlparse`` refuses (``file://[/etc/passwd``: an unclosed IPv6 host) made
``session/prompt`` answer -32603 "Internal error".

The class: client content parsed by a function that raises something other than the protocol's refusal.
``prompt_content.user_content`` is the one checked reading of a prompt's blocks: any ``ValueError`` of a
parser it uses is a ``PromptError`` naming the block, which ``session/prompt`` answers -32602. Generated
blocks of every type (URIs, mime types, base64 data, names, texts) through it and through the server's
``prompt``: a result or invalid params, never anything else.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.errors import INVALID_PARAMS
from freeact_tui.acp.prompt_content import PromptError, user_content
from freeact_tui.acp.server import FreeactAcpAgent
from freeact_tui.project.config import Config

URIS = st.one_of(
    st.sampled_from(
        [
            "file://[/etc/passwd",
            "http://[::1",
            "file://[x",
            "file:///tmp/a%00b",
            "file:///%ff%fe",
            "file://",
            "",
            "file:///" + "a" * 5000,
            "http://[::1]:99999/",
            "file://host:port/x",
            "\ud800",
        ]
    ),
    st.builds(lambda scheme, rest: scheme + rest, st.sampled_from(["file://", "http://", "", "x:"]), st.text()),
)
DATA = st.one_of(st.sampled_from(["aGk=", "", "!!", "aGk", "\ud800", "a" * 10]), st.text(max_size=20))
MIMES = st.one_of(st.none(), st.sampled_from(["image/png", "image/", "text/plain", "", "\x00"]), st.text(max_size=10))

BLOCKS = st.one_of(
    st.builds(lambda t: TextContentBlock(type="text", text=t), st.text(max_size=20)),
    st.builds(lambda d, m: ImageContentBlock(type="image", data=d, mime_type=m or "image/png"), DATA, MIMES),
    st.builds(lambda d, m: AudioContentBlock(type="audio", data=d, mime_type=m or "audio/wav"), DATA, MIMES),
    st.builds(lambda u, n: ResourceContentBlock(type="resource_link", uri=u, name=n), URIS, st.text(max_size=8)),
    st.builds(
        lambda u, t, m: EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri=u, text=t, mime_type=m)
        ),
        URIS,
        st.text(max_size=20),
        MIMES,
    ),
    st.builds(
        lambda u, b, m: EmbeddedResourceContentBlock(
            type="resource", resource=BlobResourceContents(uri=u, blob=b, mime_type=m)
        ),
        URIS,
        DATA,
        MIMES,
    ),
)


@settings(max_examples=400, deadline=None)
@given(blocks=st.lists(BLOCKS, min_size=1, max_size=4))
def test_any_prompt_content_is_read_or_refused_with_a_prompt_error(blocks: list[Any]) -> None:
    try:
        out = user_content(blocks)
    except PromptError as exc:
        assert str(exc).startswith("prompt block ")  # names the block it is about
        return
    assert len(out) == len(blocks)


@settings(max_examples=150, deadline=None)
@given(blocks=st.lists(BLOCKS, min_size=1, max_size=3))
def test_the_server_answers_any_prompt_content_with_a_result_or_invalid_params(blocks: list[Any]) -> None:
    agent = FreeactAcpAgent(lambda cwd: Config(working_dir=cwd))
    with pytest.raises(RequestError) as refused:  # no such session: -32602 too, once the content is read
        asyncio.run(agent.prompt(blocks, session_id="no-such-session"))
    assert refused.value.code == INVALID_PARAMS


@pytest.mark.parametrize(
    "block",
    [
        ResourceContentBlock(type="resource_link", uri="file://[/etc/passwd", name="x"),
        EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(uri="http://[::1", text="hello")),
        EmbeddedResourceContentBlock(type="resource", resource=BlobResourceContents(uri="file://[x", blob="aGk=")),
    ],
)
def test_the_reported_uris_are_invalid_params_naming_the_block(block: Any) -> None:
    agent = FreeactAcpAgent(lambda cwd: Config(working_dir=cwd))
    text = TextContentBlock(type="text", text="see")
    with pytest.raises(RequestError) as refused:
        asyncio.run(agent.prompt([text, block], session_id="no-such-session"))
    assert refused.value.code == INVALID_PARAMS
    assert "prompt block 2" in str(refused.value.data) + str(refused.value)
    assert "Invalid IPv6 URL" in str(refused.value.data) + str(refused.value)
