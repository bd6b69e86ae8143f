"""What a simple shell command really runs: the program behind its spelling, its wrappers and its flags.

A deny rule names a program (``rm *``); the shell runs the same ``rm`` when it is spelled
``/bin/rm``, ``\\rm``, ``'rm'``, or handed to a wrapper (``command``, ``env``, ``exec``, ``sudo``,
``xargs``, ``find -exec``, ``sh -c``). ``run_commands`` lists every command a simple command runs,
each as its words with the program reduced to its name, so that a rule can be matched against what
runs rather than how it is written. ``unsafe_use`` tells why an otherwise read-only program would
write, delete or run something with the flags given (``find -delete``, ``sed e``, ``awk system()``).
"""

from __future__ import annotations

import re
import shlex

from freeact_tui.shellwords import command_words, split_command

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
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox"})
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_MAX_DEPTH = 8


def program_name(word: str) -> str:
    """The program a command word names: ``/usr/bin/rm`` and ``./rm`` are ``rm``."""
    return word.rsplit("/", 1)[-1] if "/" in word.rstrip("/") else word


def run_commands(command: str) -> list[list[str]]:
    """Every command a simple shell command runs, outermost first, each with its program by name.

    ``sudo -u root /bin/rm -rf x`` gives ``[["sudo", "-u", "root", "rm", "-rf", "x"], ["rm", "-rf", "x"]]``;
    ``find . -delete`` adds ``["rm", "."]`` (it deletes what it finds); ``sh -c 'rm x'`` adds the parts of
    its script.
    """
    out: list[list[str]] = []
    _collect(command_words(command), out, 0)
    return out


def _collect(words: list[str], out: list[list[str]], depth: int) -> None:
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]  # ``FOO=1 rm x`` runs rm
    if not words or depth > _MAX_DEPTH:
        return
    words = [program_name(words[0]), *words[1:]]
    out.append(words)
    program = words[0]
    if program in _WRAPPERS or program in _LEADING_ARGUMENT:
        _collect(_unwrap(program, words[1:], out, depth), out, depth + 1)
    elif program in _SHELLS:
        script = _shell_script(words[1:])
        if script is not None:
            for part in split_command(script):
                _collect(command_words(part), out, depth + 1)
    elif program == "find":
        _find_commands(words, out, depth)


def _unwrap(program: str, rest: list[str], out: list[list[str]], depth: int) -> list[str]:
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
            try:
                _collect(shlex.split(value), out, depth + 1)
            except ValueError:
                _collect(value.split(), out, depth + 1)
            return []
        k += 2 if "=" not in word and word in takes_value else 1
    if program in _LEADING_ARGUMENT and k < len(rest):
        k += 1  # the duration, the new root, the lock file
    return rest[k:]


def _shell_script(args: list[str]) -> str | None:
    for k, word in enumerate(args):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return args[k + 1] if k + 1 < len(args) else None
        if not word.startswith("-"):
            return None
    return None


def _find_commands(words: list[str], out: list[list[str]], depth: int) -> None:
    starts = [w for w in words[1:] if not w.startswith("-") and w not in ("(", ")", "!")][:1]
    k = 1
    while k < len(words):
        word = words[k]
        if word == "-delete":
            out.append(["rm", *starts])
        if word in _FIND_RUNS:
            end = k + 1
            while end < len(words) and words[end] not in (";", "+", "\\;"):
                end += 1
            _collect(words[k + 1 : end], out, depth + 1)
            k = end
        k += 1


# Flags that make an otherwise read-only program write or run something: (long words, short letters).
# Recursive reads (grep -r, rg --hidden, diff -r) would show a .env file the ask rules never see.
_GREP_RECURSIVE = (frozenset({"--recursive", "--dereference-recursive", "--directories", "-d"}), "rRd")
_FORBIDDEN: dict[str, tuple[frozenset[str], str]] = {
    "find": (frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0",
                        "-fprintf", "-fls"}), ""),
    "grep": _GREP_RECURSIVE, "egrep": _GREP_RECURSIVE, "fgrep": _GREP_RECURSIVE,
    "rg": (frozenset({"--pre", "--hidden", "--unrestricted", "--no-ignore"}), "u."),
    "diff": (frozenset({"--recursive"}), "r"),
    "sort": (frozenset({"--output", "--compress-program"}), "o"),
    "tree": (frozenset(), "o"),
    "date": (frozenset({"--set"}), "s"),
    "file": (frozenset({"--compile"}), "C"),
    "git": (frozenset({"--output", "-c", "--config-env", "--exec-path", "--ext-diff", "--textconv",
                       "--upload-pack", "--receive-pack"}), ""),
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
    found = _flag_unsafe(program, words[1:])
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
        if w.split("=", 1)[0] in long_flags:
            return w
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
    "program_name",
    "run_commands",
    "unsafe_use",
]
