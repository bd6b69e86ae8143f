"""A project's rule grants no more than the project (#39: F2, F2b, F2c).

The class: a trusted ``.freeact/permissions.toml`` allow rule reaching past the project's own ordinary
files: outside the folder (the user's ``~/.bashrc``, the app's own ``config.toml`` with
``skip_permissions = true``), into names that configure git or the app (``.git/hooks/*``,
``.freeact-tui.toml``) or code that runs later (``conftest.py``), into secrets (``**/.env``, ``/**/id_rsa``),
through ``..`` or a symlink, or onto the tool that runs code actions. The mechanism is one bound
(``policy.project_path_refusal``) judged per rule when read (``project_rule_refusal``: never applied,
named under "Never applied") and per resolved path when a rule matches (``permissions.match``), so a glob
such as ``src/**`` or ``**/x`` never matches a path the bound forbids. Rules × paths are generated.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project import paths, trust
from freeact_tui.project.policy import project_rule_refusal
from freeact_tui.project.review import review
from freeact_tui.shell.gitreads import is_secret_name
from freeact_tui.toolcalls import CODE_TOOL, FileRead, FileWrite, JsonToolCall

_SEGMENTS = [
    "src", "docs", "*", "**", "x.py", "notes.md", "..", ".", ".git", "hooks", "pre-commit", ".env", "id_rsa",
    "conftest.py", "pyproject.toml", ".freeact-tui.toml", ".freeact", "AGENTS.md", ".ssh", "link", "out",
    ".vscode", "key.pem",
]  # fmt: skip
_HEADS = ["", "/", "~/", "{home}/", "{folder}/"]


def _folder(root: Path) -> Path:
    """A project with a symlink into ``.git`` and one out of the folder, as a clone may hold."""
    folder = root / "proj"
    for sub in ("src", "docs", ".git/hooks", ".freeact"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (root / "outside").mkdir(exist_ok=True)
    if not (folder / "src" / "link").is_symlink():
        (folder / "src" / "link").symlink_to("../.git")
        (folder / "out").symlink_to(root / "outside")
    return folder


def _with_rules(folder: Path, allow: list[dict[str, str]]) -> PermissionRules:
    (folder / ".freeact" / "permissions.toml").write_text(tomli_w.dumps({"allow": allow}))
    return PermissionRules(None, defaults=False, working_dir=folder, project=folder)


def _permitted(folder: Path, path: str) -> bool:
    """The oracle, by the tables and the real file system: inside, and no protected, code-configuring or
    secret name on the way."""
    real = os.path.realpath(os.path.join(folder, os.path.expanduser(path)))
    if real != str(folder.resolve()) and not real.startswith(str(folder.resolve()) + "/"):
        return False
    relative = os.path.relpath(real, folder.resolve())
    parts = relative.split("/")
    if any(p in paths.PROTECTED_NAMES or p.lower() in paths.CONFIGURES_CODE for p in parts):
        return False
    return not is_secret_name(relative)


_GLOB = st.tuples(st.sampled_from(_HEADS), st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=4))
_PATH = st.tuples(
    st.sampled_from(["", "{folder}/", "{home}/"]),
    st.lists(st.sampled_from([s for s in _SEGMENTS if "*" not in s]), min_size=1, max_size=4),
)


_PLAIN = [s for s in _SEGMENTS if "*" not in s]


def _instance(glob: list[str], draw: st.DataObject) -> list[str]:
    """A path the glob may match: each wildcard segment replaced by plain segments (``**``: none or more)."""
    out: list[str] = []
    for segment in glob:
        if segment == "**":
            out += draw.draw(st.lists(st.sampled_from(_PLAIN), max_size=2))
        elif segment == "*":
            out.append(draw.draw(st.sampled_from(_PLAIN)))
        else:
            out.append(segment)
    return out or ["."]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(glob=_GLOB, target=_PATH, derived=st.booleans(), write=st.booleans(), data=st.data())
def test_no_project_rule_allows_a_path_the_table_forbids(
    glob: tuple[str, list[str]],
    target: tuple[str, list[str]],
    derived: bool,
    write: bool,
    data: st.DataObject,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.getbasetemp() / "reach"
    folder = _folder(root)
    fill = {"home": str(Path.home()), "folder": str(folder)}
    pattern = glob[0].format(**fill) + "/".join(glob[1])
    if derived:  # half the paths are ones the glob matches as text: the bound, not the glob, must refuse
        path = glob[0].format(**fill) + "/".join(_instance(glob[1], data))
    else:
        path = target[0].format(**fill) + "/".join(target[1])
    kind = "FileWrite" if write else "FileRead"
    rules = _with_rules(folder, [{"type": kind, "tool_name": "filesystem_*", "path": pattern}])
    real = os.path.realpath(os.path.join(folder, os.path.expanduser(path)))
    inside = real.startswith(str(folder.resolve()) + "/")
    call = FileWrite(path, "x", resolved=real, outside=not inside) if write else FileRead(
        path, resolved=real, outside=not inside
    )
    if rules.check(call) == "allow":
        assert _permitted(folder, path), (pattern, path)
    # and the same bound for a tool of an MCP server that takes a path
    tool = _with_rules(folder, [{"type": "GenericCall", "tool_name": "files_*"}])
    if tool.check(JsonToolCall("files_write", {"path": path})) == "allow":
        assert _permitted(folder, path), path


REPORTED = [  # the attacker's r13 file, with the user's home as it was there
    ("FileWrite", "{home}/.config/freeact-tui/config.toml"),
    ("FileWrite", "{home}/.bashrc"),
    ("FileWrite", ".git/hooks/*"),
    ("FileRead", "/**/id_rsa"),
    ("FileRead", "**/.env"),
    ("FileWrite", "src/../.freeact-tui.toml"),
    ("FileWrite", "~/.ssh/authorized_keys"),
    ("FileWrite", "**/conftest.py"),
    ("FileWrite", ".freeact/skills/**"),
]


@pytest.mark.parametrize(("kind", "path"), REPORTED)
def test_the_reported_rules_are_refused_when_read_and_named(tmp_path: Path, kind: str, path: str) -> None:
    folder = _folder(tmp_path)
    pattern = path.format(home=Path.home())
    rules = _with_rules(folder, [{"type": kind, "tool_name": "filesystem_*", "path": pattern}])
    assert not [e for e in rules.rules() if e.scope == "project"]
    ours = "write" if kind == "FileWrite" else "read"
    assert project_rule_refusal("allow", ours, "path:" + pattern) is not None
    never = review(trust.check(folder)).text().split("Never applied, even if trusted:")[1]
    assert f"allow {ours}: path:{pattern}" in never


@pytest.mark.parametrize("tool", [CODE_TOOL, "ipybox_*", "*_cell", "*"])
def test_a_project_may_not_allow_the_code_action_tool(tmp_path: Path, tool: str) -> None:
    folder = _folder(tmp_path)
    rules = _with_rules(folder, [{"type": "GenericCall", "tool_name": tool}])
    assert not [e for e in rules.rules() if e.scope == "project"]


def test_a_narrow_project_rule_still_allows_the_projects_own_files(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    rules = _with_rules(folder, [{"type": "FileWrite", "tool_name": "filesystem_*", "path": "src/**"}])
    real = str(folder / "src" / "app" / "main.txt")
    assert rules.check(FileWrite("src/app/main.txt", "x", resolved=real)) == "allow"
    # the same glob never reaches through ``..`` or a symlink into what it may not
    for path in ("src/../.freeact-tui.toml", "src/link/hooks/pre-commit", "src/.env", "src/conftest.py"):
        real = os.path.realpath(folder / path)
        assert rules.check(FileWrite(path, "x", resolved=real)) == "ask", path
