"""#44 (third attack, F3): "always allow this exact cell" and a relative ``path:`` rule are kept with the
folder they were given in, like the folder's effect rules.

Before: a ``cell:<hash>`` rule was saved user-wide, so a cell with relative paths approved in one folder ran
unasked in every other folder (even ``/``), touching other files; a relative ``path:`` rule ("docs/**") did
the same for the files of any folder. Now ``folder_relative`` (the one decision ``PermissionRules.add``
takes, for ACP's "always" and the app's ``a`` alike) keeps every rule whose meaning depends on the folder
with its folder; rules that mean the same anywhere (an absolute or ``~`` path, a shell command naming
only absolute paths, an effect class that speaks of no folder) stay user-wide."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.patterns import proposed_pattern
from freeact_tui.permissions.rules import PermissionRules, RuleEntry
from freeact_tui.toolcalls import CodeAction, ShellScript

CELLS = st.sampled_from(
    ["open('notes.txt', 'w').write('x')", "import os\nos.remove('data.csv')", "print(1)", "!rm -rf build", ""]
)
WORD = st.text("abcxyz_", min_size=1, max_size=6)
GRANTS_HERE = st.one_of(  # (kind, pattern) that allows what depends on the folder
    st.tuples(st.just("code"), CELLS.map(lambda c: proposed_pattern(CodeAction(c)))),
    st.tuples(st.just("script"), CELLS.map(lambda c: proposed_pattern(ShellScript(c)))),
    st.tuples(st.sampled_from(["*", "read", "write", "mcp", "tool"]), WORD.map(lambda w: f"path:{w}/**")),
)
EFFECT_OF_FOLDER = st.tuples(st.just("code"), st.sampled_from(["effects:in-folder", "effects:reads"]))
FOLDER_FREE = st.one_of(  # (kind, pattern) that means the same in every folder
    st.tuples(st.sampled_from(["*", "read", "mcp"]), WORD.map(lambda w: f"path:/srv/{w}/**")),
    st.tuples(st.just("read"), WORD.map(lambda w: f"path:~/{w}/*")),
    st.tuples(st.just("shell"), WORD.map(lambda w: f"ls /srv/{w}")),  # #42: `git x` runs on the folder's repo
    st.tuples(st.just("code"), st.just("effects:computes")),
)
FOLDERS = st.sampled_from(["a", "b/c", "d e", "ü"])


def _rules(root: Path, folder: str) -> PermissionRules:
    work = root / folder
    work.mkdir(parents=True, exist_ok=True)
    return PermissionRules(root / "config" / "permissions.json", working_dir=work, defaults=False)


def _saved_in(root: Path, folder: str, kind: str, pattern: str) -> bool:
    return any(e.kind == kind and e.pattern == pattern for e in _rules(root, folder).rules())


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        GRANTS_HERE.map(lambda r: (*r, "allow")),  # allowing: bound to the folder; refusing: everywhere
        EFFECT_OF_FOLDER.map(lambda r: (*r, "any")),  # as #44's second fix keeps them
        FOLDER_FREE.map(lambda r: (*r, "never")),
    ),
    st.sampled_from(["allow", "ask", "deny"]),
    FOLDERS,
    FOLDERS,
)
def test_a_rule_that_depends_on_the_folder_applies_only_where_it_was_given(
    rule: tuple[str, str, str], effect: str, folder: str, other: str
) -> None:
    kind, pattern, bound_when = rule
    bound = bound_when in ("any", effect)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        try:
            where = _rules(root, folder).add(kind, pattern, scope="always", effect=effect)  # type: ignore[arg-type]
        except ValueError:
            assume(False)  # a rule this effect cannot have (refused as it always was)
            return
        assert where == ("folder" if bound else "always")
        assert _saved_in(root, folder, kind, pattern)
        assert _saved_in(root, other, kind, pattern) == (folder == other or not bound)


def test_the_reported_cell_runs_unasked_only_in_its_folder(tmp_path: Path) -> None:
    cell = CodeAction("open('notes.txt', 'w').write('x')")
    approved = _rules(tmp_path, "project")
    assert approved.add("code", proposed_pattern(cell), scope="always") == "folder"
    assert _rules(tmp_path, "project").check(cell) == "allow"
    root = PermissionRules(tmp_path / "config" / "permissions.json", working_dir=Path("/"), defaults=False)
    assert _rules(tmp_path, "other").check(cell) == "ask"
    assert root.check(cell) == "ask"
    (entry,) = [e for e in approved.rules() if e.pattern == proposed_pattern(cell)]
    assert entry == RuleEntry("code", proposed_pattern(cell), "allow", "folder")
