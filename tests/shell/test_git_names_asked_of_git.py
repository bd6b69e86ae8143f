"""What a git argument names is git's to say, not a pattern's (#39, F1).

Class: a default-allowed ``git show``/``log``/``diff`` printed committed secrets through arguments whose
meaning a pattern decided: a 4–6 character object id, ``<blob>^{}``, a tag of a blob, a blob given to
``-s``/``--stat`` (which git ignores for blobs), and a pathspec ``cfg`` that reaches the ``cfg/.env`` of a
commit in which ``cfg`` was a directory (today ``cfg`` is a file). Mechanism: ``reach.gitnames`` asks
git (``gitrun.run_git``) what each word names in its store (a non-commit, or an ambiguous name, is asked)
and which secret-named paths of the store the pathspec reaches (a read that prints contents of one is
asked). The property runs every generated read the rules allow, for real, and checks no secret prints.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.reach.gitnames import reaches
from freeact_tui.toolcalls import ShellAction

SECRETS = ("sk-secretAAA", "hunterBBB")
GIT = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"]


def _git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The attacker's repository (w7): ``.env`` committed then deleted, ``cfg/.env`` in a commit where
    ``cfg`` was a directory (a file today), tags of a blob and a tree; the names of its objects."""
    root = tmp_path_factory.mktemp("w7")
    _git(root, "init", "-q")
    files = {"README": "hello\n", "a.py": "x = 1\n", ".env": f"OPENAI_API_KEY={SECRETS[0]}\n",
             "cfg/.env": f"DB_PASSWORD={SECRETS[1]}\n", "cfg/app.ini": "debug = 0\n"}  # fmt: skip
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git(root, "add", "-f", ".")
    _git(root, "commit", "-qm", "one")
    _git(root, "tag", "-a", "-m", "release", "v1")
    names = {"root": str(root), "c1": _git(root, "rev-parse", "HEAD"), "tree1": _git(root, "rev-parse", "HEAD^{tree}")}
    names["env"] = _git(root, "rev-parse", "HEAD:.env")
    names["cfgenv"] = _git(root, "rev-parse", "HEAD:cfg/.env")
    names["cfgtree"] = _git(root, "rev-parse", "HEAD:cfg")
    _git(root, "rm", "-rq", ".env", "cfg")
    (root / "cfg").write_text("plain = 1\n")
    (root / "a.py").write_text("x = 2\n")
    _git(root, "add", "cfg", "a.py")
    _git(root, "commit", "-qm", "two")
    names["c2"] = _git(root, "rev-parse", "HEAD")
    _git(root, "tag", "envtag", names["env"])  # a lightweight tag of a blob
    _git(root, "tag", "-a", "-m", "x", "cfgtag", names["cfgenv"])  # an annotated tag of a blob
    _git(root, "tag", "-a", "-m", "x", "treetag", names["tree1"])  # an annotated tag of a tree
    return names


def _allowed(repo: dict[str, str], line: str) -> bool:
    return PermissionRules(None, working_dir=Path(repo["root"])).check(ShellAction(line)) == "allow"


def _prints_secret(repo: dict[str, str], line: str) -> bool:
    done = subprocess.run(shlex.split(line), cwd=repo["root"], capture_output=True, timeout=30)
    return any(s.encode() in done.stdout + done.stderr for s in SECRETS)


@pytest.mark.parametrize(
    "line",
    ["git log --raw --all --format=%h", "git show -s {env4}", "git show --stat {cfgenv4}", "git log -p -- cfg",
     "git show {c1} -- cfg", "git diff {c1} {c2} -- cfg", "git show -s envtag", "git show --stat cfgtag",
     "git show {env6}^{{}}", "git show -s {env5} -- a.py", "git diff {tree1} {c2}", "git show --tags -s", "git log -p -- 'c*'", "git show HEAD~1 -- ./cfg", "git log -p -- sub/../cfg"],
)  # fmt: skip
def test_the_reported_reads_ask(repo: dict[str, str], line: str) -> None:
    spelled = line.format(**{f"{k}{n}": v[:n] for k, v in repo.items() for n in (4, 5, 6)}, c1=repo["c1"][:6],
                          c2=repo["c2"][:6], tree1=repo["tree1"][:6])  # fmt: skip
    if spelled.startswith("git log --raw"):
        assert _allowed(repo, spelled)  # names and ids only: still allowed
        return
    assert _prints_secret(repo, spelled), spelled  # the read really prints a secret…
    assert not _allowed(repo, spelled), spelled  # …so it is asked


@pytest.mark.parametrize("line", ["git show treetag", "git show --name-only {cfgtree5}", "git show -s {c1}^{{tree}}"])
def test_any_object_but_a_commit_is_asked(repo: dict[str, str], line: str) -> None:
    assert not _allowed(repo, line.format(cfgtree5=repo["cfgtree"][:5], c1=repo["c1"][:6]))


@pytest.mark.parametrize(
    "line",
    ["git show -s {c6}", "git show --stat v1", "git log -p -- a.py", "git show HEAD:README", "git log --oneline",
     "git diff {c6} -- a.py", "git show {c2_6} -- a.py README", "git log -p -1 -- README", "git show HEAD:cfg"],
)  # fmt: skip
def test_reads_of_commits_and_named_files_stay_allowed(repo: dict[str, str], line: str) -> None:
    spelled = line.format(c6=repo["c1"][:6], c2_6=repo["c2"][:6])
    assert _allowed(repo, spelled), spelled


_OBJECTS = st.sampled_from(["env", "cfgenv", "cfgtree", "tree1", "c1", "c2"])
_SUFFIX = st.sampled_from(["", "^0", "~0", "^{}", "^{object}", "^{blob}", "^{tree}", "^!", "^@", "~1", "^"])
_TAGS = st.sampled_from(["envtag", "cfgtag", "treetag", "v1", "envtag^{}", "cfgtag^{blob}", "v1^{tree}"])
_PATHS = st.sampled_from(["README", "a.py", "cfg", "cfg/app.ini", ""])


@st.composite
def revisions(draw: st.DrawFn, repo: dict[str, str]) -> str:
    kind = draw(st.sampled_from(["id", "tag", "path", "range", "none"]))
    if kind == "id":
        return repo[draw(_OBJECTS)][: draw(st.integers(4, 40))] + draw(_SUFFIX)
    if kind == "tag":
        return draw(_TAGS)
    if kind == "path":
        return f"HEAD~{draw(st.integers(0, 1))}:{draw(_PATHS)}"
    if kind == "range":
        return f"{repo['c1'][: draw(st.integers(4, 12))]}..{draw(st.sampled_from(['HEAD', '', 'v1']))}"
    return ""


_COMMANDS = st.sampled_from(["show", "log", "diff", "log -p", "whatchanged -p", "show -s", "show --stat",
                             "show --name-only", "diff --stat", "log --raw", "show --no-patch", "blame"])  # fmt: skip
_PATHSPECS = st.sampled_from(["", "-- cfg", "-- cfg/", "-- 'cf?'", "-- 'c*'", "-- .", "-- README", "-- a.py",
                              "-- CFG", "-- './cfg'", "-- 'cfg/../cfg'", "-- a.py cfg"])  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), command=_COMMANDS, pathspec=_PATHSPECS, revs=st.integers(0, 2))
def test_no_allowed_generated_read_prints_a_secret(
    repo: dict[str, str], data: st.DataObject, command: str, pathspec: str, revs: int
) -> None:
    words = [data.draw(revisions(repo)) for _ in range(revs)]
    line = " ".join(part for part in (f"git {command}", *words, pathspec) if part)
    event("allowed" if _allowed(repo, line) else "asked")
    if _allowed(repo, line):
        assert not _prints_secret(repo, line), line


@pytest.mark.parametrize(
    ("spec", "path", "prefix", "expected"),
    [("cfg", "cfg/.env", "", True), ("cfg/", "cfg/.env", "", True), ("cf?", "cfg/.env", "", True),
     ("c*", "cfg/.env", "", True), (".", "cfg/.env", "", True), ("", "x/.env", "sub/", False),
     ("..", "x/.env", "sub/", True), ("../x", "x/.env", "sub/", True), ("a.py", "cfg/.env", "", False),
     ("CFG", "cfg/.env", "", True), ("cfg2", "cfg/.env", "", False), ("*.py", "cfg/.env", "", False)],
)  # fmt: skip
def test_a_pathspec_reaches_at_least_what_git_reaches(spec: str, path: str, prefix: str, expected: bool) -> None:
    assert reaches(spec, path, prefix) is expected


def test_a_secret_kept_only_in_an_older_stash_entry_is_seen(tmp_path: Path) -> None:
    """``stash@{1}`` lives only in the stash's reflog: the store's paths include every reflog's commits."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "a").write_text("a\n")
    _git(tmp_path, "add", "a")
    _git(tmp_path, "commit", "-qm", "one")
    (tmp_path / ".env").write_text(f"K={SECRETS[0]}\n")
    _git(tmp_path, "stash", "push", "-u", "-q", "-m", "s1")
    (tmp_path / "b").write_text("b\n")
    _git(tmp_path, "stash", "push", "-u", "-q", "-m", "s2")
    repo = {"root": str(tmp_path)}
    for line in ("git show stash@{1}^3", "git show stash@{1}^3 -- .", "git diff stash@{1}^3~0 HEAD"):
        assert _prints_secret(repo, line), line
        assert not _allowed(repo, line), line
    assert _allowed(repo, "git log -p -- a")


def test_a_commit_no_ref_reaches_is_asked(tmp_path: Path) -> None:
    """A dangling commit (a copied repository's loose objects) may hold any file: the store's paths the
    pathspec is checked against are those refs and reflogs reach, so such a commit is asked."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "a").write_text("a\n")
    _git(tmp_path, "add", "a")
    _git(tmp_path, "commit", "-qm", "one")
    blob = subprocess.run([*GIT, "hash-object", "-w", "--stdin"], cwd=tmp_path, input=f"K={SECRETS[1]}\n",
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    tree = subprocess.run([*GIT, "mktree"], cwd=tmp_path, input=f"100644 blob {blob}\t.env\n",
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    stray = _git(tmp_path, "commit-tree", tree, "-m", "stray")
    repo = {"root": str(tmp_path)}
    for line in (f"git show {stray[:8]}", f"git diff {stray[:6]} HEAD", f"git log -p {stray[:7]}"):
        assert _prints_secret(repo, line), line
        assert not _allowed(repo, line), line
    assert _allowed(repo, "git show -s HEAD") and _allowed(repo, "git log -p -- a")
