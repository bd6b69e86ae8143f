"""One check decides whether a typed pattern can be a rule: the approval dialog shows it while the
pattern is typed and the store applies it when it saves (the dialog once let the store raise)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.effects import CLASSES
from freeact_tui.permissions.match import KINDS
from freeact_tui.permissions.rules import PermissionRules, rule_problem

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_", min_size=1, max_size=12)


@given(kind=st.sampled_from(KINDS), name=WORDS, effect=st.sampled_from(["allow", "ask", "deny"]))
def test_the_store_saves_exactly_what_the_check_lets_through(kind: str, name: str, effect: str) -> None:
    pattern = f"effects:{name}"
    problem = rule_problem(kind, pattern, effect)
    rules = PermissionRules(None)
    try:
        rules.add(kind, pattern, scope="session", effect=effect)  # type: ignore[arg-type]
    except ValueError as exc:
        assert problem == str(exc)
    else:
        assert problem is None
    if name not in CLASSES:
        assert problem is not None and repr(name) in problem
