"""A process driving a multi-turn session with code actions, to be SIGKILLed at a random moment.

Usage: ``python -m tests.kill_driver SESSIONS_DIR WORK_DIR SESSION_ID TURNS``

Each turn: the scripted model writes a code action that prints the turn number and appends it to
``turns.txt`` in the working dir, then answers ``done N``. Every action is approved (skip
permissions). Prints ``turn N`` after each completed turn, and ``ok`` at the end.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.toolcalls import CODE_TOOL


def _prompt_of(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


async def main(sessions_dir: Path, work: Path, session_id: str, turns: int) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        last = messages[-1]
        turn = _prompt_of(messages).removeprefix("turn ")
        if isinstance(last, ModelRequest) and any(isinstance(p, UserPromptPart) for p in last.parts):
            code = (
                f"print('turn {turn}', flush=True)\n"
                f"with open('turns.txt', 'a') as f:\n    f.write('{turn}\\n')\n"
            )
            yield {
                0: DeltaToolCall(
                    name=CODE_TOOL, json_args=json.dumps({"code": code}), tool_call_id=f"t{turn}"
                )
            }
            return
        yield "done "
        yield turn

    agent = Agent(
        FunctionModel(stream_function=stream, model_name="kill-driver"),
        session_id=session_id,
        sessions_dir=sessions_dir,
        working_dir=work,
        skip_permissions=True,
        enable_subagents=False,
    )
    await agent.start()
    try:
        done = sum(
            1
            for m in agent.history
            if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
        )
        for n in range(done + 1, done + turns + 1):
            async for _ in agent.stream(f"turn {n}"):
                pass
            print(f"turn {n}", flush=True)
    finally:
        await agent.stop()
    print("ok", flush=True)


if __name__ == "__main__":
    root, work, sid, count = sys.argv[1:5]
    asyncio.run(main(Path(root), Path(work), sid, int(count)))
