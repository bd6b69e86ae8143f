"""A corpus of hostile repositories against every git the app runs or lets run unasked (issue 39).

Each repository's config (or a file it includes, its hooks, its ``.gitattributes``) names a program
that writes a marker file. The app's own git (the ``@`` picker's listing, the checkpoints' shadow
repository) must never write one; every git command the rules allow by default must be asked, not
allowed, in each of them (and allowed in a plain repository). Real git throughout.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui import gitrun
from freeact_tui.checkpoints.engine import CheckpointStore
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import ShellAction
from freeact_tui.tui.file_index import list_files

HOOKS = ("post-index-change", "post-checkout", "pre-commit", "post-commit", "reference-transaction",
         "fsmonitor-watchman", "pre-auto-gc", "post-rewrite")  # fmt: skip
# Every git command the built-in rules allow (rulematch._DEFAULT_SHELL_ALLOW), with the flags that make
# git run a repository's programs where it has any (-p: textconv, diff: textconv and filters).
DEFAULT_GIT = (
    "git status", "git status --short", "git log", "git log -p", "git log --stat", "git diff",
    "git diff HEAD", "git show", "git show HEAD:f.txt", "git blame f.txt", "git ls-files",
    "git ls-files --others", "git rev-parse HEAD", "git describe --always", "git shortlog HEAD",
    "git tag", "git stash list", "git branch", "git branch -a",
)  # fmt: skip


@dataclass(frozen=True)
class Hostile:
    """One way a repository makes git run a program: config lines (``key``, ``value``) and a set-up."""

    name: str
    config: tuple[tuple[str, str], ...] = ()
    setup: Callable[[Path, str], None] | None = None


def _attributes(line: str) -> Callable[[Path, str], None]:
    def setup(repo: Path, mark: str) -> None:
        (repo / ".gitattributes").write_text(line + "\n")

    return setup


def _included(kind: str) -> Callable[[Path, str], None]:
    def setup(repo: Path, mark: str) -> None:
        included = repo.parent / f"{repo.name}-included.cfg"
        included.write_text(
            f'[core]\n\tfsmonitor = "{mark} {kind}-fsmonitor"\n[diff "x"]\n\ttextconv = {mark} {kind}\n'
        )
        (repo / ".gitattributes").write_text("* diff=x\n")
        key = "include.path" if kind == "include" else f"includeIf.gitdir:{repo}/.git.path"
        _git(repo, "config", key, str(included))

    return setup


def _hooks_in_git_dir(repo: Path, mark: str) -> None:
    for hook in HOOKS:
        path = repo / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\n{mark} hook-{hook}\n")
        path.chmod(0o755)


def _signed_head(repo: Path, mark: str) -> None:
    """HEAD becomes a commit with a (fake) signature, so that ``log.showSignature`` runs gpg.program."""
    body = _git(repo, "cat-file", "commit", "HEAD")
    head, _, message = body.partition("\n\n")
    sig = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----"
    signed = f"{head}\n{sig}\n\n{message}"
    commit = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=repo, input=signed.encode(),
        capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    _git(repo, "update-ref", "HEAD", commit)


def corpus(mark: str, hooks_dir: str) -> list[Hostile]:
    """Every program-running way we know of, each alone (``mark`` is the marker command)."""
    return [
        Hostile("fsmonitor", (("core.fsmonitor", f"{mark} fsmonitor"),)),
        Hostile("textconv", (("diff.x.textconv", f"{mark} textconv"),), _attributes("* diff=x")),
        Hostile("external-diff", (("diff.external", f"{mark} external"),)),
        Hostile("diff-command", (("diff.x.command", f"{mark} diff-command"),), _attributes("* diff=x")),
        Hostile(
            "pager",
            (
                ("core.pager", f"{mark} pager"),
                ("pager.show", f"{mark} pager-show"),
                ("pager.log", f"{mark} pager-log"),
            ),
        ),  # fmt: skip
        Hostile(
            "signature",
            (
                ("log.showSignature", "true"),
                ("gpg.program", f"{mark} gpg"),
                ("gpg.openpgp.program", f"{mark} gpg-openpgp"),
            ),
            _signed_head,
        ),  # fmt: skip
        Hostile("ssh", (("core.sshCommand", f"{mark} ssh"),)),
        Hostile("hooks-path", (("core.hooksPath", hooks_dir),)),
        Hostile("hooks", (), _hooks_in_git_dir),
        Hostile("alias", (("alias.st", f"!{mark} alias"), ("alias.status", f"!{mark} alias-status"))),
        Hostile(
            "filter",
            (
                ("filter.evil.clean", f"{mark} clean"),
                ("filter.evil.smudge", f"{mark} smudge"),
                ("filter.evil.required", "true"),
            ),
            _attributes("* filter=evil"),
        ),  # fmt: skip
        Hostile(
            "filter-process", (("filter.evil.process", f"{mark} process"),), _attributes("* filter=evil")
        ),
        Hostile("editor", (("core.editor", f"{mark} editor"), ("sequence.editor", f"{mark} sequence"))),
        Hostile("credential", (("credential.helper", f"!{mark} credential"),)),
        Hostile("pack-hook", (("uploadpack.packObjectsHook", f"{mark} packhook"),)),
        Hostile("include", (), _included("include")),
        Hostile("include-if", (), _included("include-if")),
        Hostile("merge-driver", (("merge.evil.driver", f"{mark} merge"),), _attributes("* merge=evil")),
        Hostile("unknown-key", (("frobnicate.runner", f"{mark} unknown"),)),
    ]


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # not hostile_env's
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_OPTIONAL_LOCKS="0")
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)
    return done.stdout.decode()


@pytest.fixture
def markers(tmp_path: Path) -> tuple[Path, str, str]:
    """The marker directory, the marker command (``mark NAME`` writes ``markers/NAME``) and a hooks dir."""
    out = tmp_path / "markers"
    out.mkdir()
    mark = tmp_path / "mark"
    mark.write_text(
        f'#!/bin/sh\ntouch "{out}/$(printf %s "$1" | tr -c "a-z0-9-" _)"\ncat >/dev/null 2>&1 || true\n'
    )
    mark.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in HOOKS:
        (hooks / hook).write_text(f"#!/bin/sh\n{mark} hooks-path-{hook}\n")
        (hooks / hook).chmod(0o755)
    return out, str(mark), str(hooks)


def make_repo(root: Path, hostile: Hostile | None, mark: str) -> Path:
    repo = root / ("repo-" + (hostile.name if hostile else "plain"))
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "f.txt").write_text("one\n")
    _git(repo, "add", "f.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (repo / "f.txt").write_text("two\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    (repo / "f.txt").write_text("three\n")  # a change in the work tree: status and diff read it
    if hostile is not None:
        if hostile.setup is not None:
            hostile.setup(repo, mark)
        for key, value in hostile.config:
            _git(repo, "config", key, value)
    return repo


@pytest.fixture
def hostile_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, markers: tuple[Path, str, str]) -> None:
    """The user's own environment names programs too: the app's git must drop it."""
    _, mark, _ = markers
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{mark} env-fsmonitor'")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"{mark} env-external")
    monkeypatch.setenv("GIT_PAGER", f"{mark} env-pager")


def test_the_corpus_covers_every_program_running_setting_the_runner_overrides() -> None:
    keys = {key.lower() for h in corpus("m", "h") for key, _ in h.config}
    overridable = {key.lower() for key, _ in gitrun.SAFE_SETTINGS if key.lower() not in keys}
    # Settings the runner switches off but the corpus cannot make run with a local git command.
    assert overridable <= {"core.gitproxy", "core.askpass", "gpg.x509.program", "gpg.ssh.program",
                           "protocol.allow", "protocol.file.allow", "submodule.recurse",
                           "core.alternaterefscommand"}  # fmt: skip


@pytest.mark.usefixtures("hostile_env")
async def test_the_apps_own_git_runs_no_program_of_any_hostile_repository(
    tmp_path: Path, markers: tuple[Path, str, str]
) -> None:
    out, mark, hooks = markers
    for hostile in corpus(mark, hooks):
        repo = make_repo(tmp_path, hostile, mark)
        assert "f.txt" in list_files(repo, use_git=True), hostile.name  # git listed it
        store = CheckpointStore(repo, store_dir=tmp_path / "store")
        first = await store.checkpoint("first")
        (repo / "f.txt").write_text("four\n")
        (repo / "g.txt").write_text("new\n")
        await store.checkpoint("second")
        assert first is not None
        assert await store.diff(first)
        await store.restore(first)
        assert (repo / "f.txt").read_text() == "three\n"
        assert sorted(p.name for p in out.iterdir()) == [], hostile.name


def test_an_untrusted_folder_is_walked_without_git(
    tmp_path: Path, markers: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, mark, hooks = markers
    repo = make_repo(tmp_path, corpus(mark, hooks)[0], mark)
    bogus = tmp_path / "bin"
    bogus.mkdir()
    (bogus / "git").write_text(f"#!/bin/sh\n{mark} git-ran\nexit 1\n")
    (bogus / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bogus}{os.pathsep}{os.environ['PATH']}")
    assert list_files(repo, use_git=False) == ["f.txt"]
    assert list(out.iterdir()) == []
    assert list_files(repo, use_git=True) == ["f.txt"]  # the walk, as git would not start
    assert [p.name for p in out.iterdir()] == ["git-ran"]  # (the stand-in git proves it was asked)


@pytest.mark.parametrize("command", DEFAULT_GIT)
def test_default_allowed_git_asks_in_every_hostile_repository_and_not_in_a_plain_one(
    tmp_path: Path, markers: tuple[Path, str, str], command: str
) -> None:
    out, mark, hooks = markers
    plain = make_repo(tmp_path, None, mark)
    assert PermissionRules(working_dir=plain).check(ShellAction(command)) == "allow"
    for hostile in corpus(mark, hooks):
        repo = make_repo(tmp_path, hostile, mark)
        assert PermissionRules(working_dir=repo).check(ShellAction(command)) == "ask", hostile.name
    assert list(out.iterdir()) == []  # judging a repository runs none of its programs


def test_an_ordinary_clone_asks_nothing(tmp_path: Path, markers: tuple[Path, str, str]) -> None:
    """A repository cloned as usual (remote, branch tracking, submodule-free) holds only inert keys."""
    _, mark, _ = markers
    origin = make_repo(tmp_path, None, mark)
    _git(tmp_path, "clone", "-q", str(origin), "copy")
    copy = tmp_path / "copy"
    _git(copy, "config", "pull.rebase", "true")
    _git(copy, "config", "color.diff.meta", "blue")
    assert gitrun.repo_program_keys(copy) == []
    assert PermissionRules(working_dir=copy).check(ShellAction("git log -p")) == "allow"


def test_a_folder_git_cannot_read_asks(tmp_path: Path) -> None:
    repo = tmp_path / "broken"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".git" / "config").write_text("[core\n\tbroken = \n")
    assert gitrun.repo_program_keys(repo) is None
    assert PermissionRules(working_dir=repo).check(ShellAction("git status")) == "ask"


def test_outside_a_repository_git_is_judged_by_the_rules_alone(tmp_path: Path) -> None:
    assert gitrun.repo_program_keys(tmp_path) == []


# Section and subsection names git accepts: letters, digits and dashes; subsections anything but newlines.
_SECTION = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
_SUBSECTION = st.text(st.characters(codec="ascii", exclude_characters='\n\0"\\'), min_size=1, max_size=12)
_NAME = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
PROGRAM_KEYS = ("diff.{}.textconv", "diff.{}.command", "filter.{}.clean", "filter.{}.smudge",
                "filter.{}.process", "merge.{}.driver", "alias.{}", "credential.{}.helper",
                "includeif.{}.path", "guitool.{}.cmd", "difftool.{}.cmd", "mergetool.{}.cmd")  # fmt: skip


@given(template=st.sampled_from(PROGRAM_KEYS), sub=_SUBSECTION)
def test_no_program_key_is_inert_whatever_its_subsection(template: str, sub: str) -> None:
    assert not gitrun.is_inert_key(template.format(sub))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(section=_SECTION, sub=st.one_of(st.none(), _SUBSECTION), name=_NAME)
def test_every_key_of_a_repository_not_known_inert_is_reported(
    tmp_path_factory: pytest.TempPathFactory, section: str, sub: str | None, name: str
) -> None:
    repo = tmp_path_factory.mktemp("gen")
    _git(repo, "init", "-q")
    key = f"{section}.{sub}.{name}" if sub is not None else f"{section}.{name}"
    _git(repo, "config", key, "value")
    found = gitrun.repo_program_keys(repo)
    assert found is not None
    assert (not gitrun.is_inert_key(key)) == any(k.lower() == key.lower() for k in found)
    assert all(not gitrun.is_inert_key(k) for k in found)
