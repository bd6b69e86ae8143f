"""git reads that print file contents with no pathspec naming them never print a committed secret by
default (issue #39, round 3).

Class: ``git show <commit>``, ``git log -p``, ``git diff <a> <b>``, ``git grep``, ``git archive`` print
whatever files a commit or the tree holds, ``.env`` and keys included, though no argument names them.
Mechanism: ``reach.gitnames.unseen_git_read`` (a content-printing read is bounded by its pathspec, as git
reads it, against the secret-named paths of the store); the built-in and project allows do not apply
to a read that reaches one. The test runs every generated
command the rules allow in a real repository holding secrets and checks that none prints one.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import ShellAction

SECRETS = ("hunter2", "hunter3", "PRIVATEKEY")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-c", "commit.gpgsign=false"]

    def commit(files: dict[str, str], message: str) -> None:
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        subprocess.run(["git", "add", "-f", "."], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", message], cwd=root, check=True)

    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    commit({"README": "hello\n", "a.py": "x = 1\n", "sub/x.py": "y = 1\n"}, "one")
    commit(
        {
            ".env": "TOKEN=hunter2\n",
            "sub/.env": "K=hunter2\n",
            "keys/id_rsa": "PRIVATEKEY\n",
            "a.py": "x = 2\n",
        },
        "two",
    )
    (root / ".env").write_text("TOKEN=hunter3\n")  # a change in the working tree too
    return root


_COMMANDS = st.sampled_from(["show", "log", "diff", "grep hunter", "whatchanged", "diff-tree -r", "archive HEAD",
                             "format-patch --stdout -1", "log --all", "diff --cached", "grep -i TOKEN"])  # fmt: skip
_FLAGS = st.lists(st.sampled_from(["-p", "--stat", "--oneline", "-U1", "--name-only", "-s", "--cc", "-1", "--patch",
                                   "--name-status", "-sp", "--word-diff"]), max_size=3)  # fmt: skip
_REVS = st.sampled_from(["", "HEAD", "HEAD~1", "HEAD~1 HEAD", "HEAD~1..HEAD", "HEAD:README", "HEAD~1:a.py"])
_PATHSPECS = st.sampled_from(
    ["", "-- README", "-- a.py", "-- sub", "-- .", "-- '*.py'", "-- sub/x.py", "-- keys"]
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=_COMMANDS, flags=_FLAGS, revs=_REVS, pathspec=_PATHSPECS)
def test_no_allowed_git_read_prints_a_secret(
    repo: Path, command: str, flags: list[str], revs: str, pathspec: str
) -> None:
    line = " ".join(part for part in (f"git {command}", *flags, revs, pathspec) if part)
    if PermissionRules(None, working_dir=repo).check(ShellAction(line)) != "allow":
        return
    done = subprocess.run(shlex.split(line), cwd=repo, capture_output=True, timeout=30)
    printed = done.stdout + done.stderr
    assert not any(s.encode() in printed for s in SECRETS), line


@pytest.mark.parametrize(
    "line",
    ["git show", "git show HEAD", "git log -p", "git diff HEAD~1 HEAD", "git diff", "git grep TOKEN",
     "git log -p -- sub", "git diff HEAD~1 -- .", "git show HEAD --word-diff",
     "git diff --no-index .env README", "git grep --untracked TOKEN"],
)  # fmt: skip
def test_the_reported_reads_ask(repo: Path, line: str) -> None:
    assert PermissionRules(None, working_dir=repo).check(ShellAction(line)) == "ask", line


@pytest.mark.parametrize(
    "line",
    ["git log --oneline", "git show --stat", "git show HEAD:README", "git log -p -- a.py", "git diff -- a.py",
     "git status", "git show -s HEAD", "git log --name-only", "git diff --stat HEAD~1"],
)  # fmt: skip
def test_reads_that_print_no_secret_stay_allowed(repo: Path, line: str) -> None:
    assert PermissionRules(None, working_dir=repo).check(ShellAction(line)) == "allow", line


def test_a_repository_that_never_held_a_secret_name_reads_unasked(tmp_path: Path) -> None:
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=tmp_path, check=True)
    rules = PermissionRules(None, working_dir=tmp_path)
    for line in ("git show", "git log -p", "git diff HEAD"):
        assert rules.check(ShellAction(line)) == "allow", line
    (tmp_path / ".env").write_text("TOKEN=hunter2\n")
    subprocess.run(["git", "add", "-f", ".env"], cwd=tmp_path, check=True)  # staged: in the index only
    assert rules.check(ShellAction("git diff --cached")) == "ask"
