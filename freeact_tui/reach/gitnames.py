"""What a git read's arguments name, as git reads them (#39, F1).

A pattern cannot tell what a git argument names: ``a0dd`` (a 4-character object id), ``v1`` (a tag of a
blob), ``HEAD~1:cfg`` (a tree), ``X^0`` and ``X~0`` name objects, and a pathspec ``cfg`` reaches the
``cfg/.env`` of a commit in which ``cfg`` was a directory, though today ``cfg`` is a file. So for a
content-printing git read the rules would allow (``gitreads.git_read``), git itself is asked, through
the app's one way to run git (``gitrun.run_git``: safe config, time bound):

- what each word before ``--`` names (``git cat-file --batch-check``; a tag is peeled): a commit is a
  revision whose files the pathspec bounds; a blob or a tree named by ``<rev>:<path>`` prints that path
  (its name is judged by ``gitreads.secret_reference``); any other blob, tree, or a name git finds
  ambiguous may print anything, and is asked. A word git cannot resolve is no object (a path, an option
  value, a grep pattern) and bounds nothing;
- which secret-named paths the repository holds anywhere in its store (every ref's history, the
  index: ``gitrun.repo_paths_matching``) the pathspec reaches, read as git reads a pathspec (a directory
  reaches what is below it, a glob's ``*`` crosses ``/``, relative to the folder it runs in); a read
  that prints contents and reaches one is asked.

Anything git cannot answer in its time bound is asked.
"""

from __future__ import annotations

import fnmatch
import posixpath
from pathlib import Path

from freeact_tui.filenames import fold_path
from freeact_tui.gitrun import repo_paths_matching, run_git
from freeact_tui.shell.gitreads import BEYOND_TRACKED_NOTE, GitRead, git_read, is_secret_name

# Commands that print a tree's names, not its files' contents, when a word names one.
_TREE_AS_NAMES = frozenset({"show"})
# Commands that print every object a ref-adding option (``--all``, ``--tags``) names, blobs included.
_SHOWS_EVERY_OBJECT = frozenset({"show", "cat-file", "archive", "diff", "diff-tree", "diff-index", "grep"})


def _where(read: GitRead, where: Path) -> Path | None:
    """The folder the git command works in: ``where``, moved by each ``-C``; ``None`` when another git
    dir or work tree is named (``--git-dir``, ``--work-tree``)."""
    options = list(read.global_options)
    for k, option in enumerate(options):
        name = option.split("=", 1)[0]
        if name in ("--git-dir", "--work-tree"):
            return None
        if option == "-C" and k + 1 < len(options):
            where = where / options[k + 1]
    return where


def _object_types(names: list[str], where: Path) -> dict[str, tuple[str, str]] | None:
    """The object each name resolves to, tags peeled, as ``(type, id)`` (``commit``, ``tree``, ``blob``;
    ``missing`` or ``ambiguous`` with no id); ``None`` when git cannot tell."""
    if any("\n" in n or "\r" in n for n in names):
        return None
    asked = [q for n in names for q in (n, f"{n}^{{}}")]
    done = run_git(["cat-file", "--batch-check"], where, stdin="".join(f"{q}\n" for q in asked).encode())
    if done is None or done.returncode != 0:
        return None
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    if len(lines) != len(asked):
        return None
    kinds = [_kind(line) for line in lines]
    types: dict[str, tuple[str, str]] = {}
    for k, name in enumerate(names):
        own, peeled = kinds[2 * k], kinds[2 * k + 1]
        types[name] = peeled if own[0] == "tag" else own
    return types


def _kind(line: str) -> tuple[str, str]:
    """The type and id in one ``--batch-check`` line (``<oid> <type> <size>``, or ``<name> missing`` /
    ``ambiguous``: a name may hold spaces)."""
    last = line.rsplit(" ", 1)[-1]
    if last in ("missing", "ambiguous"):
        return last, ""
    fields = line.split(" ")
    return (fields[1], fields[0]) if len(fields) == 3 else ("unknown", "")


def _unreachable(commits: set[str], where: Path) -> str | None:
    """A commit of ``commits`` no ref or reflog reaches (its files are not among the store's paths the
    pathspec is checked against: a dangling commit of a copied repository may hold any file); ``"?"``
    when git cannot tell."""
    done = run_git(["rev-list", "--all", "--reflog"], where, timeout=10)
    if done is None or done.returncode != 0:
        return "?"
    reachable = set(done.stdout.decode("ascii", "replace").split())
    return next((c for c in sorted(commits) if c not in reachable), None)


def _object_reason(read: GitRead, word: str, kind: str) -> str | None:
    """Why the object ``word`` names may print what no rule sees, or ``None``."""
    if kind in ("commit", "missing"):
        return None  # a revision (its files bounded by the pathspec), or no object at all
    if kind == "ambiguous":
        return f"{word} (git finds it ambiguous: it may name any object)"
    if ":" in word and (kind == "blob" or read.command in _TREE_AS_NAMES):
        return None  # ``<rev>:<path>``: that path is printed (``secret_reference`` judges its name)
    return f"{word} (names a {kind} in git's store: it may be any file's contents)"


def _prefix(where: Path) -> str | None:
    """Where ``where`` is in its repository's work tree (``""`` at the top, ``sub/`` below); ``"-"`` outside
    a repository (git prints nothing there); ``None`` when git cannot tell."""
    done = run_git(["rev-parse", "--show-prefix"], where)
    if done is None:
        return None
    if done.returncode != 0:
        return "-" if b"not a git repository" in done.stderr else None
    return done.stdout.decode("utf-8", "replace").strip()


def reaches(pathspec: str, path: str, prefix: str) -> bool:
    """A pathspec word (relative to the folder at ``prefix`` of the repository) reaches ``path`` (relative
    to the top) as git reads it: the path, or what is below it, or what a glob matches (``*`` crosses
    ``/``); compared as written and as a file system may compare names (``filenames.fold``)."""
    spec = posixpath.normpath(posixpath.join(prefix, pathspec)) if pathspec else prefix.rstrip("/") or "."
    if spec in (".", "") or spec.startswith("../"):
        return True
    for a, b in ((spec, path), (fold_path(spec), fold_path(path))):
        parts = b.split("/")
        leading = ["/".join(parts[: k + 1]) for k in range(len(parts))]
        if any(c in a for c in "*?["):
            if any(fnmatch.fnmatchcase(lead, a) for lead in leading):
                return True
        elif b == a or b.startswith(a.rstrip("/") + "/"):
            return True
    return False


def _pathspec_reason(read: GitRead, where: Path, prefix: str) -> str | None:
    """Why the read may print a secret-named file its pathspec reaches, or ``None``."""
    if any(word.startswith(":") for word in read.pathspec):
        return f"git {read.command} -- {next(w for w in read.pathspec if w.startswith(':'))} (pathspec magic)"
    secrets = repo_paths_matching(where, is_secret_name)
    if secrets is None:
        return f"git {read.command} (git cannot tell which files it prints)"
    specs = list(read.pathspec) or [""]
    reached = [s for s in secrets if any(reaches(spec, s, prefix) for spec in specs)]
    if not reached:
        return None
    what = " ".join(read.pathspec) or "no pathspec"
    return f"git {read.command} -- {what} (it prints files of git's store, {reached[0]} among them)"


def unseen_git_read(words: list[str], where: Path) -> str | None:
    """Why the git command ``words`` (``git`` first), run in ``where``, may print a secret that no word
    of it names, as git reads it; ``None``: it prints none (or is no content-printing read)."""
    read = git_read(words)
    if read is None:
        return None
    if read.beyond is not None:
        return f"git {read.command} {read.beyond} ({BEYOND_TRACKED_NOTE})"
    if read.more_revisions is not None and read.command in _SHOWS_EVERY_OBJECT:
        return f"git {read.command} {read.more_revisions} (it prints objects no word names)"
    folder = _where(read, where)
    if folder is None:
        return f"git {' '.join(read.global_options)} (another repository)"
    prefix = _prefix(folder)
    if prefix == "-":
        return None  # not a repository: git prints nothing of a store
    if prefix is None:
        return f"git {read.command} (git cannot tell what it reads here)"
    objects = sorted({part for parts in read.revisions for part in parts})
    types = _object_types(objects, folder) if objects else {}
    if types is None:
        return f"git {read.command} (git cannot tell what {' '.join(read.names)} names)"
    for word in objects:
        if (reason := _object_reason(read, word, types[word][0])) is not None:
            return reason
    if not read.contents:
        return None
    commits = {oid for kind, oid in types.values() if kind == "commit"}
    if commits and (stray := _unreachable(commits, folder)) is not None:
        return f"git {read.command} {stray} (a commit no ref reaches: git cannot tell which files it holds)"
    if read.command == "show" and read.names and not read.pathspec and all(":" in n for n in read.names):
        return None  # only blobs or trees by ``<rev>:<path>``: judged above and by their names
    return _pathspec_reason(read, folder, prefix)


__all__ = ["reaches", "unseen_git_read"]
