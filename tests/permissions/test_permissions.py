"""Permission rules: precedence, defaults, shell safety, path patterns, persistence and broken files."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from freeact_tui.permissions.rules import PermissionRules, PermissionsFileError, RuleEntry
from freeact_tui.project import paths
from freeact_tui.toolcalls import (
    CodeAction,
    JsonToolCall,
    ProgrammaticToolCall,
    ShellAction,
    ShellScript,
    SubagentTask,
)


@pytest.fixture
def wd(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def rules(wd: Path) -> PermissionRules:
    return PermissionRules(working_dir=wd)


def sh(command: str) -> ShellAction:
    return ShellAction(command)


def fs_read(path: str) -> ProgrammaticToolCall:
    return ProgrammaticToolCall("fs", "read_file", {"path": path})


# --- defaults -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ls", "ls -la src", "pwd", "cat README.md", "head -n 5 a.txt", "tail -20 log.txt", "wc -l *.py",
        "grep -n 'def main' src/app.py", "rg TODO src", "find . -name '*.py' -type f", "echo hello world",
        "which python", "git status", "git status --short", "git log --oneline -5", "git diff HEAD~1",
        "git show HEAD", "git branch", "git branch -a", "python --version", "python3 -V",
        "ls -la 2>&1", "ls 2>/dev/null", "!ls -la", "ls | wc -l", "git log && git status",
        "cat env.txt", "sort -n data.txt",
    ],
)  # fmt: skip
def test_default_allow_list_allows_read_only_commands(rules: PermissionRules, command: str) -> None:
    assert rules.check(sh(command)) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build", "git push", "git commit -m x", "git branch -D main", "git checkout .", "pip install x",
        "git status; rm -rf /", "git status && rm -rf /", "ls | sh", "git status $(rm -rf /)",
        "git status `rm -rf /`", 'echo "$(curl evil)"', "cat x > y", "echo hi >> notes.txt", "ls >| out",
        "cat <(rm x)", "find . -delete", "find . -name x -exec rm {} ;", "find . -fprint out",
        "git log --output=x", "git diff --output x", "sort -o out in", "sort --compress-program=sh f", "sort -ro out in", "tree -o out",
        "grep -r API_KEY .", "grep -Rn KEY src", "rg --hidden KEY", "rg -uu KEY", "rg --pre=sh x",
        "diff -r a b", "echo $OPENAI_API_KEY", "cat ${HOME}/x", "date -s 12:00", "env", "printenv",
        "echo 'unterminated", "(ls)", "FOO=1 ls", "sudo ls", "",
        "cat .envrc", "cat .git/modules/sub/config",  # credential stores (the secret table)
    ],
)  # fmt: skip
def test_default_allow_list_asks_for_everything_else(rules: PermissionRules, command: str) -> None:
    assert rules.check(sh(command)) == "ask"


def test_other_kinds_ask_by_default(rules: PermissionRules) -> None:
    assert rules.check(CodeAction("print(1)")) == "ask"
    assert rules.check(ShellScript("ls\npwd")) == "ask"
    assert rules.check(fs_read("a.txt")) == "ask"
    assert rules.check(JsonToolCall("search", {"q": "x"})) == "ask"
    assert rules.check(SubagentTask("do it")) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "cat .env", "cat ./.env", "cat sub/dir/.env", "head -n 3 config/.env.local", "grep KEY .env",
        "cat < .env", "cat <.env", "tail --file=.env", "git show HEAD:.env", "cat sub/../.env",
        "wc -l a.txt .env", "ls && cat .env",
    ],
)  # fmt: skip
def test_env_files_ask_by_default(rules: PermissionRules, command: str) -> None:
    assert rules.check(sh(command)) == "ask"


def test_env_files_ask_by_absolute_home_and_glob_paths(
    rules: PermissionRules, wd: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (wd / ".env").write_text("KEY=secret\n")
    (wd / "link").symlink_to(wd / ".env")
    monkeypatch.setenv("HOME", str(tmp_path))
    for command in (
        f"cat {wd}/.env",
        "cat ~/.env",
        "cat /etc/app/.env",
        "cat .e*",
        "cat .en?",
        "cat link",
        "cat ~/.ssh/id_rsa",
        "head deploy/server.key",
        "cat /etc/ssl/private/site.pem",
    ):
        assert rules.check(sh(command)) == "ask", command
    assert rules.check(sh("cat *")) == "ask"  # expands to ``link``
    (wd / "link").unlink()
    (wd / "notes.txt").write_text("hi\n")
    assert rules.check(sh("cat *")) == "allow"  # like bash, ``*`` does not expand to hidden files


def test_env_ask_beats_any_allow(rules: PermissionRules) -> None:
    rules.add("shell", "cat *", scope="session")
    rules.add("mcp", "fs.*", scope="session")
    rules.add("script", "*", scope="session")
    rules.add("code", "*", scope="session")
    assert rules.check(sh("cat .env")) == "ask"
    assert rules.check(fs_read("app/.env")) == "ask"
    assert rules.check(fs_read("app/settings.toml")) == "allow"
    assert rules.check(ProgrammaticToolCall("fs", "read_many", {"paths": ["a.txt", ".env"]})) == "ask"
    assert rules.check(ShellScript("cd app\ncat .env\n")) == "ask"
    assert rules.check(CodeAction("print(open('.env').read())")) == "ask"
    assert rules.check(CodeAction("print(open('data.csv').read())")) == "allow"


def test_defaults_can_be_turned_off(wd: Path) -> None:
    rules = PermissionRules(working_dir=wd, defaults=False)
    assert rules.check(sh("ls")) == "ask"
    rules.add("shell", "cat *", scope="session")
    assert rules.check(sh("cat .env")) == "allow"
    assert [r for r in rules.rules() if r.scope == "default"] == []


def test_skip_permissions_allows_everything(wd: Path) -> None:
    rules = PermissionRules(working_dir=wd, skip_permissions=True)
    rules.add("shell", "rm *", scope="session", effect="ask")
    for call in (CodeAction("import os"), sh("rm -rf /"), sh("cat .env"), SubagentTask("x"), fs_read(".env")):
        assert rules.check(call) == "allow"


# --- precedence ----------------------------------------------------------------------------


def test_ask_beats_allow_in_every_scope(rules: PermissionRules) -> None:
    rules.add("shell", "make *", scope="always")
    assert rules.check(sh("make test")) == "allow"
    rules.add("shell", "make deploy*", scope="session", effect="ask")
    assert rules.check(sh("make deploy")) == "ask"
    assert rules.check(sh("make test")) == "allow"

    rules.add("tool", "db_*", scope="session")
    rules.add("tool", "db_drop", scope="always", effect="ask")
    assert rules.check(JsonToolCall("db_query")) == "allow"
    assert rules.check(JsonToolCall("db_drop")) == "ask"


def test_precedence_order_session_ask_always_ask_session_allow_always_allow(rules: PermissionRules) -> None:
    rules.add("shell", "ls *", scope="always", place="always")
    assert rules.matching_rule(sh("ls -la")) == RuleEntry(
        "shell", "ls *", "allow", "always"
    )  # before default
    rules.add("shell", "ls -la", scope="session")
    assert rules.matching_rule(sh("ls -la")) == RuleEntry("shell", "ls -la", "allow", "session")
    rules.add("shell", "ls -l*", scope="always", effect="ask")
    assert rules.matching_rule(sh("ls -la")) == RuleEntry("shell", "ls -l*", "ask", "always")
    rules.add("shell", "ls *", scope="session", effect="ask")
    assert rules.matching_rule(sh("ls -la")) == RuleEntry("shell", "ls *", "ask", "session")
    order = [(e.effect, e.scope) for e in rules.rules()]
    assert order == sorted(order, key=lambda k: ["ask", "allow"].index(k[0]) * 3
                           + ["session", "always", "default"].index(k[1]))  # fmt: skip


# --- shell patterns ---------------------------------------------------------------------------


def test_user_wildcards_never_cover_substitution_redirection_or_several_commands(
    rules: PermissionRules,
) -> None:
    rules.add("shell", "make *", scope="session")
    assert rules.check(sh("make test")) == "allow"
    assert rules.check(sh("make")) == "allow"  # "X *" also covers bare "X"
    for command in ("make $(rm -rf ~)", "make `id`", "make > /etc/passwd", "make test; rm -rf ~", "make 'x"):
        assert rules.check(sh(command)) == "ask", command
    # IPython would fill ``$TARGET`` from a Python variable after approval: it could be anything.
    assert rules.check(sh("make $TARGET")) == "ask"
    rules.add("shell", "make > build.log", scope="session")
    assert rules.check(sh("make > build.log")) == "allow"  # spelled out exactly: allowed


def test_suggested_pattern_round_trip(rules: PermissionRules) -> None:
    call = sh("git commit -m 'first'")
    assert rules.check(call) == "ask"
    rules.add(call.kind, call.suggested_pattern(), scope="session")
    assert rules.check(sh('git commit -m "second"')) == "allow"
    assert rules.check(sh("git push")) == "ask"


def test_composite_command_allowed_only_when_every_part_is(rules: PermissionRules) -> None:
    rules.add("shell", "pytest *", scope="session")
    assert rules.check(sh("pytest -q && git status | head")) == "allow"
    assert rules.check(sh("pytest -q && git push")) == "ask"


def test_mcp_and_tool_patterns_match_names(rules: PermissionRules) -> None:
    rules.add("mcp", "github.list_*", scope="session")
    rules.add("subagent", "subagent_task", scope="session")
    assert rules.check(ProgrammaticToolCall("github", "list_issues")) == "allow"
    assert rules.check(ProgrammaticToolCall("github", "create_issue")) == "ask"
    assert rules.check(JsonToolCall("github.list_issues")) == "ask"  # another kind
    assert rules.check(SubagentTask("x")) == "allow"


def test_any_kind_rule(rules: PermissionRules) -> None:
    rules.add("*", "path:secrets/**", scope="session", effect="ask")
    rules.add("shell", "cat *", scope="session")
    assert rules.check(sh("cat secrets/a/b.txt")) == "ask"
    assert rules.check(fs_read("secrets/key")) == "ask"
    assert rules.check(sh("cat public/a.txt")) == "allow"


# --- path patterns ------------------------------------------------------------------------------


def test_double_star_crosses_directories_single_star_does_not(rules: PermissionRules) -> None:
    rules.add("mcp", "path:docs/**", scope="session")
    rules.add("tool", "path:src/*.py", scope="session")
    assert rules.check(fs_read("docs/a.md")) == "allow"
    assert rules.check(fs_read("docs/deep/er/a.md")) == "allow"
    assert rules.check(fs_read("other/a.md")) == "ask"
    assert rules.check(JsonToolCall("read", {"file_path": "src/app.py"})) == "allow"
    assert rules.check(JsonToolCall("read", {"file_path": "src/pkg/app.py"})) == "ask"
    assert rules.check(JsonToolCall("read", {"query": "src/app.py"})) == "ask"  # not a path argument


def test_paths_are_relative_to_the_working_dir(rules: PermissionRules, wd: Path) -> None:
    rules.add("mcp", "path:**", scope="session")
    assert rules.check(fs_read(f"{wd}/docs/a.md")) == "allow"
    assert rules.check(fs_read("./a.md")) == "allow"
    assert rules.check(fs_read("/etc/passwd")) == "ask"
    assert rules.check(fs_read("../outside.txt")) == "ask"
    assert rules.check(fs_read("docs/../../outside.txt")) == "ask"
    rules.add("mcp", "path:~/notes/**", scope="session")
    assert rules.check(fs_read(str(Path.home() / "notes" / "a.md"))) == "allow"
    rules.add("mcp", "path:/etc/*", scope="session")
    assert rules.check(fs_read("/etc/passwd")) == "allow"
    assert rules.check(fs_read("/etc/ssl/key.pem")) == "ask"


def test_path_allow_needs_every_path_inside(rules: PermissionRules) -> None:
    rules.add("mcp", "path:docs/**", scope="session")
    assert (
        rules.check(ProgrammaticToolCall("fs", "copy", {"source": "docs/a", "destination": "docs/b"}))
        == "allow"
    )
    assert (
        rules.check(ProgrammaticToolCall("fs", "copy", {"source": "docs/a", "destination": "bin/b"})) == "ask"
    )
    assert rules.check(ProgrammaticToolCall("fs", "stats", {})) == "ask"  # no path at all


# --- persistence ------------------------------------------------------------------------------


def test_always_rules_persist_and_session_rules_do_not(wd: Path) -> None:
    path = paths.permissions_file()
    assert not path.exists()
    rules = PermissionRules.load(path, working_dir=wd)
    # place="always": the user's file itself (a bare `pytest *` is kept with its folder: it runs the folder's tests, #42)
    rules.add("shell", "pytest *", scope="always", place="always")
    rules.add("shell", "pytest *", scope="always", place="always")  # no duplicate
    rules.add("mcp", "fs.write_*", scope="always", effect="ask")
    rules.add("code", "*", scope="session")
    assert json.loads(path.read_text()) == {
        "allow": [{"kind": "shell", "pattern": "pytest *"}],
        "ask": [{"kind": "mcp", "pattern": "fs.write_*"}],
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left behind

    again = PermissionRules.load(path, working_dir=wd)
    assert again.check(sh("pytest -x")) == "allow"
    assert again.check(ProgrammaticToolCall("fs", "write_file", {"path": "a"})) == "ask"
    assert again.check(CodeAction("1")) == "ask"


def test_always_rules_of_two_instances_merge(wd: Path) -> None:
    path = paths.permissions_file()
    first, second = PermissionRules.load(path, working_dir=wd), PermissionRules.load(path, working_dir=wd)
    first.add("shell", "make *", scope="always", place="always")
    second.add("shell", "pytest *", scope="always", place="always")
    assert json.loads(path.read_text())["allow"] == [
        {"kind": "shell", "pattern": "make *"},
        {"kind": "shell", "pattern": "pytest *"},
    ]
    assert second.check(sh("make")) == "allow"


def test_memory_only_rules_keep_always_rules_in_memory(wd: Path) -> None:
    rules = PermissionRules(None, working_dir=wd)
    rules.add("shell", "make *", scope="always", place="always")
    assert rules.check(sh("make")) == "allow"
    assert RuleEntry("shell", "make *", "allow", "always") in rules.rules()
    assert not paths.permissions_file().exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "expected an object"),
        ('{"allow": [], "block": []}', "unknown key 'block'"),
        ('{"allow": {"kind": "shell"}}', "'allow' must be a list"),
        ('{"allow": [{"kind": "shell"}]}', "rule 1 of 'allow'"),
        (
            '{"ask": [{"kind": "shell", "pattern": "x"}, {"kind": "bash", "pattern": "x"}]}',
            "unknown kind 'bash'",
        ),
        ('{"allow": [{"kind": "shell", "pattern": ""}]}', "non-empty"),
        ('{"allow": [{"kind": "shell", "pattern": 3}]}', "non-empty string"),
    ],
)
def test_broken_file_is_reported_and_left_alone(wd: Path, content: str, message: str) -> None:
    path = paths.permissions_file()
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(PermissionsFileError) as err:
        PermissionRules.load(path, working_dir=wd)
    assert str(path) in str(err.value) and message in str(err.value)
    assert err.value.path == path
    assert path.read_text() == content


def test_file_broken_after_load_is_not_overwritten(wd: Path) -> None:
    path = paths.permissions_file()
    rules = PermissionRules.load(path, working_dir=wd)
    rules.add("shell", "make *", scope="always", place="always")
    path.write_text('{"allow": [{"kind": "shell", "pattern": "make *"}')  # e.g. a half-done hand edit
    with pytest.raises(PermissionsFileError, match="not valid JSON"):
        rules.add("shell", "pytest *", scope="always", place="always")
    assert path.read_text() == '{"allow": [{"kind": "shell", "pattern": "make *"}'
    assert rules.check(sh("pytest")) == "ask"  # not added
    rules.add("shell", "pytest *", scope="session")  # the session scope still works
    assert rules.check(sh("pytest")) == "allow"


def test_unreadable_and_unwritable_files(wd: Path, tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(PermissionsFileError, match="cannot be read"):
        PermissionRules.load(tmp_path / "dir.json")
    (tmp_path / "latin1.json").write_bytes(b'{"allow": ["\xe9"]}')
    with pytest.raises(PermissionsFileError, match="cannot be read"):
        PermissionRules.load(tmp_path / "latin1.json")
    # Missing, so it reads as "no rules yet", but /proc takes no new directories, even from root.
    rules = PermissionRules.load(Path("/proc/freeact-tui-test/permissions.json"), working_dir=wd)
    with pytest.raises(PermissionsFileError, match="cannot be written"):
        rules.add("shell", "make *", scope="always")
    assert rules.check(sh("make")) == "ask"


def test_empty_file_means_no_rules(wd: Path) -> None:
    path = paths.permissions_file()
    path.parent.mkdir(parents=True)
    path.write_text("\n")
    rules = PermissionRules.load(path, working_dir=wd)
    assert [r for r in rules.rules() if r.scope != "default"] == []


def test_add_rejects_bad_input(rules: PermissionRules) -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        rules.add("bash", "ls", scope="session")
    with pytest.raises(ValueError, match="non-empty"):
        rules.add("shell", "  ", scope="session")
    with pytest.raises(ValueError, match="unknown scope"):
        rules.add("shell", "ls", scope="forever")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown effect"):
        rules.add("shell", "ls", scope="session", effect="block")  # type: ignore[arg-type]


# -- the deny tier ---------------------------------------------------------------------------------


def test_deny_beats_allow_and_ask_in_every_scope(rules: PermissionRules) -> None:
    rules.add("shell", "git *", scope="session")
    rules.add("shell", "git push *", scope="always", effect="deny")
    rules.add("shell", "git push *", scope="session", effect="ask")
    assert rules.check(sh("git status")) == "allow"
    assert rules.check(sh("git push origin main")) == "deny"
    entry = rules.matching_rule(sh("git push origin main"))
    assert entry == RuleEntry("shell", "git push *", "deny", "always")
    assert [e.effect for e in rules.rules()][:2] == ["deny", "ask"]  # listed strictest first


def test_deny_beats_skip_permissions(wd: Path) -> None:
    rules = PermissionRules(working_dir=wd, skip_permissions=True)
    rules.add("*", "*rm -rf*", scope="session", effect="deny")
    assert rules.check(sh("rm -rf build")) == "deny"
    assert rules.check(sh("make clean")) == "allow"


def test_deny_matches_a_part_of_a_composite_or_hidden_command(rules: PermissionRules) -> None:
    rules.add("*", "*rm -rf*", scope="session", effect="deny")
    rules.add("shell", "cd *", scope="session")
    # one denied part refuses the whole command, even when the other parts are allowed
    assert rules.check(sh("cd /tmp && rm -rf x")) == "deny"
    # wildcards that would never *allow* a command with a substitution or $VAR still *deny* it
    assert rules.check(sh("rm -rf $HOME")) == "deny"
    assert rules.check(sh("echo $(rm -rf /)")) == "deny"
    assert rules.check(sh("cd /tmp && ls")) == "allow"  # every part allowed (ls by default)
    assert rules.check(sh("cd /tmp && make")) == "ask"  # a part no rule matches


def test_deny_path_pattern_refuses_any_named_path(rules: PermissionRules) -> None:
    rules.add("*", "path:secrets/**", scope="session", effect="deny")
    rules.add("mcp", "fs.read_file", scope="session")
    assert rules.check(fs_read("notes.txt")) == "allow"
    assert rules.check(fs_read("secrets/db/password")) == "deny"
    assert rules.check(sh("cat README secrets/token")) == "deny"  # one of several paths suffices


def test_deny_rules_persist_in_the_file_and_load(wd: Path, tmp_path: Path) -> None:
    file = tmp_path / "permissions.json"
    rules = PermissionRules(file, working_dir=wd)
    rules.add("tool", "delete_*", scope="always", effect="deny")
    assert json.loads(file.read_text())["deny"] == [{"kind": "tool", "pattern": "delete_*"}]
    again = PermissionRules.load(file, working_dir=wd)
    assert again.check(JsonToolCall("delete_repo", {})) == "deny"
    assert again.check(JsonToolCall("list_repos", {})) == "ask"
    file.write_text('{"deny": [{"kind": "code", "pattern": "*"}]}')
    assert PermissionRules.load(file, working_dir=wd).check(CodeAction("print(1)")) == "deny"
    file.write_text('{"deny": {"kind": "code"}}')
    with pytest.raises(PermissionsFileError, match="'deny' must be a list"):
        PermissionRules.load(file, working_dir=wd)
