"""No option of a default-allowed git read prints a committed secret unasked (issue #39, F1).

The class: git options that widen what is printed beyond the revisions and pathspec the checker judged
(``git log -p --full-diff -- f.txt`` printed the whole commit, ``.env`` with it; ``--follow`` followed a
rename from ``.env``). The mechanism: ``gitreads.GIT_READ_OPTIONS``, an allow-list of options per
content-printing subcommand the built-in rules allow; any other option asks.

A real repository holds committed secrets (``.env``, ``cfg/prod.env``, removed from the tree since; a
``.env`` renamed to ``settings.example`` and redacted). The corpus is every option git's own manual pages
document for ``log``, ``show``, ``diff`` and ``blame`` (the installed git's), each put into a read of an
ordinary file: whatever the default rules allow unasked is RUN, and must print no secret. The attacker's
commands must ask, and do print a secret when run (so the corpus would see one).
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
from pathlib import Path

import pytest

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.shell.gitreads import GIT_READ_OPTIONS
from freeact_tui.toolcalls import ShellAction

SECRETS = ("DOTENV_SECRET", "COMMITTED_SECRET", "RENAMED_SECRET_VALUE")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # commits, newest first: two, redact, rename (.env -> settings.example), env again, rm, one (HEAD~5)
    repo = tmp_path_factory.mktemp("gitsecrets") / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", ".")
    _git(repo, "config", "user.email", "a@example.com")
    _git(repo, "config", "user.name", "a")
    (repo / ".env").write_text("ENVSECRET=DOTENV_SECRET\n")
    (repo / "cfg").mkdir()
    (repo / "cfg" / "prod.env").write_text("COMMITTED_SECRET\n")
    (repo / "f.txt").write_text("hi\n")
    _git(repo, "add", "-f", ".")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "rm", "-q", "--cached", ".env", "cfg/prod.env")
    _git(repo, "commit", "-qm", "rm")
    (repo / ".env").unlink()
    (repo / "cfg" / "prod.env").unlink()
    lines = [f"LINE{n}=plain" for n in range(40)]
    (repo / ".env").write_text("\n".join([*lines[:20], "API_KEY=RENAMED_SECRET_VALUE", *lines[20:]]) + "\n")
    _git(repo, "add", "-f", ".env")
    _git(repo, "commit", "-qm", "env again")
    _git(repo, "mv", ".env", "settings.example")
    _git(repo, "commit", "-qm", "rename")
    (repo / "settings.example").write_text("\n".join(lines) + "\n")  # redacted
    _git(repo, "commit", "-qam", "redact")
    (repo / "f.txt").write_text("hi\nthere\n")
    _git(repo, "commit", "-qam", "two")
    return repo


def _run(repo: Path, command: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(repo.parent), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C",
           "GIT_PAGER": "cat"}  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=10,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return done.stdout + done.stderr


def _check(repo: Path, command: str) -> str:
    return PermissionRules(None, working_dir=repo).check(ShellAction(command, full_command=command))


REPORTED = (
    "git log -p --full-diff -- f.txt", "git show HEAD~5 --full-diff -- f.txt", "git log --patch --full-diff -- f.txt",
    "git log -p --full-diff --all -- f.txt", "git log -p --full-diff -- '*.txt'",
    "git log -p --follow -- settings.example",
)  # fmt: skip


@pytest.mark.parametrize("command", REPORTED)
def test_each_reported_read_asks_though_it_prints_a_secret(repo: Path, command: str) -> None:
    out = _run(repo, command)
    assert any(secret in out for secret in SECRETS), out  # run, it does print one
    assert _check(repo, command) == "ask"


def test_find_object_asks(repo: Path) -> None:
    blob = _git(repo, "rev-parse", "HEAD~5:.env").strip()
    command = f"git log --find-object={blob} --full-diff -p -- f.txt"
    assert any(secret in _run(repo, command) for secret in SECRETS)
    assert _check(repo, command) == "ask"


def _documented(page: str) -> list[str]:
    """The options the installed git's manual page ``page`` documents, each as a word (or two) to type:
    ``--opt=1`` for a value, ``-n 1``; ``--[no-]x`` as both spellings."""
    path = Path(f"/usr/share/man/man1/{page}.1.gz")
    if not path.exists():
        pytest.skip(f"no manual page {path}")
    found: list[str] = []
    for line in gzip.decompress(path.read_bytes()).decode("utf-8", "replace").splitlines():
        if not line.startswith("\\-"):
            continue
        for spec in line.replace("\\", "").split(", "):
            match = re.match(r"(--?(?:\[no-\])?[A-Za-z0-9][A-Za-z0-9-]*)(\[?=|\s<|<)?", spec)
            if match is None:
                continue
            names, value = match.group(1), match.group(2) or ""
            spellings = [names.replace("[no-]", ""), names.replace("[no-]", "no-")] if "[no-]" in names else [names]
            for name in spellings:
                if value == "=":
                    found.append(f"{name}=1")
                elif value.strip() == "<" and value.startswith(" "):
                    found.append(f"{name} 1")
                elif value == "<":
                    found.append(f"{name}1")
                else:
                    found.append(name)
    return sorted(set(found))


# What a read of ``f.txt`` must never print (secrets of other files), and what a read of the renamed
# ``settings.example`` must never print: ``.env`` itself drawn in (its own lines were committed under the
# new name too, so they are that file's, judged as such).
_OTHER_FILES = {"f.txt": SECRETS, "settings.example": ("a/.env", "rename from .env", "copy from .env")}


def _corpus() -> list[tuple[str, str]]:
    """(pathspec, command) for each documented option of each read."""
    reads = {
        "git-log": ("git log -p {} -- f.txt", "git log -p {} -- settings.example", "git log {} -- f.txt"),
        "git-show": ("git show {} HEAD~5 -- f.txt", "git show {} HEAD~2 -- settings.example"),
        "git-diff": ("git diff HEAD~5 {} -- f.txt", "git diff HEAD~3 HEAD~2 {} -- settings.example"),
        "git-blame": ("git blame {} f.txt",),
    }
    return [
        (form.rsplit(" ", 1)[-1], form.format(option))
        for page, forms in reads.items()
        for form in forms
        for option in _documented(page)
    ]


def test_the_corpus_is_gits_own_and_covers_the_widening_options() -> None:
    options = {c.split()[3] for _, c in _corpus() if c.startswith("git log -p")}
    assert len(_corpus()) > 400
    assert {"--full-diff", "--follow", "--pickaxe-all", "--cc", "--first-parent", "--all", "-M", "-C"} <= options


def test_no_documented_option_prints_a_secret_unasked(repo: Path) -> None:
    allowed = 0
    failures: list[str] = []
    for pathspec, command in _corpus():
        if _check(repo, command) != "allow":
            continue
        allowed += 1
        out = _run(repo, command)
        if any(marker in out for marker in _OTHER_FILES[pathspec]):
            failures.append(command)
    assert failures == [], f"allowed unasked and printed another file: {failures}"
    assert allowed > 100  # the corpus reaches allowed reads: the test runs what the rules let through


def _mentioned(page: str) -> set[str]:
    """Every long option the manual page names anywhere (a heading, a synopsis, a sentence)."""
    text = gzip.decompress(Path(f"/usr/share/man/man1/{page}.1.gz").read_bytes()).decode("utf-8", "replace")
    text = re.sub(r"\\f[BIRP]", "", text).replace("\\-", "-")
    found = set(re.findall(r"--[a-z][a-z0-9-]*[a-z0-9]", text))
    for name in re.findall(r"--\[no-\]([a-z][a-z0-9-]*[a-z0-9])", text):
        found |= {f"--{name}", f"--no-{name}"}
    return found


def test_every_listed_option_is_one_git_documents() -> None:
    """The allow-list names real options only (a typo would allow nothing, or hide what was meant)."""
    documented: set[str] = set()
    for page in ("git-log", "git-show", "git-diff", "git-blame"):
        documented |= _mentioned(page)
    listed = {o for t in GIT_READ_OPTIONS.values() for o in t.long | t.long_valued | t.listing_only}
    assert sorted(listed - documented) == []
