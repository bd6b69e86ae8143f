"""Kernel faults in one conversation: each is reported clearly and the conversation goes on.

A real agent owning a real ipybox kernel, driven by a scripted model: the kernel exits (``os._exit``),
runs out of memory under a cap, prints 100 MB, forks a child that outlives the cell, and loops
forever until the turn is cancelled (Esc in the app). After each, the next turn runs code normally;
after ``stop()`` no process of the kernel is left.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentEvent, ApprovalRequest, Cancelled, CodeExecutionOutput, Response
from freeact_tui.permissions.rules import PermissionRules
from tests.scripted import Code, Script

pytestmark = [pytest.mark.kernel]

ALIVE = "print('alive', 6 * 7)"

FAULTS: dict[str, str] = {
    # The sleep lets the kernel's IOPub thread send the line: output still inside the dying process
    # cannot be saved by anyone.
    "exit": "print('going', flush=True)\nimport os, time\ntime.sleep(0.3)\nos._exit(3)",
    "memory": (
        "import resource\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
        "used = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (used + 256 * 2**20, hard))\n"
        "try:\n"
        "    hog = bytearray(2 * 2**30)\n"
        "finally:\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))"
    ),
    "flood": (
        "import sys\n"
        "line = 'y' * 1023 + '\\n'\n"
        "for _ in range(100 * 1024):\n"
        "    sys.stdout.write(line)\n"
        "print('flood done')"
    ),
    "fork": (
        "import os, time\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    time.sleep(600)\n"
        "    os._exit(0)\n"
        "print('forked', child)"
    ),
    "loop": "print('looping', flush=True)\nwhile True:\n    pass",
}


class Conversation:
    """A scripted model whose next code action is set per turn, and the events of each turn."""

    def __init__(self) -> None:
        self.code = ALIVE
        self.script = Script([])
        self.script._stream = self._stream  # type: ignore[method-assign]

    async def _stream(self, messages, info):  # type: ignore[no-untyped-def]
        self.script.requests.append(list(messages))
        last = messages[-1]
        prompted = any(getattr(p, "part_kind", "") == "user-prompt" for p in last.parts)
        step = ["noted"] if not prompted else [Code(self.code, call_id=f"c{len(self.script.requests)}")]
        inner = Script([step])
        async for item in inner._stream(messages, info):
            yield item


async def turn(
    agent: Agent, convo: Conversation, code: str, on_event: Callable[[AgentEvent], None] | None = None
) -> list[AgentEvent]:
    convo.code = code
    events: list[AgentEvent] = []
    async for event in agent.stream("go"):
        events.append(event)
        if isinstance(event, ApprovalRequest) and not event.decided:
            event.approve(True)
        if on_event is not None:
            on_event(event)
    return events


def output(events: list[AgentEvent]) -> CodeExecutionOutput:
    outs = [e for e in events if isinstance(e, CodeExecutionOutput)]
    assert outs, events
    return outs[-1]


async def assert_goes_on(agent: Agent, convo: Conversation) -> None:
    events = await turn(agent, convo, ALIVE)
    out = output(events)
    assert not out.is_error and out.text == "alive 42", out
    assert [e.content for e in events if isinstance(e, Response)] == ["noted"]


async def test_kernel_faults_are_reported_and_the_conversation_goes_on(tmp_path: Path) -> None:
    before = {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}
    convo = Conversation()
    agent = Agent(
        convo.script.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
        execution_timeout=120,
    )
    await agent.start()
    try:
        await assert_goes_on(agent, convo)

        died = output(await turn(agent, convo, FAULTS["exit"]))
        assert died.is_error and "kernel died" in died.text and died.text.startswith("going")
        await assert_goes_on(agent, convo)

        oom = output(await turn(agent, convo, FAULTS["memory"]))
        assert oom.is_error and "MemoryError" in oom.text
        await assert_goes_on(agent, convo)

        flood = output(await turn(agent, convo, FAULTS["flood"]))
        assert not flood.is_error and flood.truncated
        assert flood.result_path is not None and flood.result_path.stat().st_size > 100 * 2**20
        assert "flood done" in flood.result_path.read_text()[-100:]
        sent = str(convo.script.requests[-1][-1].parts[0].content)  # what the model got back: bounded
        assert len(sent) < 64 * 1024 and str(flood.result_path) in sent
        await assert_goes_on(agent, convo)

        forked = output(await turn(agent, convo, FAULTS["fork"]))
        child = int(forked.text.split()[-1])
        assert not forked.is_error and psutil.pid_exists(child)  # the cell ended; its child lives on
        await assert_goes_on(agent, convo)

        looping = asyncio.Event()

        def watch(event: AgentEvent) -> None:
            if "looping" in str(getattr(event, "text", "")):
                looping.set()

        async def press_esc() -> None:
            await asyncio.wait_for(looping.wait(), 60)
            agent.cancel()

        esc = asyncio.create_task(press_esc())
        events = await turn(agent, convo, FAULTS["loop"], watch)
        await esc
        assert any(isinstance(e, Cancelled) for e in events)
        await assert_goes_on(agent, convo)
    finally:
        await agent.stop()

    async def settled() -> set[int]:
        for _ in range(100):
            left = {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)} - before
            alive = {
                pid for pid in left if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"
            }
            if not alive and not psutil.pid_exists(child):
                return alive
            await asyncio.sleep(0.1)
        return alive

    assert await settled() == set()
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == "zombie"
