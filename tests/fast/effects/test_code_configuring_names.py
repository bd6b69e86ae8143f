"""Names that configure programs run later are never "in-folder" work, at any depth (#39, F4/F5).

Class: an in-folder write of a file that another program runs later (``.envrc`` for direnv,
``.vscode/tasks.json`` for an editor, ``.mcp.json`` for a coding agent, a nested ``.git/config``) was
auto-approved as work inside the folder. Mechanism: the one table of such names
(``paths.PROTECTED_NAMES`` and ``paths.CONFIGURES_CODE``), read at every depth of the path by
``paths.runs_later``; the in-folder modes and ``effects:in-folder`` rules never allow a write to one.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import read_effects
from freeact_tui.effects.modes import ApprovalMode, judge
from freeact_tui.project.paths import CONFIGURES_CODE, PROTECTED_NAMES, runs_later
from freeact_tui.toolcalls import CodeAction, FileWrite

_NAMES = sorted({*PROTECTED_NAMES, *CONFIGURES_CODE})
_DIR = st.text("abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=8)


def test_the_reported_names_are_in_the_table() -> None:
    for name in (".envrc", ".vscode", ".mcp.json", ".gitattributes", ".gitmodules", "ipython_config.py"):
        assert name in CONFIGURES_CODE
    for path in ("sub/.envrc", ".vscode/tasks.json", "a/b/.mcp.json", "sub/.git/config", "sub/.freeact/config.toml",
                 "x/AGENTS.md", "x/.env", "evil.pth", "sub/sitecustomize.py"):  # fmt: skip
        assert runs_later(path), path


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(_NAMES),
    dirs=st.lists(_DIR, max_size=4),
    below=st.sampled_from(["", "/config", "/settings.json", "/hooks/post-checkout", "/x"]),
)
def test_a_write_to_a_table_name_at_any_depth_is_never_in_folder_work(
    name: str, dirs: list[str], below: str, tmp_path: Path
) -> None:
    path = "/".join([*dirs, name]) + below
    assert runs_later(path), path
    for mode in (ApprovalMode.IN_FOLDER, ApprovalMode.SANDBOXED_AUTO):
        verdict = judge(mode, FileWrite(path, "x"), None, rule=None, sandboxed=False, working_dir=tmp_path)
        assert verdict is None, (mode, path)
    reading = read_effects(CodeAction(f"open({path!r}, 'w').write('x')"), tmp_path)
    assert reading.effect_class is None, path
