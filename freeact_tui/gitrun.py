"""The one way the app runs git, and what it asks of a repository before git may run there unasked.

A repository's own config runs programs: ``core.fsmonitor`` on any status or listing,
``diff.<driver>.textconv`` on ``git show``/``log -p``/``diff``, ``filter.<driver>.clean`` on a
status of a changed file, ``log.showSignature`` + ``gpg.program`` on ``git log``, hooks, pagers,
aliases, and whatever an ``include.path`` pulls in. So:

- every git the app starts itself (the ``@`` picker, the checkpoints' shadow repository) runs with
  ``git_argv``/``git_env``: no system or global config, no ``GIT_*`` variable of the caller, and the
  program-running settings git lets a command line override switched off (``SAFE_SETTINGS``);
- the same settings go to every git the kernel runs (``kernel_git_env``), as a second line;
- a git command the rules allow by default runs unasked only in a repository whose config holds
  nothing but settings known to run no program (``INERT_KEYS``): ``repo_program_keys`` lists the
  others. An unknown key counts as one that runs a program: git grows new ones, so the table lists
  what is known to be inert, never what is known to be dangerous.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

GIT = "git"

SAFE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.sshCommand", "false"),
    ("core.gitProxy", ""),
    ("core.askPass", "false"),
    ("credential.helper", ""),
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("log.showSignature", "false"),
    ("diff.external", ""),
    ("protocol.allow", "never"),
    ("protocol.file.allow", "never"),
    ("submodule.recurse", "false"),
    ("core.alternateRefsCommand", ""),
)
"""Program-running settings overridden on every git the app runs (as ``-c``, above the repo's config).

What cannot be overridden by name (``diff.<driver>.textconv``, ``filter.<driver>.*``, ``alias.*``) is
kept out by the commands the app runs (no diff, no checkout of the user's repository) and, for the
commands the model runs, by ``repo_program_keys``. An empty ``diff.external`` is ignored by git 2.39+
for the app's own commands, which never diff with an external tool anyway."""

KERNEL_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("log.showSignature", "false"),
)
"""The settings given to every git the kernel runs: only those that cannot break a command the user
approved (hooks, editors and credential helpers stay the user's own for ``git commit``/``push``)."""

SAFE_ENV: Mapping[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_LITERAL_PATHSPECS": "1",
}
"""Environment of every git the app runs itself (after every ``GIT_*`` of its own is dropped):
no system or global config, no system attributes, no prompt, no index rewrite (which runs the
``post-index-change`` hook), no lazy fetch of a partial clone (which runs a transport)."""

# Settings known to run no program; everything else in a repository's config makes a default-allowed
# git command ask. Lower-case (git's keys are case-insensitive but for the subsection).
INERT_KEYS: tuple[str, ...] = (
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
    "core.ignorecase", "core.precomposeunicode", "core.symlinks", "core.autocrlf", "core.eol",
    "core.safecrlf", "core.quotepath", "core.sharedrepository", "core.untrackedcache",
    "core.splitindex", "core.commitgraph", "core.multipackindex", "core.abbrev", "core.compression",
    "core.checkstat", "core.trustctime", "core.whitespace", "core.filesrefversion", "core.preloadindex",
    "core.longpaths", "core.fscache", "core.deltabasecachelimit", "core.bigfilethreshold", "core.worktree",
    "remote.*.url", "remote.*.pushurl", "remote.*.fetch", "remote.*.push", "remote.*.tagopt",
    "remote.*.prune", "remote.*.prunetags", "remote.*.mirror", "remote.*.skipdefaultupdate",
    "branch.*.remote", "branch.*.merge", "branch.*.rebase", "branch.*.description", "branch.*.pushremote",
    "user.name", "user.email", "author.name", "author.email", "committer.name", "committer.email",
    "init.defaultbranch", "pull.rebase", "pull.ff", "push.default", "push.autosetupremote",
    "fetch.prune", "fetch.prunetags", "fetch.writecommitgraph", "extensions.worktreeconfig",
    "extensions.objectformat", "extensions.refstorage", "submodule.*.url", "submodule.*.active",
    "color.*", "color.*.*", "column.*", "diff.renames", "diff.algorithm", "diff.context",
    "diff.mnemonicprefix", "diff.noprefix", "diff.colormoved", "diff.renamelimit", "diff.indentheuristic",
    "merge.conflictstyle", "merge.ff", "log.date", "log.decorate", "log.abbrevcommit", "log.follow",
    "i18n.commitencoding", "i18n.logoutputencoding", "rerere.enabled", "rerere.autoupdate",
    "status.showuntrackedfiles", "status.short", "status.branch", "advice.*", "index.version",
    "index.threads", "pack.threads", "gc.auto", "gc.autodetach", "feature.manyfiles",
    "feature.experimental", "maintenance.auto", "maintenance.strategy", "protocol.version",
    "lfs.repositoryformatversion", "gui.*", "blame.date", "tag.sort", "branch.sort",
    "core.sparsecheckout", "core.sparsecheckoutcone", "fetch.recursesubmodules", "branch.autosetupmerge",
    "branch.autosetuprebase", "rebase.autostash", "rebase.autosquash", "rebase.updaterefs", "merge.renames",
    "diff.submodule", "status.submodulesummary", "push.followtags", "submodule.*.branch",
)  # fmt: skip
_JUDGED_SCOPES = frozenset({"local", "worktree"})
"""The config scopes a repository brings (its ``.git/config``, ``config.worktree`` and what they
include); system, global and command-line settings are the user's own."""


def safe_settings_args(settings: Sequence[tuple[str, str]] = SAFE_SETTINGS) -> list[str]:
    """``-c key=value`` for each setting."""
    return [arg for key, value in settings for arg in ("-c", f"{key}={value}")]


def git_argv(*args: str, git: str | None = None) -> list[str]:
    """The argv of one git command the app runs: ``--no-pager`` and ``SAFE_SETTINGS`` before ``args``."""
    return [git or GIT, "--no-pager", *safe_settings_args(), *args]


def git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git the app runs: ``base`` (default ``os.environ``) without ``GIT_*``, plus
    ``SAFE_ENV``."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith("GIT_")}
    env.update(SAFE_ENV)
    return env


TIME_BOUND = 30.0
"""Seconds any git the app runs may take. git opens files the app did not choose (``.gitignore`` in
every directory, ``.gitattributes``, ``.gitmodules``, ``info/exclude``, ``.mailmap``): a FIFO or a
device at one of those names blocks it forever, so no git the app runs goes unbounded."""


def timeout_message(what: str, seconds: float) -> str:
    """The one line that says a git was stopped at its time bound."""
    return (
        f"{what}: git did not finish in {seconds:g} s (a FIFO or another special file in the tree?) and was "
        "stopped"
    )


def find_git() -> str | None:
    """The path of the ``git`` executable, if installed."""
    return shutil.which(GIT)


def run_git(
    args: Sequence[str], cwd: Path, *, timeout: float = TIME_BOUND, git: str | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes] | None:
    """Run one git command the safe way (``git_argv``, ``git_env``), ``stdin`` its input (none by default);
    ``None`` if git is missing, cannot start in ``cwd`` or takes longer than ``timeout``."""
    try:
        return subprocess.run(
            git_argv(*args, git=git),
            cwd=cwd,
            env=git_env(),
            input=stdin,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def is_inert_key(key: str) -> bool:
    """Whether a config key is known to run no program (``INERT_KEYS``); unknown keys are not."""
    lowered = key.lower()
    section, _, rest = lowered.partition(".")
    name = rest.rsplit(".", 1)[-1] if rest else ""
    # ``section.sub.section.name`` has a subsection with dots in it: compare section and name around it.
    shape = f"{section}.*.{name}" if rest.count(".") >= 1 else lowered
    return any(fnmatch.fnmatchcase(lowered if "*" not in p else shape, p) for p in INERT_KEYS)


NESTED_LIMIT = 2000
"""How many entries of a repository's ``modules/`` and ``worktrees/`` are looked through for git dirs
(more: the repository is judged unsafe, as one git cannot read)."""


def _config_keys(cwd: Path, where: Sequence[str], git: str | None) -> list[str] | None:
    """The keys of one repository's own config (local and worktree scope, includes followed) not known
    to be inert; ``where`` picks the repository (``--git-dir=…``, ``-C …``). ``None``: git cannot read it."""
    done = run_git([*where, "config", "--list", "--show-scope", "--includes", "-z"], cwd, git=git)
    if done is None or done.returncode != 0:
        return None
    items = done.stdout.split(b"\0")
    found: list[str] = []
    for scope, entry in zip(items[0::2], items[1::2], strict=False):
        key = entry.split(b"\n", 1)[0].decode("utf-8", "replace")
        if scope.decode("ascii", "replace") in _JUDGED_SCOPES and not is_inert_key(key):
            found.append(key)
    return found


def _hook_names(git_dir: Path) -> list[str]:
    try:
        return [f"hook:{p.name}" for p in sorted((git_dir / "hooks").iterdir()) if not p.name.endswith(".sample")]
    except OSError:
        return []  # no hooks directory


def _nested_git_dirs(common: Path) -> list[Path] | None:
    """Every git dir a repository keeps inside its own (submodules' under ``modules/``, at any depth, and
    linked worktrees' under ``worktrees/``): git reads their config when it enters a submodule or works
    there. ``None`` past ``NESTED_LIMIT`` entries."""
    found: list[Path] = []
    seen = 0
    for top in ("modules", "worktrees"):
        for root, dirs, files in os.walk(common / top):
            seen += len(dirs) + len(files)
            if seen > NESTED_LIMIT:
                return None
            if "HEAD" in files and ("config" in files or "commondir" in files):
                found.append(Path(root))
                dirs[:] = [d for d in dirs if d == "modules"]  # its own objects and refs hold no git dir
    return found


def _gitlinks(cwd: Path, top: Path, git: str | None) -> list[Path] | None:
    """The submodule checkouts of the repository at ``top`` (gitlinks in its index) that have a ``.git``
    (a directory, or a file naming a git dir anywhere): git reads that repository's config there."""
    done = run_git(["-C", str(top), "ls-files", "-s", "-z", "--full-name"], cwd, git=git)
    if done is None or done.returncode != 0:
        return None
    found: list[Path] = []
    for entry in done.stdout.split(b"\0"):
        mode, _, rest = entry.partition(b" ")
        if mode == b"160000":
            path = top / rest.partition(b"\t")[2].decode("utf-8", "replace")
            if os.path.lexists(path / ".git"):
                found.append(path)
    return found


def repo_program_keys(cwd: Path, *, git: str | None = None, _depth: int = 0) -> list[str] | None:
    """What the repository at ``cwd`` names for git to run: the keys not known to be inert in every
    config git may read for a command there, and their hooks (``hook:<name>``). That is its own config
    (with what it includes) and the configs of the repositories git enters from it: each submodule (its
    git dir under ``modules/`` at any depth, or wherever its ``.git`` file points) and each linked
    worktree; a key of one of those is named ``<git dir>: <key>``. Empty: nothing, git may run there
    unasked. ``None`` when git cannot read one of them (no git, or a config git refuses), which a caller
    must take as unsafe. Outside a repository the list is empty."""
    where = run_git(["rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel"], cwd, git=git)
    if where is None:
        return None
    if where.returncode != 0:
        return [] if b"not a git repository" in where.stderr else None
    lines = where.stdout.decode("utf-8", "replace").splitlines()
    common = Path(lines[0].strip())
    found = _config_keys(cwd, [], git)
    nested = _nested_git_dirs(common)
    if found is None or nested is None:
        return None
    found += _hook_names(common)
    for git_dir in nested:
        keys = _config_keys(cwd, [f"--git-dir={git_dir}"], git)
        if keys is None:
            return None
        found += [f"{git_dir}: {key}" for key in [*keys, *_hook_names(git_dir)]]
    if len(lines) > 1 and _depth < 4:  # a work tree: its submodules' checkouts (their .git may point anywhere)
        links = _gitlinks(cwd, Path(lines[1].strip()), git)
        if links is None:
            return None
        for link in links:
            keys = repo_program_keys(link, git=git, _depth=_depth + 1)
            if keys is None:
                return None
            found += [key if ": " in key else f"{link}/.git: {key}" for key in keys]
    return found


def repo_paths_matching(
    cwd: Path, matches: Callable[[str], bool], *, timeout: float = 10, git: str | None = None
) -> list[str] | None:
    """The paths the repository at ``cwd`` holds anywhere in its store (every path any commit of any ref or
    reflog, every stash entry included, ever added or changed, and the index) that ``matches`` says yes to; ``None`` when
    git cannot tell in ``timeout`` (take it as "some"). Outside a repository the list is empty.

    ``rev-list --objects`` names each object once, by the first way it is reached: a blob a tag reaches
    first gets no path, so its path in a commit is hidden there. Every commit's changes (``log
    --name-only``, merges against each parent) name each path as it was added, whatever else reaches it."""
    history = run_git(["rev-list", "--objects", "--all", "--reflog"], cwd, timeout=timeout, git=git)
    changes = run_git(
        ["log", "--all", "--reflog", "-z", "--format=", "--name-only", "--no-renames", "--diff-merges=separate",
         "--no-ext-diff"],  # fmt: skip
        cwd,
        timeout=timeout,
        git=git,
    )
    index = run_git(["ls-files", "-z", "--cached"], cwd, timeout=timeout, git=git)
    if history is None or index is None or changes is None:
        return None
    if history.returncode != 0 or index.returncode != 0 or changes.returncode != 0:
        return [] if b"not a git repository" in history.stderr + index.stderr + changes.stderr else None
    names = {line.partition(b" ")[2] for line in history.stdout.splitlines()} | set(index.stdout.split(b"\0"))
    names |= {name.strip(b"\n") for name in changes.stdout.split(b"\0")}
    return sorted(p for name in names if name and matches(p := name.decode("utf-8", "replace")))


def kernel_git_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that add the kernel's git settings (``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n``,
    after ``environ``'s own) and keep ``git status`` from rewriting the index."""
    raw = environ.get("GIT_CONFIG_COUNT", "0")
    start = int(raw) if raw.isdigit() else 0
    out = {
        "GIT_CONFIG_COUNT": str(start + len(KERNEL_SETTINGS)),
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_NO_LAZY_FETCH": "1",
    }
    for k, (key, value) in enumerate(KERNEL_SETTINGS, start):
        out[f"GIT_CONFIG_KEY_{k}"] = key
        out[f"GIT_CONFIG_VALUE_{k}"] = value
    return out


__all__ = [
    "GIT",
    "INERT_KEYS",
    "KERNEL_SETTINGS",
    "SAFE_ENV",
    "SAFE_SETTINGS",
    "TIME_BOUND",
    "find_git",
    "git_argv",
    "git_env",
    "is_inert_key",
    "kernel_git_env",
    "repo_program_keys",
    "run_git",
    "safe_settings_args",
    "timeout_message",
]
