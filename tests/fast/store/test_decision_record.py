"""A decision reads the same on an action's block live and resumed (issue 43: a rejection's reason came
back as plain "rejected"): every decision, written to the session's record and read back, gives the
block the status the live log gave it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.events import Decision
from freeact_tui.store.decision_record import decision_from_record, decision_record
from freeact_tui.store.transcript import ApprovalRecord
from freeact_tui.toolcalls import CodeAction, call_record
from freeact_tui.tui.decisions import decision_status

_TEXT = st.one_of(st.none(), st.text(max_size=12))
DECISIONS = st.builds(
    Decision,
    st.booleans(),
    remember=st.one_of(st.none(), st.sampled_from(["always", "session"])),
    pattern=_TEXT,
    by_rule=st.booleans(),
    reason=_TEXT,
    per_part=st.booleans(),
    instruction=_TEXT,
)


@given(DECISIONS, st.booleans())
def test_every_decision_reads_the_same_after_the_session_file(decision: Decision, skip: bool) -> None:
    call = call_record(CodeAction(code="print(1)"))
    record = decision_record(call, decision, skip_permissions=skip)
    read = decision_from_record(record)
    assert read is not None
    back, skipped = read
    live = decision_status(decision, skip_permissions=skip)
    assert decision_status(back, skip_permissions=skipped) == live
    parsed = ApprovalRecord.parse(record)  # what the transcript reads
    assert (
        parsed is not None
        and decision_status(parsed.decision, skip_permissions=parsed.skip_permissions) == live
    )


def test_the_reported_case() -> None:
    decision = Decision(False, instruction="use math instead")
    record = decision_record(call_record(CodeAction(code="x")), decision, skip_permissions=False)
    read = decision_from_record(record)
    assert read is not None and decision_status(read[0]) == ("rejected · you said: use math instead", True)
