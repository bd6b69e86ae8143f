"""What a simple shell command really runs: the program behind its spelling, its wrappers and its flags.

A deny rule names a program (``rm *``); the shell runs the same ``rm`` when it is spelled
``/bin/rm``, ``\\rm``, ``'rm'``, ``$'\\x72m'``, or handed to a wrapper (``command``, ``env``, ``exec``,
``sudo``, ``xargs``, ``find -exec``, ``sh -c``, ``eval``, ``busybox``, ``git -c alias.x=!…``). ``unwrap``
is the one step that looks through them all (and says when it cannot: ``eval "$x"``); ``run_commands``
lists every command a simple command runs,
each as its words with the program reduced to its name, so that a rule can be matched against what
runs rather than how it is written. ``unsafe_use`` tells why an otherwise read-only program would
write, delete or run something with the flags given (``find -delete``, ``sed e``, ``awk system()``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from freeact_tui.shell.gitreads import option_refusal, secret_reference
from freeact_tui.shell.options import unknown_option
from freeact_tui.shell.words import command_words, inner_commands, inspect_command, split_command

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Wrappers that run their arguments as a command: the options that take a value (``-u USER``).
_WRAPPERS: dict[str, frozenset[str]] = {
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "pkexec": frozenset({"--user"}),
    "runuser": frozenset({"-u", "-g", "-G", "--user", "--group", "--supp-group"}),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "unshare": frozenset(),
    "setpriv": frozenset(),
    "caffeinate": frozenset(),
    "unbuffer": frozenset(),
    "xargs": frozenset({"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--arg-file", "--delimiter",
                        "--max-args", "--max-procs", "--max-lines", "--max-chars", "--eof", "--replace"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "chroot": frozenset(),
    "strace": frozenset({"-e", "-o", "-p", "-s", "-u"}),
    "flock": frozenset({"-w", "-E", "--timeout"}),
}  # fmt: skip
# Wrappers whose first argument is not the command (``timeout 5 rm``, ``chroot /new rm``).
_LEADING_ARGUMENT = frozenset({"timeout", "chroot", "flock", "taskset"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "fish", "csh", "tcsh", "su"})
# One binary, many programs: the first argument names the program that runs.
_MULTICALL = frozenset({"busybox", "toybox"})
# Shell syntax before a command's program: ``! rm``, ``{ rm``, ``if rm``, ``then rm``, ``( rm``.
_RESERVED = frozenset({"!", "{", "}", "(", ")", "if", "then", "else", "elif", "fi", "do", "done", "while",
                       "until", "coproc", "case", "esac", "in"})
# git's options before its subcommand that take a value as the next word.
_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--config-env", "--git-dir", "--work-tree", "--namespace",
                                "--super-prefix", "--exec-path", "--list-cmds", "--attr-source"})
GIT_COMMANDS = frozenset(
    "add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore check-mailmap "
    "check-ref-format checkout checkout-index cherry cherry-pick citool clean clone commit commit-graph "
    "commit-tree config count-objects credential describe diff diff-files diff-index diff-tree difftool "
    "fast-export fast-import fetch fetch-pack filter-branch for-each-ref for-each-repo format-patch fsck gc "
    "get-tar-commit-id grep gui hash-object help index-pack init instaweb interpret-trailers log ls-files "
    "ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-tree mergetool mktag "
    "mktree multi-pack-index mv name-rev notes pack-objects pack-refs prune prune-packed pull push range-diff "
    "read-tree rebase reflog remote repack replace rerere reset restore rev-list rev-parse revert rm "
    "send-email shortlog show show-branch show-index show-ref sparse-checkout stage stash status stripspace "
    "submodule switch symbolic-ref tag unpack-file unpack-objects update-index update-ref "
    "update-server-info var verify-commit verify-pack verify-tag version whatchanged worktree write-tree".split()
)
"""git's own commands: any other name runs an alias or a ``git-<name>`` program (repository-defined)."""
WORD_RUNNERS = frozenset(_WRAPPERS) | _LEADING_ARGUMENT | _SHELLS | _MULTICALL | {"eval", "watch", "trap", "source", "."}
"""Programs that run a command (or script) their arguments name: their words are another program's."""
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_MAX_DEPTH = 16
"""Wrappers looked through inside one another; deeper nesting cannot be told (asked)."""


def program_name(word: str) -> str:
    """The program a command word names: ``/usr/bin/rm`` and ``./rm`` are ``rm``."""
    return word.rsplit("/", 1)[-1] if "/" in word.rstrip("/") else word


@dataclass
class Unwrapped:
    """What a shell command runs, unwrapped (``unwrap``).

    Attributes:
        commands: every command it runs, outermost first, each as its words with the program by name.
        opaque: why some command it runs cannot be known here (``eval "$x"``, ``sh script.sh``, a git
            alias): such a command is asked, never allowed by an allow rule.
    """

    commands: list[list[str]] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)


def unwrap(command: str) -> Unwrapped:
    """The one unwrapping step rules match through: every command ``command`` runs, recursively (bounded).

    Wrappers (``command``, ``exec``, ``env``, ``sudo``, ``nice``, ``timeout``, ``nohup``, ``xargs`` …),
    ``eval``, ``sh -c``/``bash -c`` (any shell), ``busybox <applet>``, ``trap``, ``watch``, ``find -exec``
    and git's ``-c`` values and aliases are looked through; the commands inside substitutions, and
    every part of a composite text, too. ``$'…'`` is decoded first (``command_words``). What runs but
    cannot be read here (a script file, ``eval "$x"``, a program named by ``$x``, a git alias the
    repository may define) is named in ``opaque``.
    """
    found = Unwrapped()
    _script(command, found, 0)
    return found


def run_commands(command: str) -> list[list[str]]:
    """Every command a shell command runs, outermost first, each with its program by name (``unwrap``).

    ``sudo -u root /bin/rm -rf x`` gives ``[["sudo", "-u", "root", "rm", "-rf", "x"], ["rm", "-rf", "x"]]``;
    ``find . -delete`` adds ``["rm", "."]`` (it deletes what it finds); ``sh -c 'rm x'`` adds the parts of
    its script.
    """
    return unwrap(command).commands


def _script(text: str, found: Unwrapped, depth: int) -> None:
    """The commands of a shell text (each part, and the commands in its substitutions)."""
    if depth > _MAX_DEPTH:
        found.opaque.append("commands nested too deeply to read")
        return
    traits = inspect_command(text)
    if depth > 0 and (traits.expansion or traits.substitution or traits.unbalanced):
        found.opaque.append(f"the script {text!r} is completed only when it runs")
    for part in split_command(text):
        _collect(command_words(part), found, depth)
    for inner in inner_commands(text):
        _collect(command_words(inner), found, depth + 1)


def _collect(words: list[str], found: Unwrapped, depth: int) -> None:
    words = _skip_syntax(words)
    if not words:
        return
    if depth > _MAX_DEPTH:
        found.opaque.append("commands nested too deeply to read")
        return
    if any(c in words[0] for c in "$`"):
        found.opaque.append(f"the program {words[0]!r} is chosen when it runs")
    words = [program_name(words[0]), *words[1:]]
    found.commands.append(words)
    program, rest = words[0], words[1:]
    _collect_inner(program, rest, words, found, depth)
    if (inline := inline_code(program, rest)) is not None:
        found.opaque.append(inline)


def _collect_inner(program: str, rest: list[str], words: list[str], found: Unwrapped, depth: int) -> None:
    """The commands ``program`` runs in turn: wrapped, evaluated, a shell's script, git's, find's."""
    if program in _WRAPPERS or program in _LEADING_ARGUMENT:
        _collect(_unwrap(program, rest, found, depth), found, depth + 1)
    elif program == "eval":
        _script(" ".join(rest), found, depth + 1)
    elif program in ("watch",):
        inner = _unwrap(program, rest, found, depth)
        _script(" ".join(inner), found, depth + 1)  # watch hands its words to ``sh -c``
    elif program in _MULTICALL:
        applet = next((k for k, w in enumerate(rest) if not w.startswith("-")), None)
        if applet is not None:
            _collect(rest[applet:], found, depth + 1)
    elif program in _SHELLS:
        script = _shell_script(rest)
        if script is not None:
            _script(script, found, depth + 1)
        else:
            found.opaque.append(f"{program} runs a script it reads from a file or its input")
    elif program in ("source", "."):
        found.opaque.append(f"{program} runs the commands of a file")
    elif program == "trap" and rest and not rest[0].startswith("-"):
        _script(rest[0], found, depth + 1)
    elif program == "git":
        _git(rest, found, depth)
    elif program == "find":
        _find_commands(words, found, depth)


# Programs that run code given as an argument: the options that carry it, and its language. Shell code
# (``sh -c``, ``eval``, ``trap``, ``find -exec``) and awk are read above; code in these languages is not
# read here, so a command carrying it is "cannot tell" (asked, whatever an allow rule says).
_INLINE_CODE: dict[str, tuple[tuple[str, ...], str]] = {
    "python": (("-c",), "Python"), "pypy": (("-c",), "Python"), "ipython": (("-c",), "Python"),
    "perl": (("-e", "-E"), "Perl"), "ruby": (("-e",), "Ruby"), "irb": (("-e",), "Ruby"),
    "node": (("-e", "--eval", "-p", "--print"), "JavaScript"), "nodejs": (("-e", "--eval", "-p", "--print"), "JavaScript"),
    "bun": (("-e", "--eval", "-p", "--print"), "JavaScript"), "deno": (("eval",), "JavaScript"),
    "php": (("-r", "-B", "-R", "-E"), "PHP"), "lua": (("-e",), "Lua"), "luajit": (("-e",), "Lua"),
    "Rscript": (("-e", "--expr"), "R"), "R": (("-e",), "R"), "julia": (("-e", "-E", "--eval", "--print"), "Julia"),
    "elixir": (("-e", "--eval"), "Elixir"), "erl": (("-eval",), "Erlang"), "osascript": (("-e",), "AppleScript"),
    "pwsh": (("-c", "-command", "-encodedcommand", "-ec"), "PowerShell"),
    "powershell": (("-c", "-command", "-encodedcommand", "-ec"), "PowerShell"),
    "tclsh": (("-c",), "Tcl"), "guile": (("-c", "-e"), "Scheme"), "racket": (("-e", "--eval"), "Racket"),
    "sbcl": (("--eval",), "Lisp"), "gdb": (("-ex", "--eval-command"), "gdb"), "vim": (("-c", "--cmd"), "Vim"),
    "nvim": (("-c", "--cmd"), "Vim"), "emacs": (("--eval",), "Emacs Lisp"), "jshell": (("-R",), "Java"),
}  # fmt: skip
_VERSION_SUFFIX = re.compile(r"[\d.]+$")


def inline_code(program: str, args: list[str]) -> str | None:
    """Why ``program`` runs code given in ``args`` that is not read here (``_INLINE_CODE``), if it does."""
    family = _VERSION_SUFFIX.sub("", program) or program
    if family not in _INLINE_CODE:
        return None
    options, language = _INLINE_CODE[family]
    letters = {o[1] for o in options if len(o) == 2 and o[0] == "-"}
    for word in args:
        lowered = word.split("=", 1)[0].lower() if family in ("pwsh", "powershell") else word.split("=", 1)[0]
        if lowered in options or (
            word.startswith("-") and not word.startswith("--") and bool(set(word[1:]) & letters)
        ):  # in a cluster too: ``perl -ne``, ``python -Ic`` (an option's attached value counts: asked)
            return f"{program} {word[:12]} runs {language} code given as an argument (not read here)"
        if word == "--" or (not word.startswith("-") and family != "deno"):
            break  # the script file or its arguments: the interpreter's own options end here
    return None


def _skip_syntax(words: list[str]) -> list[str]:
    """The command after assignments, reserved words and a function's head (``f() { rm x; }`` runs rm)."""
    while words:
        if _ASSIGNMENT.match(words[0]) or words[0] in _RESERVED:
            words = words[1:]  # ``FOO=1 rm x``, ``! rm x``, ``{ rm x``, ``if rm x``
        elif len(words) >= 2 and (words[1] == "()" or words[1:3] == ["(", ")"]):
            words = words[2:] if words[1] == "()" else words[3:]  # ``f() { rm x; }`` → the function's body
        elif words[0] == "function" and len(words) >= 2:
            words = words[2:]
        else:
            break
    return words


def _git(args: list[str], found: Unwrapped, depth: int) -> None:
    """git's ``-c name=value`` may name a program (an alias, a pager, a helper); an unknown subcommand
    may be an alias or a ``git-<name>`` program of the repository's choosing."""
    aliases: dict[str, str] = {}
    k = 0
    while k < len(args):
        word = args[k]
        name, _, value = word.partition("=")
        if word in _GIT_VALUE_OPTIONS:
            name, value = word, args[k + 1] if k + 1 < len(args) else ""
            k += 2
        else:
            k += 1
        if name == "-c":
            key, _, setting = value.partition("=")
            if key.lower().startswith("alias."):
                aliases[key[len("alias.") :]] = setting
            else:
                _script(setting, found, depth + 1)  # any value may name a program (pager, helper, editor)
        elif name == "--config-env":
            found.opaque.append(f"git --config-env {value} takes a setting from the environment")
        elif not word.startswith("-"):
            _git_command(word, args[k:], aliases, found, depth)
            return
    for alias in aliases.values():  # an alias defined but not called here still shows what it would run
        _git_alias(alias, [], found, depth)


def _git_command(command: str, rest: list[str], aliases: dict[str, str], found: Unwrapped, depth: int) -> None:
    if command in aliases:
        _git_alias(aliases.pop(command), rest, found, depth)
    elif command not in GIT_COMMANDS:
        found.opaque.append(f"git {command} may be an alias or a program the repository names")
    for alias in aliases.values():
        _git_alias(alias, [], found, depth)


def _git_alias(value: str, rest: list[str], found: Unwrapped, depth: int) -> None:
    """``!cmd`` runs ``cmd args`` in a shell; any other alias is git with those words first."""
    tail = " ".join(shlex.quote(w) for w in rest)
    if value.startswith("!"):
        _script(f"{value[1:]} {tail}".strip(), found, depth + 1)
        return
    try:
        _collect(["git", *shlex.split(value), *rest], found, depth + 1)
    except ValueError:
        found.opaque.append(f"the git alias {value!r} cannot be read")


def _unwrap(program: str, rest: list[str], found: Unwrapped, depth: int) -> list[str]:
    """The command a wrapper runs (its options, assignments and leading argument skipped)."""
    takes_value = _WRAPPERS.get(program, frozenset())
    k = 0
    while k < len(rest):
        word = rest[k]
        if program == "env" and _ASSIGNMENT.match(word):
            k += 1
            continue
        if word == "--":
            k += 1
            break
        if not word.startswith("-") or word == "-":
            break
        name = word.split("=", 1)[0]
        if program == "env" and name in ("-S", "--split-string"):
            value = word.split("=", 1)[1] if "=" in word else (rest[k + 1] if k + 1 < len(rest) else "")
            _script(value, found, depth + 1)
            return []
        k += 2 if "=" not in word and word in takes_value else 1
    if program in _LEADING_ARGUMENT and k < len(rest):
        k += 1  # the duration, the new root, the lock file
    return rest[k:]


def _shell_script(args: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (``-c`` in any cluster of flags: ``-lc``, ``-ec``), else ``None``."""
    for k, word in enumerate(args):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return args[k + 1] if k + 1 < len(args) else None
        if not word.startswith(("-", "+")):
            return None
    return None


def _find_commands(words: list[str], found: Unwrapped, depth: int) -> None:
    starts = [w for w in words[1:] if not w.startswith("-") and w not in ("(", ")", "!")][:1]
    k = 1
    while k < len(words):
        word = words[k]
        if word == "-delete":
            found.commands.append(["rm", *starts])
        if word in _FIND_RUNS:
            end = k + 1
            while end < len(words) and words[end] not in (";", "+", "\\;"):
                end += 1
            _collect(words[k + 1 : end], found, depth + 1)
            k = end
        k += 1


# Flags that make an otherwise read-only program write or run something: (long words, short letters).
# Recursive reads (grep -r, rg --hidden, diff -r) would show a .env file the ask rules never see; rg -L
# follows a directory symlink out of the folder (docs/k -> ~/.ssh) where no path word names it.
_GREP_RECURSIVE = (frozenset({"--recursive", "--dereference-recursive", "--directories", "-d"}), "rRd")
_FORBIDDEN: dict[str, tuple[frozenset[str], str]] = {
    "find": (frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0",
                        "-fprintf", "-fls"}), ""),
    "grep": _GREP_RECURSIVE, "egrep": _GREP_RECURSIVE, "fgrep": _GREP_RECURSIVE,
    "rg": (frozenset({"--pre", "--hidden", "--unrestricted", "--no-ignore", "--follow"}), "u.L"),
    "diff": (frozenset({"--recursive"}), "r"),
    "sort": (frozenset({"--output", "--compress-program"}), "o"),
    "tree": (frozenset(), "o"),
    "date": (frozenset({"--set"}), "s"),
    "file": (frozenset({"--compile"}), "C"),
    "git": (frozenset({"--output", "-c", "--config-env", "--exec-path", "--ext-diff", "--textconv",
                       "--upload-pack", "--receive-pack", "--pathspec-from-file", "--contents",
                       "--ignore-revs-file", "--show-signature", "--output-directory"}), ""),
    "sed": (frozenset({"--in-place", "--file"}), "if"),
    "tar": (frozenset({"--to-command", "--use-compress-program", "--checkpoint-action", "--info-script",
                       "--new-volume-script", "--rsh-command"}), "IF"),
    "less": (frozenset({"--lesskey-file"}), ""),
    "rsync": (frozenset({"--rsh", "--rsync-path"}), "e"),
}  # fmt: skip
_SED_RUNS = re.compile(r"[ewW]")
_AWK_RUNS = re.compile(r"system|ENVIRON|PROCINFO|getline|[|>]|@")


def unsafe_use(words: list[str]) -> str | None:
    """The flag or script piece that makes this read-only looking command write or run something, if any.

    Args:
        words: A command's words with its program by name (one item of ``run_commands``).
    """
    if not words:
        return None
    program = words[0]
    if program in _AWKS:
        return _awk_unsafe(words[1:])
    found = _flag_unsafe(program, words[1:]) or unknown_option(program, words[1:])
    if found is None and program == "git":
        found = option_refusal(words) or secret_reference(words)
    if found is None and program == "sed":
        scripts = [w for w in words[1:] if not w.startswith("-")][:1]
        for flag, value in zip(words[1:], words[2:], strict=False):
            if flag in ("-e", "--expression"):
                scripts.append(value)
        for script in scripts:
            if _SED_RUNS.search(_sed_commands(script)):
                return f"sed script {script!r} runs a command or writes a file"
    return found


def _flag_unsafe(program: str, args: list[str]) -> str | None:
    if program not in _FORBIDDEN:
        return None
    long_flags, letters = _FORBIDDEN[program]
    for w in args:
        name = w.split("=", 1)[0]
        if name in long_flags or (len(name) > 2 and any(f.startswith(name) for f in long_flags if f[:2] == "--")):
            return w  # GNU and git's parse-options take any unambiguous prefix: ``--out`` is ``--output``
        if letters and w.startswith("-") and not w.startswith("--") and set(w[1:]) & set(letters):
            return w
    return None


def _awk_unsafe(args: list[str]) -> str | None:
    for w in args:
        if w in ("-f", "--file", "-E", "--exec", "-l", "--load", "-i", "--include") or w.startswith(
            "--file="
        ):
            return w  # a program read from a file, or an extension loaded
        if not w.startswith("-") and _AWK_RUNS.search(w):
            return f"awk program {w!r} runs a command, reads the environment or writes a file"
    return None


def _sed_commands(script: str) -> str:
    """The command letters of a sed script: addresses, regexes and ``s``/``y`` bodies taken out."""
    out: list[str] = []
    k, n = 0, len(script)
    while k < n:
        c = script[k]
        if c in "sy" and k + 1 < n and script[k + 1] not in "\\\n ;":
            delim, k, sections = script[k + 1], k + 2, 0
            while k < n and sections < 2:
                if script[k] == "\\":
                    k += 2
                    continue
                if script[k] == delim:
                    sections += 1
                k += 1
            continue  # the flags that follow stay as command letters (``e``, ``w``)
        if c in "/":
            end = k + 1
            while end < n and script[end] != "/":
                end += 2 if script[end] == "\\" else 1
            k = end + 1
            continue
        out.append(c)
        k += 1
    return "".join(out)


NO_EXT_DIFF = r"(^|[;&|(]\s*)git(\s+)diff(?=\s|$)"
"""A ``git diff`` at the start of a command; the kernel adds ``--no-ext-diff`` to it before asking, so the
dialog shows what runs and the repo's ``diff.external`` never does (``git log``/``show`` use it only with
``--ext-diff``, which no allow rule lets through)."""


def without_ext_diff(command: str) -> str:
    """``command`` as the kernel runs it: each leading ``git diff`` with ``--no-ext-diff``."""
    return re.sub(NO_EXT_DIFF, r"\1git\2diff --no-ext-diff", command, flags=re.M)


__all__ = [
    "NO_EXT_DIFF",
    "without_ext_diff",
    "GIT_COMMANDS",
    "WORD_RUNNERS",
    "Unwrapped",
    "program_name",
    "run_commands",
    "unwrap",
    "inline_code",
    "unsafe_use",
]
