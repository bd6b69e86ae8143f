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

from freeact_tui.filenames import fold_path

_NAMED: tuple[str, ...] = (
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
    # version control's and tools' own credential stores: Mercurial's repository config ([auth]), Subversion's
    # cached logins, GnuPG's keyrings, a password manager's store and databases, MySQL's and conda's configs
    # (a password, a channel token), Terraform's state (every secret of what it built), a cloud service key
    ".hg/hgrc", ".svn/auth/**", ".subversion/auth/**", ".gnupg/**", ".password-store/**", "*.kdbx", ".my.cnf",
    ".condarc", "_netrc", "*.tfstate", "*.tfstate.backup", "service-account*.json", "*.gpg",
)  # fmt: skip
"""The named rows: files that hold secrets wherever they are (globs under any folder)."""

CREDENTIAL_WORDS = (
    "secret", "secrets", "credential", "credentials", "password", "passwords", "apikey", "api_key", "api-key",
)  # fmt: skip
# (not ``passwd``: ``/etc/passwd`` names the system's users, no password, and the sandbox's kernel needs it)
"""Word parts that make a data file's name a credential store's (``prod-secrets.yaml``, ``db_password``,
``my.apikey``): a part of it between ``-``, ``_`` and ``.`` (with a data suffix, or last in a name without one)."""

CREDENTIAL_DATA_WORDS = ("auth", "token", "tokens", "private")
"""Word parts that make a data file's name a credential store's (``auth.json``, ``github_token.txt``,
``token``): only as the last part, with no suffix or a data suffix (``auth.py`` is code, not a login)."""

DATA_SUFFIXES = ("", ".json", ".txt", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf")


def _word_rows() -> tuple[str, ...]:
    """The credential words as rows of the table (so that every user of it, the rules, the sandbox and the
    reading of code, judges by them alike)."""
    # A credential word anywhere in a data file's name (a data suffix); in a name without a suffix, as its last
    # part (``db_password``). A module named by the word is code, not a credential store: Python's own
    # ``secrets.py`` (hidden, the sandboxed kernel would not start), ``password_reset.py``.
    rows = [f"{w}{s}" for w in CREDENTIAL_WORDS for s in DATA_SUFFIXES]
    rows += [f"*[-_.]{w}{s}" for w in CREDENTIAL_WORDS for s in DATA_SUFFIXES]
    rows += [form.format(w=w) + s for w in CREDENTIAL_WORDS for s in DATA_SUFFIXES if s for form in ("{w}[-_.]*", "*[-_.]{w}[-_.]*")]
    rows += [f"{w}{suffix}" for w in CREDENTIAL_DATA_WORDS for suffix in DATA_SUFFIXES]
    rows += [f"*[-_.]{w}{suffix}" for w in CREDENTIAL_DATA_WORDS for suffix in DATA_SUFFIXES]
    return tuple(rows)


SECRET_NAMES: tuple[str, ...] = _NAMED + _word_rows()
"""Files that hold secrets wherever they are (globs under any folder): the named rows and the credential
words' rows. Asked, whatever allows the call, never read as work inside the folder (``effects.reader``),
hidden in the sandbox (``isolation.secret_files``)."""
# git commands that print file contents, and the global options that take a value.
_PRINTS_CONTENTS = frozenset({"show", "log", "diff", "blame", "annotate", "grep", "cat-file", "archive",
                              "whatchanged", "format-patch", "difftool", "diff-tree", "diff-index"})  # fmt: skip
_BY_OBJECT_ID = frozenset({"show", "cat-file", "archive", "diff", "diff-tree"})
_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--config-env", "--git-dir", "--work-tree", "--namespace"})
_OBJECT_ID = re.compile(r"^[0-9a-fA-F]{7,64}$")
_STAGE = re.compile(r"^:[0-3]?:?")
# The table as the one name comparison sees it (``filenames.fold``): a path is folded, then matched.
_FOLDED = tuple(fold_path(g) for g in SECRET_NAMES)
_EXAMPLES = tuple(re.sub(r"\[[^]]*\]", "_", g).replace("**", "x").replace("*", "x") for g in _FOLDED)


def is_secret_name(path: str) -> bool:
    """A path (or a glob) that names, or may match, a file of the secret table, compared as a file system
    may compare names (``filenames.fold``: ``.ENV``, ``.Git/Config``, ``.env.``, in any case or Unicode
    normal form, as git's ``icase`` pathspecs and case-insensitive file systems match)."""
    return _secret_folded(fold_path(path))


def _secret_folded(path: str) -> bool:
    if any(c in path for c in "*?["):
        # Some secret name matches the glob, or the glob read with its wildcards empty names a secret.
        if any(fnmatch.fnmatchcase(e, path) or fnmatch.fnmatchcase("d/" + e, path) for e in _EXAMPLES):
            return True
        return any(_secret_folded(re.sub(r"\[[^]]*\]|[*?]", fill, path)) for fill in ("", "x", "."))
    parts = path.strip("/").split("/")
    return any(
        fnmatch.fnmatchcase("/".join(parts[k:]), glob) or fnmatch.fnmatchcase("/".join(parts[k : k + 2]), glob)
        for glob in _FOLDED
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
        if path and is_secret_name(path):
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


# --- the options a default-allowed git read may take unasked (#39, F1) ----------------------------------
# The checker judges a read by its revisions and its pathspec (``reach.gitnames``). An option that widens
# what git prints beyond them (``--full-diff``: the whole commit's patch; ``--follow``: a rename from
# ``.env``; ``--find-object``; rename and copy detection, which print the source file's lines as context;
# ``--pickaxe-all``; merge diffs ``-m``/``-c``/``--cc``/``--remerge-diff``; ``--notes``; ``-L``; a
# submodule's diff) would print files no one judged. A deny-list misses the next such option, so each
# content-printing subcommand the built-in rules allow names the options known to only choose which of
# the judged commits are shown and how they are formatted, and any other option (an abbreviation too, where
# git's parse-options takes one) asks. ``listing_only``: options that add
# revisions no word names (``--all``, ``--branches`` …, ``--first-parent``), allowed only when the read
# prints no file contents (names, counts, commits).


@dataclass(frozen=True)
class GitOptions:
    """One git subcommand's known options (as ``shell.options.Options``, plus ``listing_only``)."""

    flags: str = ""
    valued: str = ""
    long: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    listing_only: frozenset[str] = frozenset()


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# How a diff is drawn: the same files' lines, in other shapes (never another file's).
_DIFF_SHAPE = _words(
    "--patch --no-patch --stat --numstat --shortstat --name-only --name-status --raw --summary "
    "--compact-summary --dirstat --cumulative --dirstat-by-file --word-diff --color-words --color --no-color "
    "--ignore-space-change --ignore-all-space --ignore-blank-lines --ignore-space-at-eol --ignore-cr-at-eol "
    "--minimal --patience --histogram --no-prefix --full-index --binary --function-context --no-ext-diff "
    "--no-textconv --quiet --exit-code --no-renames --text --check --patch-with-stat --no-color-moved "
    "--abbrev --no-abbrev --ws-error-highlight --irreversible-delete"
)
_DIFF_VALUED = _words(
    "--unified --stat-width --stat-name-width --stat-graph-width --stat-count --diff-algorithm "
    "--inter-hunk-context --src-prefix --dst-prefix --line-prefix --output-indicator-new "
    "--output-indicator-old --output-indicator-context --word-diff-regex --diff-filter"
)
# Which of the judged commits are shown, and how each is drawn.
_COMMITS = _words(
    "--oneline --graph --decorate --no-decorate --abbrev-commit --no-abbrev-commit --reverse --topo-order "
    "--date-order --author-date-order --merges --no-merges --all-match --invert-grep --regexp-ignore-case "
    "--extended-regexp --fixed-strings --perl-regexp --basic-regexp --relative-date --left-right --boundary "
    "--no-notes --parents --children --simplify-by-decoration --no-walk --log-size --no-merges --no-mailmap "
    "--no-use-mailmap --clear-decorations"
)
_COMMITS_VALUED = _words(
    "--max-count --skip --since --after --until --before --author --committer --grep --date --pretty "
    "--format --min-parents --max-parents --encoding --decorate-refs --decorate-refs-exclude"
)
_MORE_COMMITS = _words("--all --branches --tags --remotes --first-parent --reflog --glob --exclude")
_LOG = GitOptions(
    flags="pusqiEFPwbWR", valued="nUSG", long=_DIFF_SHAPE | _COMMITS, long_valued=_DIFF_VALUED | _COMMITS_VALUED,
    listing_only=_MORE_COMMITS,
)  # -S/-G pick commits by a string in the judged files; --pickaxe-all (the whole commit) is not listed
GIT_READ_OPTIONS: dict[str, GitOptions] = {
    "log": _LOG,
    "whatchanged": _LOG,
    "show": _LOG,
    "diff": GitOptions(
        flags="pusqwbWR", valued="U", long=_DIFF_SHAPE | _words("--cached --staged --merge-base --relative"),
        long_valued=_DIFF_VALUED,
    ),
    # blame prints the lines of the one file it names: only how; not -C/-M (lines moved from other files,
    # named), -S (a revisions file), --contents, --ignore-revs-file
    "blame": GitOptions(
        flags="ltsewnfpcb", valued="L",
        long=_words("--porcelain --line-porcelain --root --show-stats --show-name --show-number --show-email "
                    "--incremental --abbrev --color-lines --color-by-age --no-progress"),
        long_valued=_words("--date --abbrev"),
    ),
}  # fmt: skip
"""The content-printing git subcommands the built-in rules allow (``git log *``, ``show``, ``diff``,
``blame``) and the options each may take unasked: an allow-list; any other option asks."""


def _subcommand(args: list[str]) -> int:
    k = 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _GIT_VALUE_OPTIONS else 1
    return k


def _option_allowed(word: str, table: GitOptions, listing: bool) -> tuple[bool, int]:
    """Whether one option word is known to print only what is judged, and how many value words follow."""
    if word.startswith("--"):
        name, glued = word.split("=", 1)[0], "=" in word
        if name in table.long_valued:
            return True, 0 if glued else 1
        return name in table.long or (listing and name in table.listing_only), 0
    if word[1:].isdigit():
        return True, 0  # ``-5``: a count of commits
    for j, letter in enumerate(word[1:], 1):
        if letter in table.valued:
            return True, 0 if j + 1 < len(word) else 1
        if letter not in table.flags:
            return False, 0
    return True, 0


def option_refusal(words: list[str]) -> str | None:
    """The first option of the git read ``words`` (``git`` first) not known to print only the revisions and
    pathspec the checker judges (``GIT_READ_OPTIONS``), or ``None`` (also for a subcommand without a table:
    its rules are judged otherwise)."""
    args = words[1:]
    k = _subcommand(args)
    table = GIT_READ_OPTIONS.get(args[k]) if k < len(args) else None
    if table is None:
        return None
    read = git_read(words)
    listing = read is not None and not read.contents
    rest = args[k + 1 :]
    j = 0
    while j < len(rest):
        word = rest[j]
        j += 1
        if word == "--":
            return None
        if not word.startswith("-") or word == "-":
            continue
        allowed, values = _option_allowed(word, table, listing)
        if not allowed:
            return f"{word} (git {args[k]}: an option that may print more than the files and commits judged)"
        j += values
    return None


__all__ = [
    "BEYOND_TRACKED_NOTE",
    "GIT_READ_OPTIONS",
    "SECRET_NAMES",
    "GitOptions",
    "GitRead",
    "git_read",
    "is_secret_name",
    "option_refusal",
    "secret_reference",
]
