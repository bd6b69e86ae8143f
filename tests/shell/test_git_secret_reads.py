"""git reads a secret from its object store by names that are not path words (#39, round 2).

Class: ``<rev>:<path>``, ``:<n>:<path>``, glob pathspecs, pathspec magic ``:(…)`` and bare object ids
name a file's contents to a default-allowed ``git show``/``log -p``/``diff``/``blame``. Mechanism:
``gitreads.secret_reference`` reads each argument as git does and checks it against the one secret
table (``SECRET_NAMES``, the same the ask rules are made of); ``unsafe_use`` makes such a command ask.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.shell.gitreads import SECRET_NAMES, secret_reference
from freeact_tui.toolcalls import ShellAction


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for name, text in {".env": "SECRET=1\n", "a.key": "k\n", "b.pem": "p\n", "README": "x\n"}.items():
        (tmp_path / name).write_text(text)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-f", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=tmp_path, check=True)
    return tmp_path


def test_the_attackers_spellings_ask(repo: Path) -> None:
    blob = subprocess.run(["git", "rev-parse", "HEAD:.env"], cwd=repo, capture_output=True, text=True).stdout
    rules = PermissionRules(None, working_dir=repo)
    for command in ("git show :0:.env", "git show :1:.env", "git show :.env", "git show HEAD:.env",
                    "git log -p -- '*.env'", "git show HEAD -- ':(icase).ENV'", f"git show {blob.strip()}",
                    "git show HEAD:a.key", "git log -p -- '*.pem'", "git blame HEAD -- .ENV",
                    "git diff HEAD -- '*.key'", "git -C . show HEAD:.env"):  # fmt: skip
        assert rules.check(ShellAction(command)) == "ask", command
    for command in ("git show HEAD:README", "git log -p -- '*.py'", "git log --oneline", "git show --stat"):
        assert rules.check(ShellAction(command)) == "allow", command


_SYNTAX = st.sampled_from(["HEAD:{p}", ":{p}", ":0:{p}", ":2:{p}", "main~1:{p}", "-- {p}", "HEAD -- {p}",
                           "-- ':(icase){P}'", "-- ':(glob){p}'", "-- {P}"])  # fmt: skip
_DIRS = st.sampled_from(["", "sub/", "a/b/"])


@settings(max_examples=200, deadline=None)
@given(
    command=st.sampled_from(["show", "log -p", "diff", "blame", "log --patch", "grep x", "whatchanged -p"]),
    syntax=_SYNTAX, folder=_DIRS, secret=st.sampled_from(SECRET_NAMES),
)  # fmt: skip
def test_every_syntax_naming_a_secret_is_seen(command: str, syntax: str, folder: str, secret: str) -> None:
    path = folder + secret.replace("**", "id").replace("*", "x")
    words = ["git", *command.split(), *syntax.format(p=path, P=path.upper()).replace("'", "").split()]
    assert secret_reference(words) is not None, words


@settings(max_examples=100, deadline=None)
@given(secret=st.sampled_from(SECRET_NAMES), glob=st.sampled_from(["*", "*{s}", "**/{s}", "{s}*", "?{t}"]))
def test_a_glob_pathspec_that_matches_a_secret_is_seen(secret: str, glob: str) -> None:
    name = secret.replace("**", "id").replace("*", "x")
    spec = glob.format(s=name, t=name[1:])
    assert secret_reference(["git", "log", "-p", "--", spec]) is not None, spec


def test_a_signature_check_asks_and_the_kernel_turns_it_off(repo: Path) -> None:
    """``--show-signature`` runs ``gpg.program`` (any program the repository names): asked, however
    abbreviated; the kernel's git runs with ``log.showSignature=false`` whatever the repository says."""
    from freeact_tui.gitrun import KERNEL_SETTINGS, SAFE_SETTINGS

    rules = PermissionRules(None, working_dir=repo)
    rules.add("shell", "git log *", scope="session")
    for command in ("git log --show-signature -1", "git log --show-sig -1", "git blame --cont=/etc/passwd x",
                    "sort --out=x y", "git show --ext"):  # fmt: skip
        assert rules.check(ShellAction(command)) == "ask", command
    assert ("log.showSignature", "false") in KERNEL_SETTINGS
    assert ("log.showSignature", "false") in SAFE_SETTINGS and ("gpg.program", "false") in SAFE_SETTINGS


def test_a_search_of_the_folder_never_reads_a_secret_file_unasked(repo: Path) -> None:
    """``rg`` searches the folder recursively: a ``*.key``/``*.pem`` in the trees it reads asks
    (``searchreach``); a tree without one, or a search that skips it, runs unasked."""
    rules = PermissionRules(None, working_dir=repo)
    (repo / "src").mkdir()
    (repo / "src" / "x.py").write_text("x\n")
    for command in ("rg SECRET", "rg -n SECRET .", "rg -e SECRET", "rg --regexp=x -- .", "nice rg SECRET"):
        assert rules.check(ShellAction(command)) == "ask", command
    # (a word of the secret table as the pattern, ``rg SECRET src``, is read as a name that may be a file: asked)
    for command in ("rg TODO src", "rg -n -e x src", "rg x README"):
        assert rules.check(ShellAction(command)) == "allow", command
    (repo / "src" / "deploy.key").write_text("k\n")
    assert rules.check(ShellAction("rg TODO src")) == "ask"


@settings(max_examples=40, deadline=None)
@given(secret=st.sampled_from([s for s in SECRET_NAMES if not s.startswith(".")]), folder=_DIRS)
def test_any_secret_name_in_a_searched_tree_asks(
    tmp_path_factory: pytest.TempPathFactory, secret: str, folder: str
) -> None:
    work = tmp_path_factory.mktemp("w")
    target = work / "src" / folder / secret.replace("**", "id").replace("*", "x")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("s\n")
    assert PermissionRules(None, working_dir=work).check(ShellAction("rg -n x src")) == "ask", target
