"""Run by a Python that has freeact 0.11 (``FREEACT_PYTHON``): real freeact loads or writes sessions.

It imports only the standard library and pydantic-ai at module level, so this app's tests import
``normalize`` from it too and compare the two sides' loaders on equal terms (pydantic-ai versions
differ between the two environments; the normal form keeps what a model is sent).

    load <sessions_root> <session_id> <agent_id>...   print {agent_id: normal form} as JSON, and under
                                                       "resumed main" what freeact's Session.load() restores
    continue <sessions_root> <session_id>              resume with freeact's Session and append a turn
    write <sessions_root> <session_id>                 append a conversation with freeact's own store
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

# Run as a script, this file's folder is ``sys.path[0]``, and ``tests/freeact/`` (the tests of
# ``freeact_tui.freeact``) would shadow the real freeact this probe is for: look only at installed packages.
if __name__ == "__main__":
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]


def _content(content: Any) -> Any:
    from pydantic_ai.messages import BinaryContent

    if isinstance(content, BinaryContent):
        return {"binary": content.media_type, "sha256": hashlib.sha256(content.data).hexdigest()}
    if isinstance(content, (list, tuple)):
        return [_content(c) for c in content]
    if isinstance(content, (str, int, float, bool)) or content is None:
        return content
    return repr(content)


def normalize(messages: list[Any]) -> list[dict[str, Any]]:
    """Each message's kind and, per part, its kind, tool name, call id, args and content."""
    out: list[dict[str, Any]] = []
    for message in messages:
        parts = []
        for part in message.parts:
            entry: dict[str, Any] = {"part_kind": part.part_kind}
            for name in ("tool_name", "tool_call_id"):
                if hasattr(part, name):
                    entry[name] = getattr(part, name)
            if hasattr(part, "args_as_dict"):
                entry["args"] = part.args_as_dict()
            if hasattr(part, "content"):
                entry["content"] = _content(part.content)
            parts.append(entry)
        out.append({"kind": message.kind, "parts": parts})
    return out


def conversation() -> list[Any]:
    """What freeact's agent stores for a turn with a code action whose result holds an image."""
    from pydantic_ai.messages import (
        BinaryContent,
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
    code = "from PIL import Image\nImage.new('RGB', (1, 1)).save('dot.png')\nprint('saved')"
    return [
        ModelRequest(parts=[SystemPromptPart("You are freeact."), UserPromptPart("draw a dot")]),
        ModelResponse(
            parts=[
                TextPart("Drawing it."),
                ToolCallPart("ipybox_execute_ipython_cell", {"code": code}, "fa-call-1"),
            ],
            model_name="freeact-model",
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(
                    "ipybox_execute_ipython_cell",
                    ["saved", BinaryContent(png, media_type="image/png")],
                    "fa-call-1",
                )
            ]
        ),
        ModelResponse(parts=[TextPart("A dot, saved as dot.png.")], model_name="freeact-model"),
    ]


def main(argv: list[str]) -> None:
    from freeact.agent.session import Session, SessionStore

    command, root, session_id, *agents = argv
    store = SessionStore(Path(root), session_id)
    if command == "load":
        loaded = {agent: normalize(store.load_messages(agent)) for agent in agents}
        # What freeact's agent does on resume (its Session keeps the main history only).
        session = Session(
            agent_id="main", store=store, working_dir=Path(root), inline_max_bytes=1, preview_chars=0
        )
        asyncio.run(session.load())
        loaded["resumed main"] = normalize(session.messages)
        print(json.dumps(loaded))
    elif command == "continue":  # freeact resumes the session and adds a turn, as its agent would
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

        session = Session(
            agent_id="main", store=store, working_dir=Path(root), inline_max_bytes=1, preview_chars=0
        )
        asyncio.run(session.load())
        turn = [
            ModelRequest(parts=[UserPromptPart("asked in freeact")]),
            ModelResponse(parts=[TextPart("freeact answers")]),
        ]
        asyncio.run(session.append(turn))
        print(json.dumps(normalize(turn)))
    elif command == "write":
        messages = conversation()
        store.append_messages("main", messages[:2])  # freeact appends as a turn goes on
        store.append_messages("main", messages[2:])
        print(json.dumps(normalize(messages)))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
