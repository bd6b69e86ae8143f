"""#42 leftover 1: a rule whose meaning depends on the folder is never stored without it.

Class: "a rule whose meaning depends on the cwd stored without it". Before: only effect rules, exact cells and
relative ``path:`` rules were kept with their folder; an "always allow" of ``cat notes.txt``, ``rm build/x``,
a plain read pattern ``notes.txt`` or ``*.csv``, or a cell's text, saved with ``a`` (or ACP's allow_always,
both ``PermissionRules.add``), was saved user-wide and allowed ``notes.txt`` of EVERY folder. Now one decision
(``folder_scope.folder_reason``) reads the rule's meaning: any word that may name a file not anchored at
``/`` or ``~``, a command naming none (it acts on its folder), ``cd``, a relative program, code text → folder.

Generated: rule kinds × relative/absolute arguments × folders; a rule whose argument is relative is saved with
its folder and never matches in another folder; one whose arguments are all absolute matches everywhere.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.folder_scope import folder_reason
from freeact_tui.permissions.rules import PermissionRules, RuleEntry
from freeact_tui.toolcalls import CodeAction, FileRead, FileWrite, ShellAction, ToolCall
from freeact_tui.tui.screens.permissions import folder_note, where

NAME = st.text("abcxyz_", min_size=1, max_size=6).map(lambda w: f"{w}.txt")
RELATIVE = st.one_of(NAME, NAME.map(lambda n: f"build/{n}"), NAME.map(lambda n: f"./{n}"))
ABSOLUTE = NAME.map(lambda n: f"/srv/data/{n}")
PROGRAMS = st.sampled_from(["cat", "rm", "wc -l", "sort -r", "cp /srv/a"])
FOLDERS = st.sampled_from(["a", "b/c", "d e", "ü"])


def _calls(kind: str, program: str, path: str) -> tuple[str, ToolCall]:
    """The pattern ``a`` saves for a call of ``kind`` on ``path``, and the call."""
    match kind:
        case "shell":
            return f"{program} {path}", ShellAction(f"{program} {path}")
        case "read":
            return path, FileRead(path)
        case "write":
            return path, FileWrite(path)
        case _:
            code = f"open({path!r}).read()"
            return code, CodeAction(code)


def _rules(root: Path, folder: str) -> PermissionRules:
    work = root / folder
    work.mkdir(parents=True, exist_ok=True)
    return PermissionRules(root / "config" / "permissions.json", working_dir=work, defaults=False)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["shell", "read", "write", "code"]),
    PROGRAMS,
    st.one_of(RELATIVE.map(lambda p: (p, True)), ABSOLUTE.map(lambda p: (p, False))),
    FOLDERS,
    FOLDERS,
)
def test_a_folder_relative_rule_never_matches_in_another_folder(
    kind: str, program: str, path_relative: tuple[str, bool], folder: str, other: str
) -> None:
    path, relative = path_relative
    pattern, call = _calls(kind, program, path)
    depends = relative or kind == "code"  # a cell's text: what it touches is read against its folder
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        saved = _rules(root, folder).add(kind, pattern, scope="always")
        assert saved == ("folder" if depends else "always")
        assert (folder_reason(kind, pattern) is not None) == depends
        assert _rules(root, folder).check(call) == "allow"  # where it was given, it applies
        elsewhere = _rules(root, other).check(call)
        assert elsewhere == ("allow" if folder == other or not depends else "ask")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["ask", "deny"]), RELATIVE, FOLDERS)
def test_refusing_a_relative_path_stays_user_wide(effect: str, path: str, folder: str) -> None:
    """A refusal applied in more folders only asks or refuses more: it is not narrowed to the folder."""
    with tempfile.TemporaryDirectory() as tmp:
        assert _rules(Path(tmp), folder).add("shell", f"rm {path}", scope="always", effect=effect) == "always"  # type: ignore[arg-type]


# (kind, pattern, depends on the folder): the rows a reading of a rule's meaning must get right
ROWS = [
    ("shell", "cat notes.txt", True),  # the report
    ("shell", "rm build/x", True),  # the report
    ("shell", "cat /etc/hostname", False),
    ("shell", "cat ~/notes.txt", False),
    ("shell", "ls", True),  # no path: the folder it runs in
    ("shell", "make", True),
    ("shell", "git status", True),  # the folder's repository (and its config)
    ("shell", "cat *", True),  # a glob not anchored at / or ~
    ("shell", "cat /srv/*.txt", False),
    ("shell", "cd build && rm x", True),
    ("shell", "cd /srv && rm /srv/x", True),  # moves between folders
    ("shell", "./build.sh /srv/out", True),  # a program found from the folder
    ("shell", "/usr/bin/rm /srv/x", False),
    ("shell", "sort -o out.txt /srv/in.txt", True),  # an option's value names a relative file
    ("shell", "grep --file=pats /srv/x", True),
    ("shell", "head -n 3 /srv/x", True),  # which options take a value is the program's: ``3`` may be a file
    ("shell", "echo hi > out.txt", True),  # a redirect target
    ("read", "notes.txt", True),
    ("read", "*.csv", True),
    ("read", "/srv/*.csv", False),
    ("write", "~/out/*", False),
    ("*", "notes.txt", True),
    ("code", "print(1)", True),
    ("script", "rm -rf build", True),
    ("mcp", "files.read", False),  # a tool, named
    ("tool", "pytools_list_tools", False),
    ("subagent", "subagent_task", False),
    ("read", "path:docs/**", True),
    ("read", "path:/srv/**", False),
    ("code", "effects:in-folder", True),
    ("code", "effects:computes", False),
]


def test_rows() -> None:
    got = [(kind, pattern, folder_reason(kind, pattern) is not None) for kind, pattern, _ in ROWS]
    assert got == ROWS


def test_the_rules_screen_says_an_old_user_wide_rule_applies_in_any_folder(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "permissions.json").write_text(
        '{"allow": [{"kind": "shell", "pattern": "cat notes.txt"}], "ask": []}'
    )
    (entry,) = [e for e in _rules(tmp_path, "a").rules() if e.pattern == "cat notes.txt"]
    assert where(entry) == "user file (any folder)"
    moved = _rules(tmp_path, "b")
    new = [e for e in moved.rules() if e.pattern == "cat notes.txt"][0]
    assert moved.change(new, effect="allow").scope == "always"  # changing keeps it where it lives


def test_the_rules_screen_names_the_folder_and_why() -> None:
    here = RuleEntry("shell", "cat notes.txt", "allow", "folder")
    assert folder_note(here, "/w") == " — only in /w: it names notes.txt (relative to the folder)"
    old = RuleEntry("shell", "cat notes.txt", "allow", "always")
    assert folder_note(old, "/w") == " — applies in any folder, though it names notes.txt (relative to the folder)"
    assert folder_note(RuleEntry("shell", "cat /etc/hostname", "allow", "always"), "/w") == ""
