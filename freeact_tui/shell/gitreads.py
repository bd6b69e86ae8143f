"""Secrets git reads from its object store by names that are not path words (#39, round 2).

``git show :0:.env`` (the index), ``git show HEAD:.env`` (a revision's tree), ``git log -p -- '*.env'``
(a glob pathspec), ``git show HEAD -- ':(icase).ENV'`` (pathspec magic) and ``git show <blob id>`` print a
file's contents though no argument is the path the secret rules look for. ``secret_reference`` reads
each argument of a git command that prints contents the way git does and says which one may name a
secret: a path part matching a secret name, a glob some secret name matches, pathspec magic (read only
by git), or a bare object id (any blob). The secret names are the built-in table ``SECRET_NAMES``, the
one the ask rules are made of (``rulematch.DEFAULT_RULES``).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

SECRET_NAMES = (
    ".env", ".env.*", ".ssh/**", ".aws/**", ".netrc", ".pgpass", ".git-credentials", "*.pem", "*.key",
    ".npmrc", ".pypirc", ".docker/config.json", ".kube/config", ".vault-token",
    ".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".python_history", ".node_repl_history",
    ".psql_history", ".mysql_history", ".sqlite_history", ".lesshst", ".viminfo", "id_rsa*", "id_ed25519*",
    "id_ecdsa*", "id_dsa*",
    # git's own credential stores (a remote URL carries ``user:token@``): the repository's config files,
    # the git folders of its submodules and linked worktrees (each holds their config), and the legacy
    # remote files; then cloud and package registries' logins
    ".git/config", ".git/config.worktree", ".git/modules/**", ".git/worktrees/**", ".git/remotes/**",
    ".git/branches/**", ".boto", ".s3cfg", "application_default_credentials.json", ".config/gcloud/**",
    ".azure/accessTokens.json", ".azure/msal_token_cache*", ".cargo/credentials*", ".gem/credentials",
    ".terraform.d/credentials*",
    # git's other copies of a repository's config: a submodule's (``.git/modules/<name>/config``, nested too),
    # a bare or mirror clone's (``x.git/config``), a worktree's; git's credential store under ``~/.config``
    ".git/modules/**", "*.git/config", "*.git/modules/**", "config.worktree", "git/credentials",
    # the environment files tools load (direnv, ``prod.env``), and tools' stored logins and keystores
    ".envrc", "*.env", "gh/hosts.yml", ".yarnrc.yml", "pip.conf", ".m2/settings.xml", ".gradle/gradle.properties",
    ".composer/auth.json", "rclone.conf", ".htpasswd", ".dockercfg", "kubeconfig", ".terraformrc", "*.p12", "*.pfx",
    "*.jks", "*.keystore",
)  # fmt: skip
"""Files that hold secrets wherever they are (globs under any folder): asked, whatever allows the call, and
never read as work inside the folder (``effects.reader``)."""
# git commands that print file contents, and the global options that take a value.
_PRINTS_CONTENTS = frozenset({"show", "log", "diff", "blame", "annotate", "grep", "cat-file", "archive",
                              "whatchanged", "format-patch", "difftool", "diff-tree", "diff-index"})  # fmt: skip
_BY_OBJECT_ID = frozenset({"show", "cat-file", "archive", "diff", "diff-tree"})
_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--config-env", "--git-dir", "--work-tree", "--namespace"})
_OBJECT_ID = re.compile(r"^[0-9a-fA-F]{7,64}$")
_STAGE = re.compile(r"^:[0-3]?:?")
_EXAMPLES = tuple(g.replace("**", "x").replace("*", "x") for g in SECRET_NAMES)
_LOWERED = tuple(g.lower() for g in SECRET_NAMES)


def _lowered_secret(path: str) -> bool:
    """A lowered path matching a lowered row (``.azure/accessTokens.json`` has capitals)."""
    parts = path.strip("/").split("/")
    return any(fnmatch.fnmatchcase("/".join(parts[k:]), g) for g in _LOWERED for k in range(len(parts)))


def is_secret_name(path: str, *, any_case: bool = False) -> bool:
    """A path (or a glob) that names, or may match, a file of the secret table (``any_case``: in any case,
    as git's ``icase`` pathspecs and case-insensitive file systems match)."""
    if any_case:
        return is_secret_name(path) or is_secret_name(path.lower()) or _lowered_secret(path.lower())
    if any(c in path for c in "*?["):
        # Some secret name matches the glob, or the glob read with its wildcards empty names a secret.
        if any(fnmatch.fnmatchcase(e, path) or fnmatch.fnmatchcase("d/" + e, path) for e in _EXAMPLES):
            return True
        return any(is_secret_name(re.sub(r"\[[^]]*\]|[*?]", fill, path)) for fill in ("", "x", "."))
    parts = path.strip("/").split("/")
    return any(
        fnmatch.fnmatchcase("/".join(parts[k:]), glob) or fnmatch.fnmatchcase("/".join(parts[k : k + 2]), glob)
        for glob in SECRET_NAMES
        for k in range(len(parts))
    )


def secret_reference(words: list[str]) -> str | None:
    """The argument of a git command (``words``, ``git`` first) by which it may print a secret, if any."""
    args, k = words[1:], 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _GIT_VALUE_OPTIONS else 1
    if k >= len(args) or args[k] not in _PRINTS_CONTENTS:
        return None
    command, rest = args[k], args[k + 1 :]
    for word in rest:
        if word.startswith("-") or not word:
            continue
        if word.startswith(":(") or word.startswith(":/"):
            return f"{word} (pathspec magic git resolves itself)"
        if command in _BY_OBJECT_ID and _OBJECT_ID.match(word):
            return f"{word} (an object id may be any file's contents)"
        path = _STAGE.sub("", word) if word.startswith(":") else word.split(":", 1)[-1]
        if path and is_secret_name(path, any_case=True):
            return f"{word} (names a secret file in git's store)"
    return None


# Flags after which ``show``/``diff`` print no file contents (names, counts, the commit only).
_NO_CONTENTS = ("--stat", "--name-only", "--name-status", "--numstat", "--shortstat", "--dirstat", "--summary",
                "--no-patch", "-s", "--raw", "--quiet", "--exit-code")  # fmt: skip
# Flags by which ``log``/``whatchanged`` print patches (file contents); ``-L`` prints the range it names.
_PATCH = ("-p", "-u", "--patch", "-U", "--unified", "--cc", "-c", "--word-diff", "--color-words",
          "--patch-with-stat", "--patch-with-raw", "-m", "--diff-merges", "--remerge-diff", "--full-diff")  # fmt: skip
# Commands that print contents of files they choose unless a pathspec limits them.
_UNBOUNDED = frozenset({"show", "diff", "diff-tree", "diff-index", "difftool", "format-patch", "archive", "grep",
                        "log", "whatchanged"})  # fmt: skip


# Flags by which a read goes beyond the files git tracks (any file of the folder, or outside it).
_BEYOND_TRACKED = ("--no-index", "--untracked", "--no-exclude-standard", "--add-file", "--add-virtual-file")
BEYOND_TRACKED_NOTE = "it reads files git does not track"


def _flag_in(word: str, flags: tuple[str, ...]) -> bool:
    name = word.split("=", 1)[0]
    if name in flags:
        return True
    # ``-U3``, ``--stat=80``, ``-p`` in a cluster (``-sp`` is git's ``-s -p``)
    return any(name.startswith(f) for f in flags if f.startswith("--") or f == "-U") or (
        name.startswith("-") and not name.startswith("--") and any(f"-{c}" in flags for c in name[1:])
    )


# Options by which a command takes revisions no word names (every ref, the reflog, standard input).
_MORE_REVISIONS = ("--all", "--branches", "--tags", "--remotes", "--glob", "--reflog", "--stdin",
                   "--indexed-objects", "--alternate-refs", "--exclude", "--walk-reflogs", "-g", "--bisect")  # fmt: skip
_RANGE = re.compile(r"\.\.\.?")
_REV_SUFFIX = re.compile(r"\^(@|!|-\d*)$")


@dataclass(frozen=True)
class GitRead:
    """A git command that may print file contents, its words as git reads them (``git_read``).

    ``names``: every word before ``--`` that is not an option: a revision, a path, an option's value or a
    grep pattern (git decides which; ``reach.gitnames`` asks git what each names as an object, so a word
    read here as a name that git reads as a value errs towards asking); ``revisions``: what to resolve
    for each of them (a range ``A..B`` is ``A`` and ``B``, ``^A`` is ``A``); ``pathspec``: the words after
    ``--`` (a read with none is taken to reach every file); ``contents``: it prints the contents of the
    files its pathspec reaches (not only names, counts or commits); ``beyond``: a flag by which it reads
    files git does not track; ``more_revisions``: an option that adds revisions no word names.
    """

    command: str
    global_options: tuple[str, ...]
    names: tuple[str, ...]
    revisions: tuple[tuple[str, ...], ...]
    pathspec: tuple[str, ...]
    contents: bool
    beyond: str | None
    more_revisions: str | None


def _revision_parts(word: str) -> tuple[str, ...]:
    """The object names a revision word stands for: both ends of a range, ``^A``'s ``A``, ``A^@``'s ``A``
    (an empty end is ``HEAD``)."""
    if ":" in word:
        return (word,)  # ``<rev>:<path>``, ``:<n>:<path>``: one object, ranges do not apply
    parts = _RANGE.split(word) if _RANGE.search(word) else [word]
    return tuple(_REV_SUFFIX.sub("", part.lstrip("^")) or "HEAD" for part in parts)


def _prints_contents(command: str, options: list[str]) -> bool:
    if command not in _UNBOUNDED:
        return False  # ``blame``, ``cat-file``: only the object a word names (judged by what it names)
    if command in ("log", "whatchanged"):
        return any(_flag_in(w, _PATCH) for w in options)
    if command in ("show", "diff", "diff-tree", "diff-index") and any(_flag_in(w, _NO_CONTENTS) for w in options):
        return any(_flag_in(w, ("-p", "--patch", "-U", "--unified")) for w in options)
    return True


def git_read(words: list[str]) -> GitRead | None:
    """The content-printing git command ``words`` (``git`` first) as git reads it, or ``None`` when it is
    not one (``git status``, ``git ls-files`` …)."""
    args, k = words[1:], 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _GIT_VALUE_OPTIONS else 1
    if k >= len(args) or args[k] not in _PRINTS_CONTENTS:
        return None
    global_options, command, rest = tuple(args[:k]), args[k], args[k + 1 :]
    cut = rest.index("--") if "--" in rest else len(rest)
    options = [w for w in rest[:cut] if w.startswith("-") and w != "-"]
    names = [w for w in rest[:cut] if w and not (w.startswith("-") and w != "-")]
    beyond = next((w for w in options if _flag_in(w, _BEYOND_TRACKED)), None)
    more = next((w for w in options if w.split("=", 1)[0] in _MORE_REVISIONS), None)
    return GitRead(
        command, global_options, tuple(names), tuple(_revision_parts(n) for n in names),
        tuple(rest[cut + 1 :]), _prints_contents(command, options), beyond, more,
    )  # fmt: skip


__all__ = [
    "BEYOND_TRACKED_NOTE",
    "SECRET_NAMES",
    "GitRead",
    "git_read",
    "is_secret_name",
    "secret_reference",
]
