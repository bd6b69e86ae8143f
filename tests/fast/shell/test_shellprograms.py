"""Table tests of the matchers under the permission rules: what a command runs, which flags make it
unsafe, how git is run in the kernel, and when two cells share a fingerprint."""

from __future__ import annotations

import pytest

from freeact_tui.permissions.cells import cell_fingerprint, cell_matches, cell_pattern
from freeact_tui.shell.programs import program_name, run_commands, unsafe_use, without_ext_diff
from freeact_tui.shell.words import command_words, inner_commands


@pytest.mark.parametrize(
    ("word", "name"),
    [("rm", "rm"), ("/bin/rm", "rm"), ("./rm", "rm"), ("../x/rm", "rm"), ("/", "/"), ("a-b", "a-b")],
)
def test_program_name(word: str, name: str) -> None:
    assert program_name(word) == name


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("rm -rf x", [["rm", "-rf", "x"]]),
        ("/bin/rm x", [["rm", "x"]]),
        ("\\rm x", [["rm", "x"]]),
        ("'rm' x", [["rm", "x"]]),
        ("FOO=1 BAR=2 rm x", [["rm", "x"]]),
        ("command -p rm x", [["command", "-p", "rm", "x"], ["rm", "x"]]),
        ("env -i FOO=1 rm x", [["env", "-i", "FOO=1", "rm", "x"], ["rm", "x"]]),
        ("env -u HOME rm x", [["env", "-u", "HOME", "rm", "x"], ["rm", "x"]]),
        ("env -S 'rm x'", [["env", "-S", "rm x"], ["rm", "x"]]),
        ("exec -a name rm x", [["exec", "-a", "name", "rm", "x"], ["rm", "x"]]),
        ("sudo -u root -- rm x", [["sudo", "-u", "root", "--", "rm", "x"], ["rm", "x"]]),
        ("xargs -n 1 rm", [["xargs", "-n", "1", "rm"], ["rm"]]),
        ("timeout -s KILL 5 rm x", [["timeout", "-s", "KILL", "5", "rm", "x"], ["rm", "x"]]),
        ("nohup nice rm x", [["nohup", "nice", "rm", "x"], ["nice", "rm", "x"], ["rm", "x"]]),
        ("find . -delete", [["find", ".", "-delete"], ["rm", "."]]),
        ("find src -exec rm {} +", [["find", "src", "-exec", "rm", "{}", "+"], ["rm", "{}"]]),
        ("sh -c 'ls; rm x'", [["sh", "-c", "ls; rm x"], ["ls"], ["rm", "x"]]),
        ("bash -lc 'rm x'", [["bash", "-lc", "rm x"], ["rm", "x"]]),
        ("bash script.sh", [["bash", "script.sh"]]),  # a script file: not readable here, and asked anyway
        ("ls -la", [["ls", "-la"]]),
        ("", []),
    ],
)
def test_run_commands(command: str, runs: list[list[str]]) -> None:
    assert run_commands(command) == runs


@pytest.mark.parametrize(
    ("command", "inner"),
    [
        ("echo $(rm x)", ["rm x"]),
        ("echo `rm x`", ["rm x"]),
        ('echo "$(whoami)"', ["whoami"]),
        ("diff <(ls a) <(ls b)", ["ls a", "ls b"]),
        ("echo $(echo $(rm x))", ["rm x", "echo $(rm x)"]),
        ("echo '$(rm x)'", []),  # single quotes: literal text
        ("echo hi", []),
    ],
)
def test_inner_commands(command: str, inner: list[str]) -> None:
    assert inner_commands(command) == inner


@pytest.mark.parametrize(
    ("command", "unsafe"),
    [
        ("find . -name x", False),
        ("find . -exec rm {} ;", True),
        ("find . -okdir ls ;", True),
        ("find . -delete", True),
        ("find . -fprintf out %p", True),
        ("grep -n x f", False),
        ("grep -rn x .", True),
        ("grep --recursive x .", True),
        ("rg x", False),
        ("rg --pre cat x", True),
        ("sort f", False),
        ("sort -o out f", True),
        ("sed -n 1,5p f", False),
        ("sed s/a/b/g f", False),
        ("sed 's/e/w/' f", False),  # e and w inside the s command's text are not commands
        ("sed s/a/b/e f", True),
        ("sed 's|a|b|w out' f", True),
        ("sed 1e f", True),
        ("sed -e p -e 'w out' f", True),
        ("sed -i s/a/b/ f", True),
        ("sed -f script.sed f", True),
        ("awk '{print $1}' f", False),
        ("awk 'BEGIN{system(\"id\")}'", True),
        ("awk '{print > \"out\"}' f", True),
        ("awk '{\"date\" | getline d}'", True),
        ("awk -f prog.awk f", True),
        ("gawk 'BEGIN{print ENVIRON[\"HOME\"]}'", True),
        ("git log", False),
        ("git -c core.pager=x log", True),
        ("git diff --ext-diff", True),
        ("git diff --output=x", True),
        ("tar -tf a.tar", False),
        ("tar -xf a.tar --to-command=sh", True),
        ("tar -I zstd -xf a.tar", True),
        ("cat f", False),
    ],
)
def test_unsafe_use(command: str, unsafe: bool) -> None:
    assert (unsafe_use(command_words(command)) is not None) == unsafe


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("git diff", "git diff --no-ext-diff"),
        ("git diff HEAD~1 -- a.py", "git diff --no-ext-diff HEAD~1 -- a.py"),
        ("ls && git diff", "ls && git diff --no-ext-diff"),
        ("git status; git  diff", "git status; git  diff --no-ext-diff"),
        ("git difftool", "git difftool"),
        ("git log -p", "git log -p"),  # log and show use an external diff only with --ext-diff
        ("echo git diff", "echo git diff"),
    ],
)
def test_git_diff_runs_without_the_repos_external_diff(command: str, runs: str) -> None:
    assert without_ext_diff(command) == runs


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("print(1)", "print(1)", True),
        ("print(1)", "print(1)  # comment", True),
        ("print(1)\n\n\n", "\nprint(1)", True),
        ("x=[1,\n  2]", "x = [1, 2]", True),
        ("print(1)", "print(2)", False),
        ("print('a')", 'print("a")', True),  # one and the same string
        ("print('a ')", "print('a')", False),
        ("if x:\n    a()\nb()", "if x:\n    a()\n    b()", False),
        ("!ls", "!ls  ", True),
        ("!ls", "!ls -a", False),
        ("%%bash\nls", "%%bash\nls\nrm x", False),
    ],
)
def test_cell_fingerprint(a: str, b: str, same: bool) -> None:
    assert (cell_fingerprint(a) == cell_fingerprint(b)) == same
    assert cell_matches(cell_pattern(a), b) == same


def test_a_cell_pattern_is_not_a_glob() -> None:
    assert not cell_matches("cell:*", "print(1)")
    assert not cell_matches("print(1)", "print(1)")
