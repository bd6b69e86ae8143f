"""``initialize`` is answered before the heavy modules load (``acp.handshake``), with exactly what the
SDK's types give (``FreeactAcpAgent.initialize``), so that an editor waits for the interpreter and the
command line only."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.handshake import PROTOCOL_VERSION, early_answer, initialize_result
from freeact_tui.acp.server import FreeactAcpAgent
from tests.acp_client import agent_env
from tests.helpers import CLI

HEAVY = ("pydantic_ai", "acp.schema", "freeact_tui.agent")


@given(st.integers(min_value=0, max_value=65535))
@settings(max_examples=30, deadline=None)
def test_the_early_answer_is_what_the_sdk_types_give(version: int) -> None:
    import acp

    agent = FreeactAcpAgent(lambda _: None)  # type: ignore[arg-type,return-value]
    typed = asyncio.run(agent.initialize(version))
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION
    # as the SDK's connection writes a result (acp.connection)
    sent = typed.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
    assert initialize_result(version) == sent
    answer = early_answer(
        {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": version}}
    )
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": initialize_result(version)}


@given(
    st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(["jsonrpc", "id", "method", "params"]), st.none() | st.integers() | st.text()
        ),
        st.fixed_dictionaries(
            {"id": st.integers(), "method": st.just("initialize")},
            optional={"params": st.dictionaries(st.text(), st.integers() | st.text() | st.booleans())},
        ),
    )
)
@settings(max_examples=200, deadline=None)
def test_anything_but_a_well_formed_initialize_is_left_to_the_sdk(message: dict[str, Any] | None) -> None:
    answer = early_answer(message)
    if answer is None:
        return
    assert message is not None and message["method"] == "initialize"
    version = message["params"]["protocolVersion"]
    assert type(version) is int and 0 <= version <= 65535
    assert answer["id"] == message["id"]


def _imported(log: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in log.splitlines() if line.startswith("import time:")}


@pytest.mark.timeout(120)
async def test_initialize_is_answered_before_the_heavy_modules_are_imported(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        CLI[0], "-X", "importtime", *CLI[1:], "acp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=tmp_path, env=agent_env(),
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    log = ""
    try:
        # everything it imports before it reads the first message (it waits for it: nothing is sent yet)
        deadline = time.monotonic() + 60
        while "freeact_tui.acp.handshake" not in _imported(log) or not log.endswith("\n"):
            assert time.monotonic() < deadline, log[-2000:]
            log += (await asyncio.wait_for(proc.stderr.read(65536), 60)).decode()
        quiet = True
        while quiet:
            try:
                log += (await asyncio.wait_for(proc.stderr.read(65536), 1.5)).decode()
            except TimeoutError:
                quiet = False
        before = _imported(log)
        assert not {m for m in before for h in HEAVY if m == h or m.startswith(h + ".")}
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
        await proc.stdin.drain()
        answer = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        assert answer["result"] == initialize_result(1)
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 60)
