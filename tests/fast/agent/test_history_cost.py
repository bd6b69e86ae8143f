"""The loop's work per model request does not grow with the history (issue #21's long sessions).

Not timed: the test counts the function calls (Python and built-in, as cProfile does) the agent
makes per turn with a resumed session of 20 and of 3,000 messages. A pass over the whole history
per request (a token estimate, pydantic-ai's scans or its special-token break) adds thousands of
calls per turn at 3,000 messages; the loop's own work adds none. The model is a stand-in that
answers without looking at the messages, so only the loop's work is counted. No kernel is needed:
the turns are plain answers.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import FunctionModel, FunctionStreamedResponse
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings

from bench.sessions import turn
from freeact_tui.agent.agent import Agent
from freeact_tui.agent.context import PreparedHistory, breakdown
from freeact_tui.agent.model_stream import PreparedMessages
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.store import SessionStore

JOINER = "\u200d"
TOKEN = "<|im_start|>"
TURNS = 5


class FlatModel(FunctionModel):
    """Answers "done" at once without looking at the messages (FunctionModel's own request checks walk
    them all, which would hide the loop's work); keeps what it was sent."""

    def __init__(self, *, open_model: bool = False) -> None:
        profile = ModelProfile(may_tokenize_special_tokens_in_content=True) if open_model else None
        super().__init__(stream_function=self._never, model_name="flat", profile=profile)
        self.sent: list[list[ModelMessage]] = []

    @staticmethod
    async def _never(messages: list[ModelMessage], info: Any) -> AsyncIterator[str]:
        raise AssertionError("not used")
        yield ""  # pragma: no cover

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        self.sent.append(messages)

        async def answer() -> AsyncIterator[str]:
            yield "done"

        yield FunctionStreamedResponse(
            model_request_parameters=model_request_parameters, _model_name="flat", _iter=answer()
        )


def write_session(root: Path, messages: int, first_prompt: str = "Step 0") -> str:
    session = SessionStore(root, fsync=False).new_session()
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("You are a test agent."), UserPromptPart(first_prompt)]),
        ModelResponse(parts=[TextPart("ok")]),
    ]
    i = 1
    while len(history) < messages:  # whole turns (a cut one would leave a call unanswered)
        history.extend(turn(i))
        i += 1
    session.append(history)
    return session.id


def make_agent(model: FlatModel, root: Path, session_id: str) -> Agent:
    return Agent(
        model,
        sessions_dir=root,
        session_id=session_id,
        permissions=PermissionRules(None, skip_permissions=True),
        enable_subagents=False,
        eager_kernel=False,
        context_window=10_000_000,  # no compaction: the history stays as long as it is
    )


async def calls_per_turn(root: Path, messages: int, *, open_model: bool) -> float:
    model = FlatModel(open_model=open_model)
    agent = make_agent(model, root, write_session(root, messages))
    async with agent:
        async for _ in agent.stream("warm up"):  # the first request prepares the whole history once
            pass
        profile = cProfile.Profile()
        profile.enable()
        for n in range(TURNS):
            async for _ in agent.stream(f"question {n}"):
                pass
        profile.disable()
        assert len(model.sent) == TURNS + 1 and len(model.sent[-1]) >= messages  # the whole history went out
        tools = agent.tools.definitions()
        # the usage estimate (for servers that report none) is the prepared history's running total
        sent = agent.prepared_history()
        assert agent.context.request_estimate(tools) == breakdown(sent, tools).total
    stats: Any = pstats.Stats(profile)
    calls = sum(entry[1] for entry in stats.stats.values()) / TURNS
    return calls


@pytest.mark.parametrize("open_model", [False, True], ids=["closed-model", "open-model"])
async def test_calls_per_request_do_not_grow_with_the_history(tmp_path: Path, open_model: bool) -> None:
    short = await calls_per_turn(tmp_path / "short", 20, open_model=open_model)
    long = await calls_per_turn(tmp_path / "long", 3_000, open_model=open_model)
    # one pass over 3,000 messages per request is >= 3,000 calls; scheduling noise is a few dozen
    assert long - short < 300, (short, long)
    assert short > 100  # the profile did see the turns


async def test_open_model_gets_tokens_broken_once_per_message(tmp_path: Path) -> None:
    model = FlatModel(open_model=True)
    agent = make_agent(model, tmp_path, write_session(tmp_path, 42, first_prompt=f"Say {TOKEN} please"))
    async with agent:
        for prompt in (f"and {TOKEN} again", "plain"):
            async for _ in agent.stream(prompt):
                pass
        first, second = model.sent
        broken = f"{TOKEN[0]}{JOINER}{TOKEN[1:]}"
        assert broken in str(first[0].parts[1].content)  # the token reaches the model broken …
        assert broken in str(second[-3].parts[0].content)  # … in a prompt of this session too
        assert TOKEN in str(agent.history[0].parts[1].content)  # the history itself is unchanged
        assert JOINER not in str(agent.history[0].parts[1].content)
        assert first[0] is not agent.history[0]
        # the next request reuses the broken messages instead of breaking the whole history again
        assert all(a is b for a, b in zip(first, second[: len(first)], strict=True))
        assert second is not agent.prepared_history()  # the model gets its own list


def test_replaced_messages_are_broken_again() -> None:
    """A message the prepared history replaces later (trimmed with age, or merged) is broken anew."""
    instance = FlatModel(open_model=True)
    prepared = PreparedHistory(trim_chars=100, trim_age=2)
    long_result = f"{TOKEN} head " + "x" * 2_000 + f" tail {TOKEN}"
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("run it")]),
        ModelResponse(parts=[ToolCallPart("ipybox_execute_ipython_cell", {"code": "1"}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("ipybox_execute_ipython_cell", long_result, "c1")]),
    ]
    messages = prepared.update(history)
    assert isinstance(messages, PreparedMessages)
    wire = messages.wire(instance, instance)
    assert len(str(wire[2].parts[0].content)) > 2_000 and JOINER in str(wire[2].parts[0].content)
    history += [
        ModelResponse(parts=[TextPart("done")]),
        ModelRequest(parts=[UserPromptPart(f"next {TOKEN}")]),
    ]
    history.append(ModelRequest(parts=[UserPromptPart("and more")]))  # adjacent: merged into the last one
    messages = prepared.update(history)
    wire = messages.wire(instance, instance)
    trimmed = str(wire[2].parts[0].content)
    assert "trimmed from the context" in trimmed and len(trimmed) < 1_000  # the trimmed form went out …
    assert trimmed.count(JOINER) == 2  # … with its tokens broken
    assert [str(p.content) for p in wire[-1].parts] == [f"next {TOKEN[0]}{JOINER}{TOKEN[1:]}", "and more"]
    assert wire[0] is messages[0]  # a message without tokens is sent as it is
    closed = FlatModel()
    assert messages.wire(closed, closed) == list(messages)  # a closed model's profile: nothing to break


# -- the openai SDK's walk of the conversation (agent/sdk_body.py) ------------------------------------------


CAPTURED = {"error": {"type": "invalid_request_error", "message": "captured"}}


def captured_model(route: str, model_name: str, bodies: list[bytes]) -> Any:
    """A pydantic-ai model of ``route`` whose SDK client sends to a mock transport (bodies kept, an error answered)."""
    import httpx
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def keep(request: httpx.Request) -> httpx.Response:
        bodies.append(request.content)
        return httpx.Response(400, json=CAPTURED)

    http = httpx.AsyncClient(transport=httpx.MockTransport(keep))
    openai_client = AsyncOpenAI(base_url="http://test/v1", api_key="k", max_retries=0, http_client=http)
    model_class = OpenAIResponsesModel if route == "responses" else OpenAIChatModel
    return model_class(model_name, provider=OpenAIProvider(openai_client=openai_client))


async def sent_bytes(route: str, model_name: str, history: list[ModelMessage], *, light: bool) -> bytes:
    """The body pydantic-ai's model sends for ``history``."""
    from freeact_tui.agent.sdk_body import without_sdk_walk

    bodies: list[bytes] = []
    model = captured_model(route, model_name, bodies)
    if light:
        assert without_sdk_walk(model) is model
        resource = {
            "chat": lambda: model.client.chat.completions,
            "responses": lambda: model.client.responses,
        }[route]()
        assert getattr(resource.create, "_freeact_tui_without_sdk_walk", False)  # installed on this client
    with pytest.raises(Exception, match="captured"):
        await model.request(history, None, ModelRequestParameters())
    return bodies[0]


@pytest.mark.parametrize(
    ("route", "model_name"),
    [("chat", "qwen3-coder"), ("chat", "gpt-4o"), ("responses", "gpt-5")],
)
async def test_the_conversation_skips_the_sdk_transform_as_the_same_bytes(
    route: str, model_name: str
) -> None:
    history: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("You are a test agent."), UserPromptPart(f"Say {TOKEN} ünïcode")]
        )
    ]
    for i in range(1, 6):
        history.extend(turn(i))
    history.append(ModelRequest(parts=[UserPromptPart("last")]))
    light = await sent_bytes(route, model_name, history, light=True)
    assert b"Step 3" in light and b"last" in light
    assert light == await sent_bytes(route, model_name, history, light=False)


async def test_the_sdk_never_walks_the_conversation(
    fake_openai: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openai.resources.chat.completions import completions as sdk

    from tests.fake_openai import Reply

    walked: list[int] = []
    transform = sdk.async_maybe_transform

    async def spy(data: Any, expected_type: Any) -> Any:
        if isinstance(data, dict) and "messages" in data:
            walked.append(len(data["messages"]))
        return await transform(data, expected_type)

    monkeypatch.setattr(sdk, "async_maybe_transform", spy)  # observes the SDK's transform; changes nothing
    fake_openai.default = Reply("done")
    agent = Agent(
        "qwen3-coder",
        base_url=fake_openai.url,
        sessions_dir=tmp_path,
        session_id=write_session(tmp_path, 202, first_prompt=f"Say {TOKEN} please"),
        permissions=PermissionRules(None, skip_permissions=True),
        enable_subagents=False,
        eager_kernel=False,
    )
    async with agent:
        for prompt in ("one", "two"):
            async for _ in agent.stream(prompt):
                pass
    assert walked == [0, 0]  # the SDK transformed the request without its messages …
    sent = fake_openai.requests[-1].messages
    assert len(sent) >= 200 and sent[-1] == {
        "role": "user",
        "content": "two",
    }  # … which went out all the same
    assert (
        f"{TOKEN[0]}{JOINER}{TOKEN[1:]}" in sent[1]["content"]
    )  # broken for an open model, as pydantic-ai does
