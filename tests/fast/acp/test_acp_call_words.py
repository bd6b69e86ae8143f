"""Two classes of what a client sees of a call, over generated cases (no process needed):

- every call that fails reaches the client as a ``tool_call`` with status ``failed``, whether it was
  asked about first or failed before it could be (``TurnUpdates``), and no update names a call the
  client was never shown;
- the "always" options say what the rule they save covers, never a fingerprint nobody can read.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.permission import permission_options
from freeact_tui.acp.turn_updates import TurnUpdates
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput, Decision, ToolOutput
from freeact_tui.permissions.cells import cell_fingerprint
from freeact_tui.toolcalls import CodeAction, FileWrite, ShellAction, ShellScript, ToolCall

calls = st.sampled_from(["c1", "c2", "c3", "c4"])
steps = st.lists(
    st.tuples(
        calls,
        st.booleans(),
        st.sampled_from(["asked", "ruled", "unasked"]),
        st.sampled_from(["code", "tool"]),
    ),
    min_size=1,
    max_size=6,
    unique_by=lambda step: step[0],
)


async def _updates(plan: list[tuple[str, bool, str, str]]) -> list[dict[str, object]]:
    turn = TurnUpdates(Path("/work"))
    seen: list[dict[str, object]] = []

    def add(updates: list[object]) -> None:
        seen.extend(u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in updates)  # type: ignore[attr-defined]

    for corr, failed, how, kind in plan:
        if how != "unasked":
            request = ApprovalRequest(CodeAction("print(1)"), corr_id=corr)
            if how == "ruled":
                request.resolve(Decision(True, by_rule=True))
            add(turn.see(request))
            if how == "asked":
                request.resolve(Decision(True))
                add(turn.decided(request, Decision(True)))
        end = (
            CodeExecutionOutput("boom" if failed else "ok", is_error=failed, corr_id=corr)
            if kind == "code"
            else ToolOutput("boom" if failed else "ok", is_error=failed, corr_id=corr)
        )
        add(turn.see(end))
    return seen


@given(steps)
@settings(max_examples=150, deadline=None)
def test_every_failed_call_reaches_the_client_as_a_failed_tool_call(
    plan: list[tuple[str, bool, str, str]],
) -> None:
    updates = asyncio.run(_updates(plan))
    started = [u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"]
    for u in updates:  # an update names a call the client was shown first
        assert u["toolCallId"] in started
    failed = {u["toolCallId"] for u in updates if u.get("status") == "failed"}
    for corr, did_fail, _, _ in plan:
        assert (corr in failed) is did_fail, (corr, updates)


texts = st.text(min_size=1, max_size=200)


@given(
    st.one_of(
        texts.map(CodeAction),
        texts.map(ShellScript),
        st.from_regex(r"[a-z]{1,8}( [a-z0-9./-]{1,10}){0,3}", fullmatch=True).map(ShellAction),
    )
)
@settings(max_examples=150, deadline=None)
def test_always_options_say_what_they_cover_not_a_hash(call: ToolCall) -> None:
    names = [o.name for o in permission_options(call)]
    always = [n for n in names if n.startswith("Always")]
    assert len(always) == 2
    for name in always:
        assert "cell:" not in name
        if isinstance(call, CodeAction | ShellScript):
            assert cell_fingerprint(call.code if isinstance(call, CodeAction) else call.script) not in name
            assert "one exact" in name  # rulepatterns.rule_words, the app's own words for the rule
        assert not re.search(r"[0-9a-f]{12,}", name.replace(getattr(call, "command", ""), ""))


def test_a_file_write_rule_names_its_path() -> None:
    call = FileWrite("notes/todo.md", "x")
    assert [o.name for o in permission_options(call)][1] == "Always allow writes of notes/todo.md, in this folder only"
    elsewhere = FileWrite("/srv/notes/todo.md", "x")
    assert [o.name for o in permission_options(elsewhere)][1] == "Always allow writes of /srv/notes/todo.md"
