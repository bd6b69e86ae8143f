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

SECRET_NAMES = (
    ".env", ".env.*", ".ssh/**", ".aws/**", ".netrc", ".pgpass", ".git-credentials", "*.pem", "*.key",
    ".npmrc", ".pypirc", ".docker/config.json", ".kube/config", ".vault-token",
    ".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".python_history", ".node_repl_history",
    ".psql_history", ".mysql_history", ".sqlite_history", ".lesshst", ".viminfo", "id_rsa*", "id_ed25519*",
    "id_ecdsa*", "id_dsa*",
)  # fmt: skip
"""Files that hold secrets wherever they are (globs under any folder): asked, whatever allows the call."""
# git commands that print file contents, and the global options that take a value.
_PRINTS_CONTENTS = frozenset({"show", "log", "diff", "blame", "annotate", "grep", "cat-file", "archive",
                              "whatchanged", "format-patch", "difftool", "diff-tree", "diff-index"})  # fmt: skip
_BY_OBJECT_ID = frozenset({"show", "cat-file", "archive", "diff", "diff-tree"})
_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--config-env", "--git-dir", "--work-tree", "--namespace"})
_OBJECT_ID = re.compile(r"^[0-9a-fA-F]{7,64}$")
_STAGE = re.compile(r"^:[0-3]?:?")
_EXAMPLES = tuple(g.replace("**", "x").replace("*", "x") for g in SECRET_NAMES)


def is_secret_name(path: str) -> bool:
    """A path (or a glob) that names, or may match, a file of the secret table."""
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
        if path and (is_secret_name(path) or is_secret_name(path.lower())):
            return f"{word} (names a secret file in git's store)"
    return None


__all__ = ["SECRET_NAMES", "is_secret_name", "secret_reference"]
