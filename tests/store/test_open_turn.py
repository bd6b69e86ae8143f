"""#44 leftover, the class '"is a turn open?" known only in one process's memory': where an open turn began
is on disk (``store/open_turn``) at every moment of the turn, whatever the turn does, and nothing is open
once it has ended. Generated turns of the real agent (the model scripted: answers, thoughts, a turn cut
by a cancel mid-stream); at each event the marker another process would read is checked."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.agent.agent import Agent
from freeact_tui.store import open_turn
from freeact_tui.store.open_turn import history_sizes, open_turn_sizes
from tests.scripted import Think, script

STEPS = st.lists(
    st.lists(st.sampled_from(["text", "think"]), min_size=1, max_size=3).map(
        lambda items: [Think("hmm") if i == "think" else "an answer" for i in items]
    ),
    min_size=1,
    max_size=3,
)


async def _turns(tmp: Path, replies: list[list[object]], cancel_at: int | None) -> None:
    agent = Agent(script(*replies).model(), sessions_dir=tmp / "sessions", working_dir=tmp, eager_kernel=False)
    async with agent:
        assert agent.session is not None
        for index, _ in enumerate(replies):
            before = history_sizes(agent.session.dir) if agent.session.dir.is_dir() else {}
            seen = 0
            async for _event in agent.stream(f"prompt {index}"):
                seen += 1
                assert open_turn_sizes(agent.session.dir) == before  # what a fork now would copy up to
                if cancel_at is not None and seen == cancel_at and index == len(replies) - 1:
                    agent.cancel()
            assert open_turn_sizes(agent.session.dir) is None  # at rest: copied whole
    assert not (agent.session.dir / open_turn.OPEN_TURN_FILE).exists()


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(replies=STEPS, cancel_at=st.none() | st.integers(1, 4))
def test_where_an_open_turn_began_is_on_disk_while_it_runs(
    tmp_path_factory: object, replies: list[list[object]], cancel_at: int | None
) -> None:
    tmp = tmp_path_factory.mktemp("turns")  # type: ignore[attr-defined]
    asyncio.run(_turns(tmp, replies, cancel_at))


def test_a_marker_of_a_process_gone_names_no_open_turn(tmp_path: Path) -> None:
    (tmp_path / "main.jsonl").write_text("{}\n")
    open_turn.mark_open(tmp_path)
    assert open_turn_sizes(tmp_path) == {"main.jsonl": 3}
    marker = tmp_path / open_turn.OPEN_TURN_FILE
    marker.write_text(marker.read_text().replace(str(os.getpid()), "999999999"))  # a pid no process has
    assert open_turn_sizes(tmp_path) is None
    for junk in ("", "[]", '{"pid": 1}', '{"pid": true, "sizes": {}}', '{"pid": 1, "sizes": {"a": "b"}}'):
        marker.write_text(junk)
        assert open_turn_sizes(tmp_path) is None
