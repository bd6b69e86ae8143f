"""Programs that run code given as an argument are "cannot tell" unless the code is read (issue #39).

Class: ``python -c``, ``perl -e``, ``node -e`` … carry a program in an argument, so a user's broad allow
rule (``shell:*``, ``shell:python *``) let them read ``.env`` or run ``rm`` past a deny rule. Mechanism:
one table (``shellprograms._INLINE_CODE``: program → the options carrying code and its language) read
by the one unwrapping step; code in a language not read here makes the command opaque (asked), through
every wrapper (``env``, ``xargs``, ``sudo``, ``find -exec``, ``sh -c``). Shell code is read as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.shell.programs import _INLINE_CODE, inline_code, unwrap
from freeact_tui.toolcalls import ShellAction

_CASES = [(program, option) for program, (options, _) in _INLINE_CODE.items() for option in options]
_WRAPS = ["{c}", "env X=1 {c}", "xargs {c}", "sudo {c}", 'sh -c "{c}"', "find . -exec {c} ;", "nice -n 5 {c}"]


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(_CASES), wrap=st.sampled_from(_WRAPS), version=st.sampled_from(["", "3", "3.11"]))
def test_code_given_as_an_argument_is_never_allowed_by_a_broad_rule(
    case: tuple[str, str], wrap: str, version: str
) -> None:
    program, option = case
    program += version if program in ("python", "perl", "lua", "ruby") else ""
    command = wrap.format(c=f"{program} {option} 'open(1)'")
    assert unwrap(command).opaque, command
    rules = PermissionRules(None, working_dir=Path("/tmp"))
    rules.add("shell", "*", scope="session")
    rules.add("shell", f"{program} *", scope="session")
    assert rules.check(ShellAction(command)) == "ask", command


@pytest.mark.parametrize(
    "command",
    ["python -c \"open('.env').read()\"", "perl -ne 'print'", "python3 -Ic 'import os'", "node --eval 'x'",
     "env X=1 python -c 'import os; os.system(\"rm -rf x\")'", "ruby -e 'File.read(\".env\")'"],
)  # fmt: skip
def test_the_reported_spellings_ask(tmp_path: Path, command: str) -> None:
    rules = PermissionRules(None, working_dir=tmp_path)
    rules.add("shell", "*", scope="session")
    assert rules.check(ShellAction(command)) == "ask", command


@pytest.mark.parametrize(
    "command", ["python script.py -c x", "python -m pytest -q", "node app.js -e", "perl x.pl"]
)
def test_a_script_file_and_its_own_arguments_are_not_inline_code(command: str) -> None:
    words = command.split()
    assert inline_code(words[0], words[1:]) is None
