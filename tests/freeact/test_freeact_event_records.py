"""Our event records (a turn's error, the turn a failed model request took back) in REAL freeact 0.11.

freeact validates every line of a history as a pydantic-ai message: an event record is an empty
request, so freeact loads it, resumes the session and appends after it, and this app then loads the
result with the record still out of the model's history. Skips without ``FREEACT_PYTHON``.
"""

from __future__ import annotations

import pytest
from pydantic_ai.exceptions import ModelHTTPError

from freeact_tui.events import AgentError
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.store.event_record import event_of
from freeact_tui.store.export import render_text
from freeact_tui.store.sessions import SessionStore
from tests import helpers
from tests.freeact.test_freeact_interop import freeact, freeact_load, our_agent, ours
from tests.freeact_peer import find_freeact
from tests.freeact_probe import normalize
from tests.helpers import of, run
from tests.scripted import Code, Fail, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel


@pytest.fixture(scope="module")
def freeact_python() -> str:
    python, why = find_freeact()
    if python is None:
        pytest.skip(why)
    return python


async def test_real_freeact_loads_and_continues_a_session_with_an_error_record(
    executor: KernelExecutor, freeact_python: str
) -> None:
    root = executor.working_dir.parent / "event-sessions"
    s = script(
        [Code("print(6 * 7)", call_id="c1")],
        ["42."],
        [Code("print(7 * 8)", call_id="c2")],
        [Fail(ModelHTTPError(401, "scripted", body={"error": "bad key"}))],
    )
    async with our_agent(s.model(), root, executor.working_dir, executor) as agent:
        await run(agent, "six times seven")
        events = await run(agent, "seven times eight")
        assert [e.kind for e in of(events, AgentError)] == ["model"]
        sid = agent.session_id
        history = normalize(agent.history)
    stored = SessionStore(root).session(sid).load().messages
    (record,) = [m for m in stored if event_of(m) is not None]
    assert len(stored) == len(history) + 1 and stored[-1] is record  # the failed turn: only in the record
    shown = render_text(stored)  # ``sessions show``: the turn the user saw, then its error
    assert shown.index("seven times eight") < shown.index("print(7 * 8)") < shown.index("── Error (model)")

    by_freeact = freeact_load(freeact_python, root, sid, "main")["main"]
    assert by_freeact == ours(root, sid, "main") and by_freeact[-1] == {"kind": "request", "parts": []}
    added = freeact(freeact_python, "continue", root, sid)  # freeact resumes it and appends a turn
    async with our_agent(
        script(["unused"]).model(), root, executor.working_dir, executor, session_id=sid
    ) as agent:
        assert normalize(agent.history) == history + added  # the record stays out of the model's history
        assert event_of(agent.transcript[len(history)]) is not None
