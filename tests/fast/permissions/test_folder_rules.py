"""#44 (second attack): an "always" rule whose meaning depends on the folder is kept with its folder.

Before: "always allow code that only reads and writes inside this folder" (ACP's option, the app's ``a`` on
an in-folder effect) was saved in the user's file and so allowed in-folder code in ANY project. Now every
effect rule of a class that speaks of "this folder" is saved with the folder it was given in
(``folder_rules_file``) and applies only there; folder-free rules stay user-wide. Rules saved user-wide
before keep applying everywhere, and the rules screen says "any folder".
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from freeact_tui.effects.classes import CLASSES
from freeact_tui.permissions.rules import PermissionRules, RuleEntry, folder_relative
from freeact_tui.tui.screens.permissions import where

EFFECTS = st.sampled_from(["allow", "ask", "deny"])


def _rules(root: Path, folder: str) -> PermissionRules:
    work = root / folder
    work.mkdir(parents=True, exist_ok=True)
    return PermissionRules(root / "config" / "permissions.json", working_dir=work)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(CLASSES), EFFECTS, st.sampled_from(["code", "*"]), st.sampled_from(["a", "b/c", "d e"])
)
def test_a_folder_rule_applies_only_in_its_folder_and_a_folder_free_one_everywhere(
    effect_class: str, effect: str, kind: str, folder: str
) -> None:
    pattern = f"effects:{effect_class}"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        here = _rules(root, folder)
        try:
            where_saved = here.add(kind, pattern, scope="always", effect=effect)  # type: ignore[arg-type]
        except ValueError:
            assume(False)  # a class this effect cannot have (refused as it always was)
            return
        entry = RuleEntry(kind, pattern, effect, where_saved)  # type: ignore[arg-type]
        again, elsewhere = _rules(root, folder), _rules(root, "other")
        assert entry in again.rules()  # read back in its folder, by another instance
        if effect_class in ("computes", "unknown"):
            assert where_saved == "always" and entry in elsewhere.rules()
        else:
            assert where_saved == "folder" and folder_relative(kind, pattern)
            assert all(e.pattern != pattern for e in elsewhere.rules() if e.scope != "default")
            again.remove(entry)
            assert entry not in _rules(root, folder).rules()


def test_the_reported_rule_and_one_saved_user_wide_before(tmp_path: Path) -> None:
    in_a = _rules(tmp_path, "a")
    assert in_a.add("code", "effects:in-folder", scope="always") == "folder"
    assert not any(e.pattern == "effects:in-folder" for e in _rules(tmp_path, "b").rules())
    (tmp_path / "config" / "permissions.json").write_text(
        '{"allow": [{"kind": "code", "pattern": "effects:in-folder"}], "ask": []}'
    )
    old = [e for e in _rules(tmp_path, "b").rules() if e.pattern == "effects:in-folder"]
    assert [e.scope for e in old] == ["always"]  # still applied in any folder
    assert where(old[0]) == "user file (any folder)"
