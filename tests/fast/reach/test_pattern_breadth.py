"""The breadth check reads a shell pattern as matching reads a command (#39, round 2).

Class: the check read the pattern's first word as spelled (``\\python3 *``, ``'python3' *``,
``python3.11 *``, ``LC_ALL=C *``, ``command *``, ``uv run *`` passed), while matching reads the program
after unwrapping. Mechanism: ``rulebreadth.broad_reason`` unwraps the pattern's literal head with the
same ``shellprograms.unwrap``, names interpreters by family, and — for a project's rule file and for the
dialog's proposals (``strict``) — lets a wildcard through only for programs known only to read.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.patterns import proposed_pattern
from freeact_tui.permissions.rules import rules_for
from freeact_tui.project.policy import project_rule_refusal
from freeact_tui.reach.breadth import READ_ONLY_PROGRAMS, RUNS_ANYTHING, broad_reason
from freeact_tui.reach.globs import glob_matches
from freeact_tui.shell.programs import WORD_RUNNERS
from freeact_tui.toolcalls import ShellAction

ATTACK = (
    r"\python3 *", "'python3' *", '"python3" *', "python3.11 *", "pypy3.10 *", "ipython3 *", "command *",
    "builtin *", "busybox *", "setsid *", "stdbuf *", "chrt *", "flock *", "ionice *", "unshare *", "strace *",
    "setpriv *", "script *", "systemd-run *", "parallel *", "nix-shell *", "uv run *", "conda run *",
    "pdm run *", "hatch run *", "npm run *", "cargo *", "go run *", "tox *", "jupyter *", "LC_ALL=C *",
    "FOO=1 *", "/usr/bin/python3 *", "env FOO=1 *", "nice -n 5 *", "timeout 5 *", "make test *", "pytest *",
    "git *", "git -c core.pager=less log *", "find . -exec ls {} ; -exec *", "sudo ls *",
)  # fmt: skip


@pytest.mark.parametrize("pattern", ATTACK)
def test_a_project_may_not_allow_a_program_that_runs_code(pattern: str) -> None:
    assert project_rule_refusal("allow", "shell", pattern) is not None


@pytest.mark.parametrize("pattern", ["ls *", "wc -l *", "grep -n *", "git log *", "cat src/*", "git status"])
def test_a_project_may_still_allow_reading(pattern: str) -> None:
    assert project_rule_refusal("allow", "shell", pattern) is None


def test_a_trusted_projects_spelling_of_python_is_never_applied(tmp_path: Path) -> None:
    (tmp_path / ".freeact").mkdir()
    allow = [{"type": "ShellAction", "tool_name": "bash", "command": p} for p in ATTACK]
    (tmp_path / ".freeact" / "permissions.toml").write_text(tomli_w.dumps({"allow": allow}))
    rules = rules_for(tmp_path, user_file=tmp_path / "user.json")
    assert not [e for e in rules.rules() if e.scope == "project"]
    for command in (r"\python3 -c 'import os'", "LC_ALL=C python3 -c 1", "uv run python -c 1", "command id"):
        assert rules.check(ShellAction(command)) == "ask", command


_INTERPRETERS = sorted((RUNS_ANYTHING | WORD_RUNNERS) - {"."})
_DECOR = st.sampled_from(["{p}", "\\{p}", "'{p}'", '"{p}"', "/usr/bin/{p}", "./{p}", "{p}3", "{p}3.11",
                          "{p}-3", "{p}2.7"])  # fmt: skip
_BEFORE = st.sampled_from(["", "FOO=1 ", "LC_ALL=C ", "A=1 B=2 ", "command ", "nice -n 5 ", "env X=1 ",
                           "stdbuf -oL ", "timeout 5 ", "setsid ", "sudo -u root "])  # fmt: skip
_AFTER = st.sampled_from(["*", "run *", "exec *", "-c *", "x *", "-m *"])


@settings(max_examples=300, deadline=None)
@given(program=st.sampled_from(_INTERPRETERS), decor=_DECOR, before=_BEFORE, after=_AFTER)
def test_no_spelling_of_a_program_that_runs_code_passes_the_project_bound(
    program: str, decor: str, before: str, after: str
) -> None:
    pattern = before + decor.format(p=program) + " " + after
    assert broad_reason("shell", pattern, strict=True) is not None, pattern
    if after == "*" and not decor.startswith("{p}-"):
        assert broad_reason("shell", pattern) is not None, pattern  # the dialog warns as well


_PROGRAMS = st.sampled_from(
    sorted((READ_ONLY_PROGRAMS | RUNS_ANYTHING | WORD_RUNNERS | {"touch", "rm"}) - {"."})
)
_ARGS = st.lists(st.sampled_from(["-c", "1", "-la", "x.py", "run", "test", "--flag", "a b", "2*3", "-n", "5"]),
                 max_size=4)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(before=_BEFORE, program=_PROGRAMS, args=_ARGS)
def test_a_proposed_pattern_is_never_broad_and_matches_the_command(
    before: str, program: str, args: list[str]
) -> None:
    command = before + " ".join(shlex.quote(w) for w in [program, *args])
    pattern = proposed_pattern(ShellAction(command))
    assert glob_matches(pattern, command), (command, pattern)
    if not args and program in RUNS_ANYTHING | WORD_RUNNERS:  # a lone ``bash`` reads code: no narrower rule
        assert pattern == command
        return
    assert broad_reason("shell", pattern, strict=True) is None, (command, pattern)


@pytest.mark.parametrize(
    "command",
    ["LC_ALL=C python3 -c 1", "command python3 -c 1", "busybox sh -c id", "setsid python3 x",
     "stdbuf -oL python3 x", "chrt 1 python3 x", "uv run pytest", "FOO=1 ls -la"],
)  # fmt: skip
def test_the_dialog_proposes_no_wrapper_wide_pattern(command: str) -> None:
    pattern = proposed_pattern(ShellAction(command))
    assert broad_reason("shell", pattern, strict=True) is None and glob_matches(pattern, command), pattern
