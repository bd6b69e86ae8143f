"""#44 (atk9a F4): one session's plan reached another session's client (the plans folder outside a project
is shared by every session and process; ``PlanWatch`` sent any changed ``.md``).

The class: session-scoped data kept in a shared folder. A plan is the session's whose call wrote it: a
file changed in the plans folder is sent only to the session whose call names it (its code or its
arguments). Two watches of one folder (two sessions, here or in two processes): each sees its own plan,
never the other's; generated names: a name is named only as a whole, never as the tail of another.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.plan import PlanWatch, names_file

PLAN = "- [ ] {step}\n- [ ] second\n"


def _write(path: Path, step: str, tick: int) -> None:
    path.write_text(PLAN.format(step=step))
    os.utime(path, ns=(tick, tick))  # a change each write, however fast the file system's clock


def _steps(update: object) -> list[str]:
    return [e.content for e in update.entries] if update is not None else []  # type: ignore[attr-defined]


def test_a_plan_written_by_one_session_reaches_only_that_session(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    first, second = PlanWatch([plans]), PlanWatch([plans])
    _write(plans / "b-task.md", "SECRET_STEP_OF_B", 10**18)
    code_of_b = f"open({str(plans / 'b-task.md')!r}, 'w').write(plan)"
    # the first session's call ends first (print(1)): nothing of it names the plan
    assert first.check(None, "print(1)") is None
    assert _steps(second.check(None, code_of_b)) == ["SECRET_STEP_OF_B", "second"]
    # the first session's own plan, written with a file tool: its path is the call's argument
    _write(plans / "a-task.md", "step of a", 2 * 10**18)
    assert second.check(None, "print(2)") is None
    assert _steps(first.check(None, "plans/a-task.md")) == ["step of a", "second"]


def test_a_plan_written_through_the_client_is_the_session_s_own(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    watch = PlanWatch([plans])
    update = watch.check({str(plans / "x.md"): PLAN.format(step="typed in the editor")}, "")
    assert _steps(update) == ["typed in the editor", "second"]


NAME = st.text(st.sampled_from("abz-_.0"), min_size=1, max_size=6).map(lambda s: s + ".md")


@settings(max_examples=300, deadline=None)
@given(name=NAME, before=st.text(max_size=6), after=st.text(max_size=6), other=NAME)
def test_a_name_is_named_only_as_a_whole(name: str, before: str, after: str, other: str) -> None:
    path = Path("/plans") / name
    assert names_file(f"{before} {name}\n{after}", path)
    assert names_file(f"p = '/plans/{name}'", path)
    assert names_file(f'{{"path": "plans/{name}"}}', path)
    longer = "x" + other.removesuffix(".md") + name
    assert not names_file(longer, path)  # another file whose name ends with this one
    assert not names_file(name + "x", path)
