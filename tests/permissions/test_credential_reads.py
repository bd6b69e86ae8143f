"""No default-allowed read prints a credential store (the class of ``git remote -v`` printing a token).

A repository whose every git credential store holds a planted token (the config's remote URL, a
worktree's ``config.worktree``, a submodule's ``.git/modules/<name>/config``, the legacy
``.git/remotes``/``.git/branches`` files) and a process environment that holds one too. Commands are
generated from the built-in allow table (each default pattern's program, wrapped or not, with option
clusters from the program's own option table, ``--``, ``-c``, aliases, paths to the stores spelled
several ways, variable expansions): every one the rules allow unasked is RUN in the repository with bash,
and its output must not hold the token. The reported cases must ask, and do print the token when run
(so the corpus would see them).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.match import DEFAULT_RULES
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.shell.options import PROGRAM_OPTIONS
from freeact_tui.toolcalls import ShellAction

TOKEN = "ghp_PLANTED0credential0token"
URL = f"https://user:{TOKEN}@github.com/owner/repo.git"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("creds") / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", ".")
    _git(repo, "config", "user.email", "a@example.com")
    _git(repo, "config", "user.name", "a")
    _git(repo, "remote", "add", "origin", URL)
    (repo / "f.txt").write_text("one\n")
    _git(repo, "add", "f.txt")
    _git(repo, "commit", "-qm", "one")
    git_dir = repo / ".git"
    (git_dir / "config.worktree").write_text(f'[remote "wt"]\n\turl = {URL}\n')
    (git_dir / "modules" / "sub").mkdir(parents=True)
    (git_dir / "modules" / "sub" / "config").write_text(f'[remote "origin"]\n\turl = {URL}\n')
    (git_dir / "worktrees" / "w").mkdir(parents=True)
    (git_dir / "worktrees" / "w" / "config.worktree").write_text(f'[remote "w"]\n\turl = {URL}\n')
    (git_dir / "remotes").mkdir(exist_ok=True)
    (git_dir / "remotes" / "legacy").write_text(f"URL: {URL}\nPull: refs/heads/main:refs/heads/main\n")
    (git_dir / "branches").mkdir(exist_ok=True)
    (git_dir / "branches" / "old").write_text(URL + "\n")
    return repo


def _run(repo: Path, command: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(repo.parent),
        "GH_TOKEN": TOKEN,
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
    }
    try:
        done = subprocess.run(
            ["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=3,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired as stopped:  # ``tail -f``: what it printed before is judged
        out, err = stopped.stdout or b"", stopped.stderr or b""
        return (out.decode() if isinstance(out, bytes) else out) + (err.decode() if isinstance(err, bytes) else err)
    return done.stdout + done.stderr


def _rules(repo: Path) -> PermissionRules:
    return PermissionRules(None, working_dir=repo)


REPORTED = ("git remote -v", "cat .git/modules/sub/config", "cat .git/config.worktree", "cat .git/remotes/legacy",
            "head .git/branches/old", "cat .git/worktrees/w/config.worktree")  # fmt: skip


@pytest.mark.parametrize("command", REPORTED)
def test_each_credential_store_is_asked_though_it_prints_the_token(repo: Path, command: str) -> None:
    assert TOKEN in _run(repo, command)  # the store is real: run, it prints the token
    assert _rules(repo).check(ShellAction(command, full_command=command)) == "ask"


# The heads of the built-in allow table: each default pattern's literal words (``git log *`` → git log).
HEADS = sorted({r.pattern.removesuffix(" *") for r in DEFAULT_RULES["allow"] if r.kind == "shell"})
WRAPPERS = ("", "env ", "command ", "X=1 ", "nice ", "git -c core.pager=cat ", "exec ", "\\", "/usr/bin/env ")
STORES = (
    ".git/config", "./.git/config", ".git//config", ".git/./config", ".git/modules/sub/config", ".git/modules/*/config",
    ".git/*/sub/config", ".git/config.worktree", ".git/config*", ".git/worktrees/w/config.worktree", ".git/remotes/legacy",
    ".git/remotes/*", ".git/branches/old", ".git/b*/*", "'.git/config'", '".git"/config', ".git/**", "$GH_TOKEN",
    '"$GH_TOKEN"', "${GH_TOKEN}", "${GH_TOKEN:-x}", "$(cat .git/config)", "`cat .git/config`", "<.git/config",
    "f.txt", ".", "-",
)  # fmt: skip
GIT_WORDS = ("remote", "-v", "--verbose", "get-url", "origin", "config", "-l", "--list", "--get", "--get-regexp",
             "remote.origin.url", "url", "ls-remote", "show", "-g", "--all", "log", "HEAD", "--format=%H", "-c",
             "alias.x=remote -v", "x", "--", "branch", "-vv", "status", "-sb")  # fmt: skip


@st.composite
def _commands(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(HEADS))
    program = head.split()[0]
    table = PROGRAM_OPTIONS.get(program)
    letters = (table.flags if table else "") or "v"
    options = st.builds(lambda s: "-" + s, st.text(st.sampled_from(letters), min_size=1, max_size=3))
    words = [st.sampled_from(STORES), options, st.just("--")]
    if program == "git":
        words.append(st.sampled_from(GIT_WORDS))
    args = draw(st.lists(st.one_of(*words), max_size=4))
    return draw(st.sampled_from(WRAPPERS)) + " ".join([head, *args])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=_commands())
def test_no_default_allowed_read_prints_a_planted_token(repo: Path, command: str) -> None:
    if _rules(repo).check(ShellAction(command, full_command=command)) != "allow":
        return  # asked: the user sees it before it runs
    assert TOKEN not in _run(repo, command), f"allowed unasked and printed the token: {command}"


def test_the_generated_corpus_reaches_allowed_reads(repo: Path) -> None:
    """The corpus is not all asked: plain reads of the same folder stay allowed (what the test runs)."""
    rules = _rules(repo)
    for command in ("git status", "git log --format=%H", "cat f.txt", "ls .git", "git branch -vv", "pip list"):
        assert rules.check(ShellAction(command, full_command=command)) == "allow", command
