"""Interoperation with freeact: its session files load here, and ours pass the rules of its loader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.store import SessionStore
from tests.helpers import freeact_load

FIXTURES = Path(__file__).parents[2] / "fixtures" / "freeact_sessions"
FREEACT_ID = "3f1c2b9e-5d47-4a8e-9c21-7b6f0e4d8a10"
OLD_ID = "0b9e8c7d-2a41-4f3e-8d5c-6e1f2a3b4c5d"
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    root = tmp_path / "sessions"
    shutil.copytree(FIXTURES, root)
    return SessionStore(root)


def test_freeact_session_loads_with_every_part(store: SessionStore) -> None:
    loaded = store.session(FREEACT_ID).load()
    assert loaded.damage is None and len(loaded.messages) == 8
    first, response, tool_return, *_ = loaded.messages
    assert isinstance(first, ModelRequest) and isinstance(response, ModelResponse)
    assert first.parts[0].part_kind == "system-prompt"
    assert first.parts[1].content == "Plot a sine wave from 0 to 2π and tell me where it crosses zero."  # type: ignore[union-attr]
    thinking, call = response.parts
    assert isinstance(thinking, ThinkingPart) and thinking.signature == "EqQBCkgIBxABGAIiQL8sig"
    assert isinstance(call, ToolCallPart) and call.tool_name == "ipybox_execute_ipython_cell"
    assert "np.sin(x)" in call.args_as_dict()["code"]
    assert isinstance(tool_return, ModelRequest)
    result = tool_return.parts[0]
    assert isinstance(result, ToolReturnPart)
    content: Any = result.content
    image = content[1]
    assert (
        isinstance(image, BinaryContent)
        and image.data.startswith(b"\x89PNG")
        and image.media_type == "image/png"
    )
    prompt: Any = loaded.messages[4].parts[0]
    prompt_image = prompt.content[1]
    assert isinstance(prompt_image, BinaryContent) and prompt_image.data == image.data
    assert store.session(FREEACT_ID).subagent_ids() == ["sub-7a3f"]
    assert len(store.session(FREEACT_ID).load("sub-7a3f").messages) == 2


def test_session_of_an_older_pydantic_ai_loads(store: SessionStore) -> None:
    loaded = store.session(OLD_ID).load()
    assert loaded.damage is None and len(loaded.messages) == 6
    response = loaded.messages[1]
    assert isinstance(response, ModelResponse)
    assert response.usage.input_tokens == 310 and response.usage.output_tokens == 22  # was request_tokens
    retry = loaded.messages[2].parts[0]  # a legacy retry-prompt
    assert "never closed" in str(retry.content)  # type: ignore[union-attr]
    final = loaded.messages[-1].parts[0]
    assert isinstance(final, TextPart) and final.content == "17 * 23 = 391."


def test_freeact_session_resumes_here_and_stays_loadable_by_freeact(store: SessionStore) -> None:
    session = store.session(FREEACT_ID)
    history = session.load().messages
    follow_up: list[ModelMessage] = [
        ModelRequest(
            parts=[UserPromptPart(["And this one?", BinaryContent(b"\x89PNG-2", media_type="image/png")])]
        ),
        ModelResponse(parts=[TextPart("Another pixel.")], model_name="claude-sonnet-4-5-20250929"),
    ]
    session.append(follow_up)

    by_freeact = freeact_load(session.dir / "main.jsonl")

    expected = ModelMessagesTypeAdapter.dump_python(history + follow_up, mode="json")
    assert ModelMessagesTypeAdapter.dump_python(by_freeact, mode="json") == expected
    assert store.session(FREEACT_ID).info().message_count == 10


def test_sessions_written_here_pass_freeact_loader_rules(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.new_session()
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[UserPromptPart(["look", BinaryContent(b"\x00\x01binary", media_type="image/png")])]
        ),
        ModelResponse(parts=[ToolCallPart("ipybox_execute_ipython_cell", {"code": "1 + 1"}, "c")]),
        ModelRequest(parts=[ToolReturnPart("ipybox_execute_ipython_cell", "2", "c")]),
        ModelResponse(parts=[TextPart("2")]),
    ]
    session.append(messages, agent_id="main")
    session.append(messages[:2], agent_id="sub-0c1d")
    session.rollback(3)

    main = freeact_load(session.dir / "main.jsonl")
    sub = freeact_load(session.dir / "sub-0c1d.jsonl")

    assert ModelMessagesTypeAdapter.dump_python(main, mode="json") == ModelMessagesTypeAdapter.dump_python(
        messages[:3], mode="json"
    )
    assert len(sub) == 2
    first: Any = main[0].parts[0]
    assert first.content[1].data == b"\x00\x01binary"
    raw = json.loads((session.dir / "main.jsonl").read_text().splitlines()[0])
    assert raw["message"]["parts"][0]["content"][1]["data"] == "AAFiaW5hcnk="  # base64, as freeact writes
