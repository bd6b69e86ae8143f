"""The fake OpenAI server speaks the protocol the real client stack (openai SDK + pydantic-ai) expects."""

from __future__ import annotations

import time

import httpx
import pytest
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import ToolDefinition

from tests.fake_openai import Cut, FakeOpenAI, HttpError, Malformed, RateLimited, Reply, Stall, ToolCallReply

TOOL = ToolDefinition(
    name="run", parameters_json_schema={"type": "object", "properties": {"code": {"type": "string"}}}
)


def _model(server: FakeOpenAI, timeout: float = 10) -> OpenAIChatModel:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=timeout)
    return OpenAIChatModel("fake-model", provider=OpenAIProvider(openai_client=client))


async def _stream(server: FakeOpenAI, client_timeout: float = 10) -> tuple[ModelResponse, int]:
    events = 0
    async with model_request_stream(
        _model(server, client_timeout),
        [ModelRequest(parts=[UserPromptPart("hi")])],
        model_request_parameters=ModelRequestParameters(function_tools=[TOOL]),
    ) as stream:
        async for _ in stream:
            events += 1
        return stream.get(), events


async def test_streamed_text_tool_call_in_deltas_and_usage(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(
        Reply("Hello there, world", chunk=3, usage=(123, 45)),
        Reply("", tool_calls=[ToolCallReply("run", {"code": "print(6 * 7)"}, pieces=4)]),
    )
    response, events = await _stream(fake_openai)
    assert [p.content for p in response.parts if isinstance(p, TextPart)] == ["Hello there, world"]
    assert events >= 6  # one event per 3-character delta
    assert (response.usage.input_tokens, response.usage.output_tokens) == (123, 45)

    response, events = await _stream(fake_openai)
    (call,) = [p for p in response.parts if isinstance(p, ToolCallPart)]
    assert call.tool_name == "run" and call.args_as_dict() == {"code": "print(6 * 7)"}
    assert events >= 4  # the arguments came in several deltas
    first = fake_openai.requests[0]
    assert fake_openai.count == 2 and first.stream and first.wants_usage and first.tool_names == ["run"]
    assert first.last_user_text() == "hi"


async def test_non_streamed_reply_and_invalid_arguments_verbatim(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply("plain", tool_calls=[ToolCallReply("nope", '{"code": "pri')]))
    response = await model_request(
        _model(fake_openai),
        [ModelRequest(parts=[UserPromptPart("hi")])],
        model_request_parameters=ModelRequestParameters(function_tools=[TOOL]),
    )
    (call,) = [p for p in response.parts if isinstance(p, ToolCallPart)]
    assert call.tool_name == "nope" and call.args == '{"code": "pri'
    assert not fake_openai.requests[0].stream


@pytest.mark.parametrize(
    ("fault", "status"),
    [(HttpError(500), 500), (RateLimited(retry_after=7), 429), (HttpError(400, "bad"), 400)],
)
async def test_http_faults(fake_openai: FakeOpenAI, fault: HttpError, status: int) -> None:
    fake_openai.script(fault)
    async with httpx.AsyncClient() as client:
        r = await client.post(f"{fake_openai.url}/chat/completions", json={"stream": True})
    assert r.status_code == status and "message" in r.json()["error"]
    if status == 429:
        assert r.headers["retry-after"] == "7"


async def test_malformed_cut_and_stall_break_the_client(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Malformed(), Cut("Partial answ"), Stall(text_before="wait"))
    for _ in range(2):
        with pytest.raises(Exception):  # noqa: B017,PT011 - the exact type is the client's business
            await _stream(fake_openai)
    started = time.monotonic()
    with pytest.raises(Exception):  # noqa: B017,PT011
        await _stream(fake_openai, client_timeout=1)
    assert time.monotonic() - started < 5
    assert fake_openai.count == 3


async def test_script_used_up_gives_400_and_callables_see_the_request(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(lambda req: Reply(f"you said {req.last_user_text()}"))
    response, _ = await _stream(fake_openai)
    assert response.parts[0] == TextPart("you said hi")
    async with httpx.AsyncClient() as client:
        r = await client.post(f"{fake_openai.url}/chat/completions", json={})
    assert r.status_code == 400 and "request 2" in r.json()["error"]["message"]
