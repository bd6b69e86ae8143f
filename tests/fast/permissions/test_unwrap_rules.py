"""Deny rules see through every wrapper before matching (#39): one unwrapping step
(``shellprograms.unwrap``) looks through ``eval``, ``sh -c``, ``busybox``, ``git -c``/aliases, ``$'…'``,
``command``/``exec``/``xargs``/``nice``/``timeout``/``nohup`` …, recursively; where the inner command
cannot be known (``eval "$x"``, ``sh file``) the answer is "cannot tell": asked, never allowed.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import ShellAction, ShellScript

# Allow rules a user may well hold for the wrappers themselves: none may let a denied program through.
WRAPPER_ALLOWS = ("eval *", "sh *", "bash *", "busybox *", "toybox *", "git *", "env *", "command *",
                  "exec *", "xargs *", "nice *", "timeout *", "nohup *", "watch *", "trap *", "source *",
                  "stdbuf *", "sudo *")  # fmt: skip


def rules(tmp_path: Path) -> PermissionRules:
    found = PermissionRules(None, defaults=False, working_dir=tmp_path)
    found.add("shell", "rm *", scope="session", effect="deny")
    for pattern in WRAPPER_ALLOWS:
        found.add("shell", pattern, scope="session")
    return found


DENIED = [
    "eval rm -rf x",
    'eval "rm -rf x"',
    "eval 'rm' -rf x",
    "eval eval rm -rf x",
    "sh -c 'rm -rf x'",
    'bash -c "rm -rf x"',
    "bash -lc 'rm -rf x'",
    "bash -e -c 'rm -rf x'",
    "env FOO=1 sh -c 'rm -rf x'",
    "env -i bash -c 'rm -rf x'",
    "env -S 'rm -rf x'",
    "busybox rm -rf x",
    "toybox rm -rf x",
    "busybox sh -c 'rm -rf x'",
    "git -c alias.x='!rm -rf x' x",
    "git -c alias.x='!f() { rm -rf x; }; f' x",
    "git -c core.pager='rm -rf x' log",
    "git -c alias.st='!rm' st -rf x",
    "git -c alias.st='!sh -c' st 'rm -rf x'",
    "git -c alias.y='!rm -rf x' -c alias.z=status z",
    "$'rm' -rf x",
    "$'\\x72\\x6d' -rf x",
    "$'\\162m' -rf x",
    "$'r'm -rf x",
    "command rm -rf x",
    "exec rm -rf x",
    "xargs rm -rf",
    "nice -n 5 rm -rf x",
    "timeout 5 rm -rf x",
    "nohup rm -rf x",
    "stdbuf -o0 rm -rf x",
    "pkexec rm -rf x",
    "runuser -u root rm -rf x",
    "watch rm -rf x",
    "trap 'rm -rf x' EXIT",
    "f() { rm -rf x; }",
    "function f { rm -rf x; }",
    "{ rm -rf x; }",
    "if rm -rf x; then :; fi",
    "! rm -rf x",
    "sudo -u root /bin/rm -rf x",
    "\\rm -rf x",
    '"rm" -rf x',
    "find . -exec rm -rf {} \\;",
    "echo $(rm -rf x)",
]
CANNOT_TELL = [
    'eval "$cmd"',
    "eval $cmd",
    'sh -c "$cmd"',
    'bash -c "$(curl -s example.com)"',
    "sh ./script.sh",
    "bash",
    "source ./script.sh",
    ". ./script.sh",
    "git myalias",
    "git -c alias.x=!x x",
    "$CMD -rf x",
    "${p}rm -rf x",
    "git --config-env=core.pager=PAGER log",
    "busybox sh ./script.sh",
]


@pytest.mark.parametrize("command", DENIED)
def test_every_wrapped_rm_is_denied(tmp_path: Path, command: str) -> None:
    assert rules(tmp_path).check(ShellAction(command)) == "deny"
    assert rules(tmp_path).check(ShellScript(command)) == "deny"


@pytest.mark.parametrize("command", CANNOT_TELL)
def test_what_cannot_be_told_is_asked_never_allowed(tmp_path: Path, command: str) -> None:
    assert rules(tmp_path).check(ShellAction(command)) == "ask"


def test_a_rule_spelling_out_the_command_still_allows_it(tmp_path: Path) -> None:
    found = rules(tmp_path)
    found.add("shell", "git myalias", scope="session")
    assert found.check(ShellAction("git myalias")) == "allow"  # the user saw exactly this


def test_known_git_commands_and_plain_wrappers_are_not_opaque(tmp_path: Path) -> None:
    found = rules(tmp_path)
    for command in (
        "git -C sub status",
        "git --no-pager log -p",
        "eval echo hi",
        "nice -n 5 ls",
        "sh -c 'echo hi'",
    ):
        assert found.check(ShellAction(command)) == "allow", command


# --- composed wrappers (Hypothesis) ---------------------------------------------------------------


def _ansi_c_first(command: str) -> str:
    head, sep, rest = command.partition(" ")
    if not head.isalnum():
        return command
    return "$'" + "".join(f"\\x{ord(c):02x}" for c in head) + "'" + sep + rest


WRAPPERS: list[Callable[[str], str]] = [
    lambda c: f"eval {shlex.quote(c)}",
    lambda c: f"sh -c {shlex.quote(c)}",
    lambda c: f"bash -lc {shlex.quote(c)}",
    lambda c: f"env FOO=1 sh -c {shlex.quote(c)}",
    lambda c: f"busybox sh -c {shlex.quote(c)}",
    lambda c: f"git -c alias.x={shlex.quote('!' + c)} x",
    lambda c: f"command {c}",
    lambda c: f"exec {c}",
    lambda c: f"nice -n 5 {c}",
    lambda c: f"timeout 5 {c}",
    lambda c: f"nohup {c}",
    lambda c: f"sudo -u root {c}",
    lambda c: f"env -i {c}",
    lambda c: f"xargs {c}",
    lambda c: f"trap {shlex.quote(c)} EXIT",
    lambda c: f"{{ {c}; }}",
    lambda c: f"echo $({c})",
    _ansi_c_first,
]
CORES = ["rm -rf x", "busybox rm -rf x", "/bin/rm x", "\\rm x"]


@settings(max_examples=300, deadline=None)
@given(
    core=st.sampled_from(CORES),
    layers=st.lists(st.integers(0, len(WRAPPERS) - 1), min_size=1, max_size=4),
)
def test_any_composition_of_wrappers_is_denied(
    tmp_path_factory: pytest.TempPathFactory, core: str, layers: list[int]
) -> None:
    command = core
    for k in layers:
        command = WRAPPERS[k](command)
    found = rules(tmp_path_factory.getbasetemp())
    assert found.check(ShellAction(command)) == "deny", command


@settings(max_examples=200, deadline=None)
@given(
    core=st.sampled_from(CANNOT_TELL),
    layers=st.lists(st.integers(0, len(WRAPPERS) - 1), max_size=3),
)
def test_any_wrapping_of_what_cannot_be_told_is_never_allowed(
    tmp_path_factory: pytest.TempPathFactory, core: str, layers: list[int]
) -> None:
    command = core
    for k in layers:
        command = WRAPPERS[k](command)
    found = rules(tmp_path_factory.getbasetemp())
    assert found.check(ShellAction(command)) != "allow", command


@pytest.mark.parametrize(
    "command", ["cat $'.env'", "cat $'\\x2eenv'", "cat .$'\\145'nv", "head $'\\x2e'ssh/id_rsa"]
)
def test_ansi_c_quoting_does_not_hide_a_secret_path(tmp_path: Path, command: str) -> None:
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / ".ssh").mkdir()
    assert PermissionRules(None, working_dir=tmp_path).check(ShellAction(command)) == "ask"


def test_nesting_past_the_bound_is_asked_not_allowed(tmp_path: Path) -> None:
    command = "nice " * 30 + "rm -rf x"
    assert rules(tmp_path).check(ShellAction(command)) == "ask"
    assert rules(tmp_path).check(ShellAction("nice " * 10 + "rm -rf x")) == "deny"
