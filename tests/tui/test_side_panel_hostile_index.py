"""Ctrl+B with a FIFO as the sessions index: the side panel lists the stored session and the UI goes on
(issue #39, F4).

The side panel's listing read ``.index.json`` with a plain read on the UI's thread: a FIFO there froze the
whole app (Ctrl+Q did nothing). The store's files are read by the one checked reader now.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.store.envelope import encode_envelope, utc_now_ts
from freeact_tui.tui.app import FreeactApp
from tests import helpers
from tests.helpers import ready, until
from tests.scripted import script

executor = helpers.kernel


@pytest.fixture
def make_app(executor: KernelExecutor, tmp_path: Path) -> Callable[..., FreeactApp]:
    def make(s: object) -> FreeactApp:
        return helpers.make_app(
            s, tmp_path / "sessions", tmp_path, config={"subagent_pool_size": 0}, executor=executor,  # type: ignore[arg-type]
        )  # fmt: skip

    return make


@pytest.mark.kernel
@pytest.mark.timeout(120)
@pytest.mark.asyncio(loop_scope="module")
async def test_ctrl_b_with_a_fifo_index_lists_the_session(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    store = tmp_path / "sessions"
    session_id = str(uuid.uuid4())
    (store / session_id).mkdir(parents=True)
    prompt = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "the stored task"}]}
    answer = {"kind": "response", "parts": [{"part_kind": "text", "content": "done"}]}
    (store / session_id / "main.jsonl").write_bytes(
        encode_envelope(prompt, utc_now_ts()) + encode_envelope(answer, utc_now_ts())
    )
    os.mkfifo(store / ".index.json")
    app = make_app(script(["ok"]))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+b")  # froze the whole UI before
        panel = app.main_screen.side_panel
        await until(pilot, lambda: panel.display and panel.sessions.option_count > 0)
        texts = [str(panel.sessions.get_option_at_index(i).prompt) for i in range(panel.sessions.option_count)]
        assert any("the stored task" in t for t in texts), texts
        await pilot.press("ctrl+b")  # the UI still answers keys
        await until(pilot, lambda: not panel.display)
