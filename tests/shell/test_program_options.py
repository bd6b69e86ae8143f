"""Default-allowed read-only programs take only known options unasked (``programoptions``).

Class: an option whose value names files (or a list of files) the path rules never see —
``sort --files0-from=-`` fed ``/proc/<pid>/environ`` on its input, ``grep -f .env``, ``du --exclude-from``,
``find -files0-from``, ``file -f``, ``date -f``, ``tree --fromfile``, GNU abbreviations (``--files0``).
Mechanism: each built-in program names the options known to only shape its output; any other option asks.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.shell.options import PROGRAM_OPTIONS, unknown_option
from freeact_tui.toolcalls import ShellAction


def defaults(tmp_path: Path) -> PermissionRules:
    return PermissionRules(None, working_dir=tmp_path)


READS_LISTED_FILES = [
    r"printf '\057proc\0571\057environ\0' | sort --files0-from=-",
    r"printf '\057home\057u\057.ssh\057id_rsa\0' | sort --files0-from=-",
    "sort --files0-from=list0",
    "sort --files0=list0",
    "sort --random-source=.env x",
    "sort -T /tmp x",
    "wc --files0-from=list0",
    "du --files0-from=list0",
    "du --exclude-from=pats .",
    "du -X pats .",
    "cut --files0-from=list0",
    "grep -f .env x",
    "grep -f.env x",
    "grep -nf .env x",
    "grep --file=.env x",
    "grep --fil=.env x",
    "grep --exclude-from=pats -n x y",
    "rg --ignore-file=.env foo",
    "rg -f pats foo",
    "rg -z foo",
    "find -files0-from list0",
    "find . -L -name x",
    "find -L . -name x",
    "find . -follow -name x",
    "file -f list",
    "file -m magic x",
    "date -f list",
    "date --file=list",
    "tree --fromfile list",
    "diff --from-file=a b",
    "diff -X pats a b",
    "ls --dired x",
    "head --files0-from=list0",
    "git log --pathspec-from-file=list",
    "git blame --contents=list x",
    "git blame --ignore-revs-file=list x",
]


@pytest.mark.parametrize("command", READS_LISTED_FILES)
def test_an_option_naming_files_asks(tmp_path: Path, command: str) -> None:
    assert defaults(tmp_path).check(ShellAction(command)) == "ask"


STILL_ALLOWED = [
    "ls -la", "ls -lh --color=auto src", "grep -n -A3 foo x.txt", "grep -in -e foo -e bar x", "grep -5 x y",
    "sort -k2 -t, x", "sort -rn x", "head -5 x", "head -n 20 x", "tail -n5 x", "wc -l x", "cut -d, -f1 x",
    "find . -name '*.py' -type f", "find . -maxdepth 2 -name x -print", "rg -n foo", "rg -i -g '*.py' foo",
    "diff -u a b", "du -sh .", "df -h", "stat -c %s x", "file -b x", "date +%Y", "uname -a", "id -u",
    "nl -ba x", "cat -n x", "realpath -m x", "readlink -f x", "basename -s .py x.py",
]  # fmt: skip


@pytest.mark.parametrize("command", STILL_ALLOWED)
def test_output_shaping_options_still_run_unasked(tmp_path: Path, command: str) -> None:
    assert defaults(tmp_path).check(ShellAction(command)) == "allow"


PROGRAMS = sorted(p for p in PROGRAM_OPTIONS if p not in ("echo", "printf"))
_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0-", min_size=1, max_size=14)


@settings(max_examples=150, deadline=None)
@given(program=st.sampled_from(PROGRAMS), name=_NAME, value=st.sampled_from(["-", "list0", ".env", "/etc/x"]))
def test_any_option_not_in_the_table_asks(
    tmp_path_factory: pytest.TempPathFactory, program: str, name: str, value: str
) -> None:
    table = PROGRAM_OPTIONS[program]
    option = ("-" if table.single_dash else "--") + name
    known = table.long | table.long_valued | {"--help", "--version"}
    if option in known or name.startswith("-") or name.isdigit():
        return
    rules = defaults(tmp_path_factory.mktemp("w"))
    for command in (f"{program} {option}={value} x", f"{program} x {option}={value}"):
        assert unknown_option(program, command.split()[1:]) is not None, command
        assert rules.check(ShellAction(command)) == "ask", command


@settings(max_examples=150, deadline=None)
@given(program=st.sampled_from(PROGRAMS), data=st.data())
def test_a_value_never_hides_an_unknown_option(program: str, data: st.DataObject) -> None:
    """Whatever known options come first, an unknown option after them (and their values) is seen."""
    table = PROGRAM_OPTIONS[program]
    words: list[str] = []
    for _ in range(data.draw(st.integers(0, 4))):
        if table.flags and not table.single_dash and data.draw(st.booleans()):
            words.append("-" + data.draw(st.text(alphabet=table.flags, min_size=1, max_size=4)))
        elif table.valued and not table.single_dash and data.draw(st.booleans()):
            words += ["-" + data.draw(st.sampled_from(table.valued)), "v"]
        elif table.long_valued:
            words += [data.draw(st.sampled_from(sorted(table.long_valued))), "v"]
    assert unknown_option(program, words) is None, words
    hidden = "-files0-from" if table.single_dash else "--files0-from=-"
    assert unknown_option(program, [*words, hidden]) == hidden


@pytest.mark.parametrize("program", sorted(PROGRAM_OPTIONS))
def test_no_letter_is_both_a_flag_and_an_option_with_a_value(program: str) -> None:
    """A letter in both (df's `-x TYPE` was also a flag) makes the generated cases disagree with the
    parser: `df -x --files0-from=-` has `--files0-from=-` as the value of `-x`, not as an option."""
    table = PROGRAM_OPTIONS[program]
    assert not set(table.flags) & set(table.valued), program
