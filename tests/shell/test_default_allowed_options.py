"""Every default-allowed program takes unasked only the options known to change no more than what it prints (#42 F7/F8).

The class: a default allow rule (``pip list *``) whose program has an option that writes a file
(``pip list --log .git/hooks/pre-commit`` appended its log, with a crafted package name, to a hook git
runs), uses the network (``pip list --outdated``) or runs another interpreter (``--python``). The
mechanism: each program a built-in rule allows with arguments has an ALLOW-list of options
(``shell.options``: ``PROGRAM_OPTIONS``, ``SUBCOMMAND_OPTIONS`` by subcommand), so an option nobody
listed — the next one pip adds, an abbreviation — asks. The corpus is pip's own ``--help``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.match import DEFAULT_RULES
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.shell.options import PROGRAM_OPTIONS, SUBCOMMAND_OPTIONS, Options
from freeact_tui.toolcalls import ShellAction

_OPTION = re.compile(r"^\s{1,4}(?:(-\w),\s*)?(--[\w-]+)?\s*(<[^>]+>)?")


def _help_options(subcommand: str) -> dict[str, bool]:
    """pip's options for ``subcommand`` from its own ``--help``: each spelling → whether it takes a value."""
    text = subprocess.run(
        [sys.executable, "-m", "pip", subcommand, "--help"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    out: dict[str, bool] = {}
    for line in text.splitlines():
        match = _OPTION.match(line)
        if match is None or not (match.group(1) or match.group(2)):
            continue
        for spelling in (match.group(1), match.group(2)):
            if spelling:
                out[spelling] = match.group(3) is not None
    return out


HELP = {sub: _help_options(sub) for sub in SUBCOMMAND_OPTIONS["pip"][1]}


def _allowed(table: Options) -> set[str]:
    return {f"-{c}" for c in table.flags + table.valued} | set(table.long) | set(table.long_valued)


def _rules(tmp_path: Path) -> PermissionRules:
    return PermissionRules(None, working_dir=tmp_path)


@pytest.mark.parametrize("subcommand", sorted(HELP))
def test_no_listed_option_is_read_by_this_pip_as_another(subcommand: str) -> None:
    """The table lists options of the pip versions in use (pip 25 dropped ``--no-python-version-warning``,
    a subcommand's help does not list ``-V``); a listed option THIS pip lacks must not be an abbreviation
    pip's parser reads as one of its other options, which the table does not allow."""
    general, own = SUBCOMMAND_OPTIONS["pip"]
    assert HELP[subcommand], subcommand
    listed = _allowed(general) | _allowed(own[subcommand])
    known = set(HELP[subcommand]) | {"--help", "--version", "-V"}
    assert len(listed & known) >= len(listed) - 3, sorted(listed - known)  # the table is pip's own, mostly
    for option in sorted(listed - known):
        assert option.startswith("--"), option
        read_as = [o for o in known if o.startswith(option) and o not in listed]
        assert not read_as, (option, read_as)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_every_other_option_of_pip_asks(data: st.DataObject) -> None:
    subcommand = data.draw(st.sampled_from(sorted(HELP)))
    general, own = SUBCOMMAND_OPTIONS["pip"]
    allowed = _allowed(general) | _allowed(own[subcommand]) | {"--help", "-h", "--version", "-V"}
    others = sorted(o for o in HELP[subcommand] if o not in allowed)
    option = data.draw(st.sampled_from(others))
    # any unambiguous prefix is the option to pip's parser (``--outd`` is ``--outdated``)
    if option.startswith("--"):
        option = option[: data.draw(st.integers(min_value=3, max_value=len(option)))]
        assume(option not in allowed)  # a prefix that is itself a listed option is that option
    glued = data.draw(st.booleans())
    value = "x.txt"
    if HELP[subcommand].get(option, True):
        words = [f"{option}={value}"] if glued and option.startswith("--") else [option, value]
    else:
        words = [option]
    command = " ".join(["pip", subcommand, *words, *(["numpy"] if subcommand == "show" else [])])
    assert _rules(Path("/tmp")).check(ShellAction(command)) == "ask", command


REPORTED = [
    "pip list --path site --log .git/hooks/pre-commit",
    "pip list --log .freeact-tui.toml",
    "pip list --outdated",
    "pip list -o",
    "pip list -u",
    "pip list --uptodate",
    "pip list -lo",
    "pip list --index-url=https://example.org/simple",
    "pip list --python /tmp/other/python",
    "pip show --log x numpy",
    "pip freeze -r requirements.txt",
    "pip freeze",  # its output can be a credential store (`-e git+https://user:token@…`): asked
]


@pytest.mark.parametrize("command", REPORTED)
def test_the_reported_pip_options_ask(tmp_path: Path, command: str) -> None:
    assert _rules(tmp_path).check(ShellAction(command)) == "ask"


@pytest.mark.parametrize(
    "command", ["pip list", "pip list --format json", "pip list -l --not-required", "pip show -f numpy"]
)
def test_reads_that_only_shape_the_listing_still_run(tmp_path: Path, command: str) -> None:
    assert _rules(tmp_path).check(ShellAction(command)) == "allow"


def test_every_program_allowed_with_arguments_has_an_allow_list_of_options() -> None:
    """A built-in allow rule ``X *`` (or ``X sub *``) names a program whose options are an allow-list;
    git alone is judged otherwise (its subcommands' flags and the object names it reads: ``programs``,
    ``gitreads``)."""
    programs = {
        rule.pattern.split()[0]
        for rule in DEFAULT_RULES["allow"]
        if rule.kind == "shell" and rule.pattern.endswith(" *")
    }
    assert programs - set(PROGRAM_OPTIONS) - set(SUBCOMMAND_OPTIONS) == {"git"}
