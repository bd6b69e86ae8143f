"""#44 F6: opening a session is atomic within the process.

Three opens of one stored session sent back to back (load, resume, load) each started an agent of its
own: three kernels, and after ``session/close`` two were left running. Now one lock per session id is
held while it is opened or closed: an open of an id being opened waits and gets the same session, and a
close waits for an open in flight. Generated interleavings of load/resume/fork/close on one id, sent
at once to the real ``freeact-tui acp``: never more than one kernel for the id, none once it is closed.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from acp import RequestError, text_block

from tests.acp_client import RecordingClient, acp_agent, write_config
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

OPS = ["load", "resume", "fork", "close"]


def kernels(pid: int) -> list[psutil.Process]:
    """The kernel processes under the agent process (each session's agent starts one)."""
    found = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if "kernelapp" in " ".join(child.cmdline()) and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def _settled(pid: int, at_most: int, limit: float) -> int:
    deadline = time.monotonic() + limit
    while len(found := kernels(pid)) > at_most and time.monotonic() < deadline:
        time.sleep(0.2)
    return len(found)


async def settled_kernels(pid: int, at_most: int, limit: float = 30.0) -> int:
    """The number of kernels once it is at most ``at_most`` (or after ``limit`` seconds: what is left)."""
    return await asyncio.to_thread(_settled, pid, at_most, limit)


async def test_opens_of_one_session_at_once_start_one_kernel_and_close_leaves_none(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake_openai.script(Reply("hello"))
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, write_config(tmp_path)), cwd=work) as (conn, proc):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])  # stored
        await conn.close_session(session_id=sid)
        assert await settled_kernels(proc.pid, 0) == 0

        def op(name: str) -> Any:
            match name:
                case "load":
                    return conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
                case "resume":
                    return conn.resume_session(cwd=str(work), session_id=sid, mcp_servers=[])
                case "fork":
                    return conn.fork_session(cwd=str(work), session_id=sid, mcp_servers=[])
            return conn.close_session(session_id=sid)

        # the reported sequence first, then generated ones (fixed seeds: the same cases every run)
        rounds = [["load", "resume", "load"]] + [
            random.Random(seed).choices(OPS, k=random.Random(seed).randint(2, 6)) for seed in range(4)
        ]
        for ops in rounds:
            results = await asyncio.gather(*(op(name) for name in ops), return_exceptions=True)
            unexpected = [
                r for r in results if isinstance(r, BaseException) and not isinstance(r, RequestError)
            ]
            assert not unexpected, (ops, unexpected)
            forks = [
                r.session_id
                for name, r in zip(ops, results, strict=True)
                if name == "fork" and not isinstance(r, BaseException)
            ]
            for fork in forks:  # a fork is a session of its own, with its own kernel: closed here
                await conn.close_session(session_id=fork)
            assert await settled_kernels(proc.pid, 1) <= 1, (ops, [k.cmdline() for k in kernels(proc.pid)])
            try:
                await conn.close_session(session_id=sid)
            except RequestError:  # the round ended on a close already
                pass
            assert await settled_kernels(proc.pid, 0) == 0, (ops, [k.cmdline() for k in kernels(proc.pid)])
        # and the session still opens and answers
        fake_openai.script(Reply("again"))
        await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
        answer = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
    assert answer.stop_reason == "end_turn"
