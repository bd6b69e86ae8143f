"""The app's own state is never the model's work (#42 F5): with the working folder at, inside or above a
folder the app reads decisions or code from (its config and data folders, ``FREEACT_TUI_HOME``, the XDG
folders, ``~/.freeact``), reached directly or through a symlink, no write there is in-folder work, the
in-folder mode never lets one run unasked, and no allow rule by a pattern reaches it.

The attack: ``FREEACT_TUI_HOME=H``, cwd ``H/config``, in-folder mode, ``open('permissions.json','w')
.write('{"allow": [{"kind": "*", "pattern": "*"}]}')`` ran unasked; from then on everything did."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects.classes import Kind
from freeact_tui.effects.modes import ApprovalMode, judge
from freeact_tui.effects.reader import read_effects, too_wide
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project import paths
from freeact_tui.project.app_state import app_state_at, app_state_below, app_state_dirs
from freeact_tui.toolcalls import CodeAction, FileWrite, ShellAction

ATTACK = 'open(\'permissions.json\',\'w\').write(\'{"allow": [{"kind": "*", "pattern": "*"}]}\')'

WRITERS = {
    "open": "open({p!r}, 'w').write('x')",
    "open-append": "with open({p!r}, 'a') as f:\n    f.write('x')",
    "pathlib": "from pathlib import Path\nPath({p!r}).write_text('x')",
    "shutil-copy": "import shutil\nshutil.copy('seed.txt', {p!r})",
    "os-replace": "import os\nos.replace('seed.txt', {p!r})",
    "os-remove": "import os\nos.remove({p!r})",
    "writefile": "%%writefile {p}\nx\n",
}


@contextmanager
def _env(**values: str | None) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _layout(base: Path, with_home: bool, xdg: bool) -> dict[str, str | None]:
    """The variables of one layout: FREEACT_TUI_HOME set (the app's own home) or the XDG folders."""
    return {
        "FREEACT_TUI_HOME": str(base / "ft") if with_home else None,
        "XDG_CONFIG_HOME": str(base / "xdg" / "config") if xdg else None,
        "XDG_DATA_HOME": str(base / "xdg" / "share") if xdg else None,
        "XDG_CACHE_HOME": str(base / "xdg" / "cache") if xdg else None,
        "XDG_STATE_HOME": str(base / "xdg" / "state") if xdg else None,
        "HOME": str(base / "home"),
    }


def _targets() -> list[Path]:
    """A file of the app's own state in each folder the app reads decisions or code from."""
    return [
        paths.permissions_file(),
        paths.config_dir() / "trusted.json",
        paths.user_config_file(),
        paths.user_themes_dir() / "t.toml",
        paths.default_sessions_dir() / "0b4f" / "meta.json",
        paths.checkpoints_dir() / "k" / "HEAD",
        paths.data_dir() / "code-manifests" / "m.json",
        Path.home() / ".freeact" / "permissions.toml",
    ]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    with_home=st.booleans(),
    xdg=st.booleans(),
    which=st.integers(min_value=0, max_value=7),
    where=st.sampled_from(["at", "parent", "grandparent"]),
    link=st.booleans(),
    relative=st.booleans(),
    writer=st.sampled_from(sorted(WRITERS)),
    mode_in_folder=st.booleans(),
)
def test_no_write_to_app_state_is_in_folder_work(
    tmp_path_factory: pytest.TempPathFactory,
    with_home: bool,
    xdg: bool,
    which: int,
    where: str,
    link: bool,
    relative: bool,
    writer: str,
    mode_in_folder: bool,
) -> None:
    base = tmp_path_factory.mktemp("layout")
    with _env(**_layout(base, with_home, xdg)):
        target = _targets()[which]
        folder = {
            "at": target.parent,
            "parent": target.parent.parent,
            "grandparent": target.parent.parent.parent,
        }[where]
        folder.mkdir(parents=True, exist_ok=True)
        working = folder
        if link:  # the working folder is a symlink to it (an editor opened the link)
            working = base / "link"
            working.symlink_to(folder)
        p = os.path.relpath(target, folder) if relative else str(target)
        call = CodeAction(WRITERS[writer].format(p=p))
        reading = read_effects(call, working)
        assert reading.effect_class not in ("computes", "reads", "in-folder"), (reading, call.code, working)
        assert Kind.CONTROLS in reading.kinds or Kind.UNKNOWN in reading.kinds, reading
        mode = ApprovalMode.IN_FOLDER if mode_in_folder else ApprovalMode.ASK
        verdict = judge(mode, call, reading, rule=None, sandboxed=False, working_dir=working)
        assert verdict is None, verdict  # asked
        file_call = FileWrite(p, "x", resolved=os.path.realpath(target), outside=False)
        assert judge(mode, file_call, None, rule=None, sandboxed=False, working_dir=working) is None


def test_the_reported_case_from_the_config_folder(tmp_path: Path) -> None:
    with _env(FREEACT_TUI_HOME=str(tmp_path / "H")):
        config = paths.config_dir()
        config.mkdir(parents=True)
        for cwd, path in (
            (config, ATTACK),
            (config.parent, ATTACK.replace("permissions.json", "config/permissions.json")),
        ):
            reading = read_effects(CodeAction(path), cwd)
            assert reading.effect_class is None, reading  # no class allows it
            assert any("this app's own settings" in f.what for f in reading.found), reading
            verdict = judge(
                ApprovalMode.IN_FOLDER, CodeAction(path), reading, rule=None, sandboxed=False, working_dir=cwd
            )
            assert verdict is None
            rules = PermissionRules(tmp_path / "rules.json", working_dir=cwd, defaults=False)
            rules.add("code", "effects:in-folder", scope="always")
            assert rules.check(CodeAction(path)) != "allow"


def test_a_folder_of_app_state_is_too_wide_a_folder_above_it_is_carved(tmp_path: Path) -> None:
    with _env(FREEACT_TUI_HOME=str(tmp_path / "H")):
        (tmp_path / "H" / "config").mkdir(parents=True)
        assert too_wide(os.path.realpath(tmp_path / "H" / "config"))
        assert too_wide(os.path.realpath(tmp_path / "H"))
        # a folder that holds it stays a project: its own files are in-folder work, the app's are not
        assert not too_wide(os.path.realpath(tmp_path))
        assert (
            read_effects(CodeAction("open('notes.txt', 'w').write('x')"), tmp_path).effect_class
            == "in-folder"
        )
        assert read_effects(CodeAction("open('H/data/x', 'w').write('x')"), tmp_path).effect_class is None
        # removing or moving the folder that holds the app's state removes it too
        assert read_effects(CodeAction("import shutil\nshutil.rmtree('H')"), tmp_path).effect_class is None
        # a read there is no in-folder work either (other sessions, the trust store)
        assert (
            read_effects(CodeAction("open('H/config/trusted.json').read()"), tmp_path).effect_class
            == "outside"
        )


def test_project_folder_unaffected(tmp_path: Path) -> None:
    with _env(FREEACT_TUI_HOME=str(tmp_path / "H")):
        work = tmp_path / "code" / "x"
        work.mkdir(parents=True)
        assert read_effects(CodeAction("open('out.csv', 'w').write('x')"), work).effect_class == "in-folder"
        assert app_state_at(str(work)) is None and app_state_below(str(work)) is None


def test_a_symlink_to_app_state_leads_there(tmp_path: Path) -> None:
    with _env(FREEACT_TUI_HOME=str(tmp_path / "H")):
        paths.config_dir().mkdir(parents=True)
        work = tmp_path / "work"
        work.mkdir()
        (work / "cfg").symlink_to(paths.config_dir())
        assert (
            read_effects(CodeAction("open('cfg/permissions.json', 'w').write('{}')"), work).effect_class
            is None
        )
        # the app's home itself reached through a symlink
        (tmp_path / "ln").symlink_to(tmp_path / "H")
        with _env(FREEACT_TUI_HOME=str(tmp_path / "ln")):
            assert app_state_at(str(tmp_path / "H" / "config" / "permissions.json")) is not None


def test_every_folder_the_app_keeps_state_in_is_one(tmp_path: Path) -> None:
    with _env(FREEACT_TUI_HOME=None, HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "c")):
        dirs = [d.path for d in app_state_dirs()]
        assert os.path.realpath(paths.config_dir()) in dirs and os.path.realpath(paths.data_dir()) in dirs
        assert str(tmp_path / "home" / ".freeact") in dirs
        assert app_state_at(str(tmp_path / "c" / "freeact-tui" / "permissions.json")) is not None
        assert app_state_at(str(tmp_path / "c" / "other-app" / "x")) is None


def test_allow_rules_by_pattern_never_reach_app_state(tmp_path: Path) -> None:
    with _env(FREEACT_TUI_HOME=str(tmp_path / "H")):
        config = paths.config_dir()
        config.mkdir(parents=True)
        (config / "permissions.json").write_text("{}")
        rules = PermissionRules(tmp_path / "rules.json", working_dir=config)  # the defaults: cat, grep …
        assert rules.check(ShellAction("cat permissions.json")) != "allow"
        rules.add("shell", "tee *", scope="always")
        assert rules.check(ShellAction("tee permissions.json")) != "allow"
        work = tmp_path / "work"
        work.mkdir()
        (work / "a.txt").write_text("x")
        elsewhere = PermissionRules(tmp_path / "rules.json", working_dir=work)
        assert elsewhere.check(ShellAction("cat a.txt")) == "allow"  # an ordinary folder: unchanged


def test_a_shell_write_into_app_state_is_asked_under_a_users_pattern(tmp_path: Path) -> None:
    with _env(FREEACT_TUI_HOME=str(tmp_path / "H")):
        config = paths.config_dir()
        config.mkdir(parents=True)
        rules = PermissionRules(tmp_path / "rules.json", working_dir=tmp_path)  # the folder that holds H
        rules.add("shell", "echo *", scope="always")
        rules.add("shell", "cp *", scope="always")
        assert rules.check(ShellAction("echo '{}' > H/config/permissions.json")) != "allow"
        assert rules.check(ShellAction("cp planted.json H/config/permissions.json")) != "allow"
        assert rules.check(ShellAction("cp a.txt b.txt")) == "allow"  # the user's rules still hold elsewhere
        assert rules.check(ShellAction("echo hi")) == "allow"


def test_the_sandbox_binds_app_state_inside_the_folder_read_only(tmp_path: Path) -> None:
    from freeact_tui.execution.isolation.protect import ProtectedNames

    with _env(FREEACT_TUI_HOME=str(tmp_path / "H")):
        for made in (paths.config_dir(), paths.data_dir()):
            made.mkdir(parents=True)
        protected = ProtectedNames(tmp_path)  # the folder that holds the app's home
        try:
            binds = protected.binds()
            options = protected.options()
        finally:
            protected.cleanup()
        home = (tmp_path / "H").resolve()
        assert (home, home) in binds  # its own folder over itself, read-only: never writable in the sandbox
        at = options.index(str(home))
        assert options[at - 1 : at + 2] == ["--ro-bind", str(home), str(home)]
        # the sandboxed-auto mode vouches for nothing in a folder that is the app's own state
        call = CodeAction("open('permissions.json', 'w').write('{}')")
        verdict = judge(
            ApprovalMode.SANDBOXED_AUTO, call, None, rule=None, sandboxed=True, working_dir=paths.config_dir()
        )
        assert verdict is None
        assert judge(ApprovalMode.SANDBOXED_AUTO, call, None, rule=None, sandboxed=True, working_dir=tmp_path)


def test_the_users_own_session_store_is_app_state(tmp_path: Path) -> None:
    with _env(FREEACT_TUI_HOME=str(tmp_path / "H")):
        store = tmp_path / "my-sessions"
        paths.user_config_file().parent.mkdir(parents=True)
        paths.user_config_file().write_text(f'sessions_dir = "{store}"\n')
        meta = store / "0b4f" / "meta.json"
        assert app_state_at(str(meta)) is not None
        reading = read_effects(
            CodeAction(f"open({'my-sessions/0b4f/meta.json'!r}, 'w').write('x')"), tmp_path
        )
        assert reading.effect_class is None
        paths.user_config_file().write_text("theme = 'nord'\n")  # moved back: no longer the app's
        assert app_state_at(str(meta)) is None


def test_a_projects_rules_never_reach_app_state_in_its_folder(tmp_path: Path) -> None:
    import tomli_w

    folder = tmp_path / "proj"
    (folder / ".freeact").mkdir(parents=True)
    (folder / "docs").mkdir()
    with _env(FREEACT_TUI_HOME=str(folder / "H")):
        paths.config_dir().mkdir(parents=True)
        allow = [
            {"type": "FileWrite", "tool_name": "filesystem_*", "path": "docs/**"},
            {"type": "FileWrite", "tool_name": "filesystem_*", "path": "H/**"},  # a planted rule
        ]
        (folder / ".freeact" / "permissions.toml").write_text(tomli_w.dumps({"allow": allow}))
        rules = PermissionRules(None, defaults=False, working_dir=folder, project=folder)
        docs = folder / "docs" / "notes.md"
        assert rules.check(FileWrite("docs/notes.md", "x", resolved=str(docs))) == "allow"  # its own files
        target = paths.permissions_file()
        call = FileWrite("H/config/permissions.json", "x", resolved=os.path.realpath(target))
        assert rules.check(call) != "allow"
