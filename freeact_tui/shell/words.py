"""Shell command lexing: split composite commands into simple ones and spot risky constructs.

This is not a shell parser. It reads just enough bash syntax (quotes, escapes, ``$(…)``, backticks,
``${…}``, comments, redirections) to know where one simple command ends and the next begins, and
whether a command does more than run one program with literal words. Whenever the text is
ambiguous it errs towards *more* parts and *fewer* guarantees, so that permission rules ask more
rather than less.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

# An IPython escape (``!cmd`` / ``!!cmd``) is not shell syntax (to sh, ``!cmd`` names no command);
# ``! cmd`` (bash negation) stays.
_IPYTHON_ESCAPE = re.compile(r"^\s*!!?(?=[^\s!#])")
# Characters that end a word in bash; ``#`` after one of them (or at the start) begins a comment.
_WORD_BREAKS = frozenset(" \t\r\n;&|()<>")
# ``$`` followed by one of these is a parameter expansion (``$HOME``, ``$1``, ``$?``, ``$@`` …).
_PARAM_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@*#?$!-")
# Redirection operators, longest first so that ``>>`` wins over ``>``.
_REDIRECT_OPS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">")
_OUTPUT_OPS = frozenset({"&>>", "&>", "<>", ">>", ">|", ">&", ">"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_FD_TARGET = re.compile(r"^(?:\d+-?|-)$")
_TARGET_WORD = re.compile(r"[ \t]*([^\s;&|()<>]*)")


@dataclass(frozen=True)
class CommandTraits:
    """What a shell command does beyond running one program with literal words.

    Attributes:
        substitution: contains command or process substitution (``$(…)``, backticks, ``<(…)``,
            ``>(…)``; ``$((…))`` counts too, bash may read it as a command substitution).
        file_redirect: output is redirected to a file (``>``, ``>>``, ``&>``, ``<>`` …); redirections
            to a file descriptor (``2>&1``) or to ``/dev/null`` do not count.
        expansion: contains a parameter expansion (``$VAR``, ``${…}``) whose value is unknown here.
        compound: more than one command (operators, newlines or a ``( … )`` subshell).
        unbalanced: an unterminated quote, substitution or bracket; bash would refuse or read it
            differently, so nothing about it is certain.
    """

    substitution: bool = False
    file_redirect: bool = False
    expansion: bool = False
    compound: bool = False
    unbalanced: bool = False

    @property
    def simple(self) -> bool:
        """True for one program run with literal words: what the user reads is what runs.

        Expansions count against it: IPython fills ``$name`` from Python variables after approval.
        """
        return not (
            self.substitution or self.file_redirect or self.expansion or self.compound or self.unbalanced
        )


class _Lexer:
    """One pass over a command; collects the top-level parts and the traits."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.parts: list[str] = []
        self.substitution = False
        self.file_redirect = False
        self.expansion = False
        self.subshell = False
        self.unbalanced = False
        self.inner: list[str] = []  # the commands inside substitutions, for deny rules

    def _inner(self, start: int, end: int) -> int:
        self.inner.append(self.s[start : max(start, end - 1)])
        return end

    def run(self) -> None:
        s, n = self.s, self.n
        start = i = 0
        while i < n:
            c = s[i]
            if c == "#" and self._word_start(i):
                self._flush(start, i)
                end = s.find("\n", i)
                start = i = n if end < 0 else end
            elif c in "\n;":
                self._flush(start, i)
                start = i = i + 1
            elif c == "|":
                self._flush(start, i)
                start = i = i + (2 if s.startswith(("||", "|&"), i) else 1)
            elif c == "&" and s.startswith("&&", i):
                self._flush(start, i)
                start = i = i + 2
            elif c == "&" and not s.startswith("&>", i):
                self._flush(start, i)  # a background job: the next command starts right away
                start = i = i + 1
            elif c in "<>&":
                i = self._redirect(i)
            elif c == "(":
                self.subshell = True  # kept whole: ``(a; b)`` is one part that matches no pattern
                i = self._skip_group(i + 1)
            elif c == ")":
                self.unbalanced = True
                i += 1
            else:
                i = self._skip_token(i)
        self._flush(start, n)

    def _flush(self, start: int, end: int) -> None:
        part = _IPYTHON_ESCAPE.sub("", self.s[start:end].strip(), count=1)
        if part:
            self.parts.append(part)

    def _word_start(self, i: int) -> bool:
        return i == 0 or self.s[i - 1] in _WORD_BREAKS

    def _redirect(self, i: int) -> int:
        s = self.s
        if s.startswith(("<(", ">("), i):
            self.substitution = True
            return self._inner(i + 2, self._skip_group(i + 2))
        op = next(op for op in _REDIRECT_OPS if s.startswith(op, i))
        end = i + len(op)
        if op in _OUTPUT_OPS:
            match = _TARGET_WORD.match(s, end)
            target = match.group(1) if match else ""
            if not target:
                self.unbalanced = True  # ``echo >`` alone is a syntax error in bash
            elif op == ">&" and _FD_TARGET.match(target):
                pass  # duplicates a descriptor (``2>&1``), writes no file
            elif target not in _HARMLESS_TARGETS:
                self.file_redirect = True
        return end

    def _skip_token(self, i: int) -> int:
        """Skip one quoted string, escape, expansion or plain character starting at ``i``."""
        s = self.s
        c = s[i]
        if c == "\\":
            return i + 2
        if c == "'":
            end = s.find("'", i + 1)
            if end < 0:
                self.unbalanced = True
                return self.n
            return end + 1
        if c == "`":
            self.substitution = True
            return self._inner(i + 1, self._skip_backticks(i + 1))
        if c == '"':
            return self._skip_double(i + 1)
        if c == "$":
            return self._skip_dollar(i)
        return i + 1

    def _skip_dollar(self, i: int) -> int:
        s = self.s
        nxt = s[i + 1] if i + 1 < self.n else ""
        if nxt == "'":
            return self._skip_ansi_c(i + 2)
        if nxt == '"':
            return self._skip_double(i + 2)
        if nxt == "(":
            self.substitution = True
            return self._inner(i + 2, self._skip_group(i + 2))
        if nxt == "{":
            self.expansion = True
            return self._skip_braces(i + 2)
        if nxt and nxt in _PARAM_CHARS:
            self.expansion = True
            return i + 2
        return i + 1

    def _skip_ansi_c(self, i: int) -> int:
        # ``$'…'`` honours backslash escapes, so ``$'\''`` is one quote character, not a closing quote.
        s = self.s
        while i < self.n:
            if s[i] == "\\":
                i += 2
            elif s[i] == "'":
                return i + 1
            else:
                i += 1
        self.unbalanced = True
        return self.n

    def _skip_double(self, i: int) -> int:
        s = self.s
        while i < self.n:
            c = s[i]
            if c == '"':
                return i + 1
            if c == "\\":
                i += 2
            elif c == "`":
                self.substitution = True
                i = self._inner(i + 1, self._skip_backticks(i + 1))
            elif c == "$":
                # Inside double quotes ``$'`` and ``$"`` are literal text.
                i = i + 1 if s.startswith(("$'", '$"'), i) else self._skip_dollar(i)
            else:
                i += 1
        self.unbalanced = True
        return self.n

    def _skip_backticks(self, i: int) -> int:
        s = self.s
        while i < self.n:
            if s[i] == "\\":
                i += 2
            elif s[i] == "`":
                return i + 1
            else:
                i += 1
        self.unbalanced = True
        return self.n

    def _skip_group(self, i: int) -> int:
        """Skip to the ``)`` that closes a group opened just before ``i`` (nesting, quotes, comments)."""
        s = self.s
        depth = 0
        while i < self.n:
            c = s[i]
            if c == ")":
                if depth == 0:
                    return i + 1
                depth -= 1
                i += 1
            elif c == "(":
                depth += 1
                i += 1
            elif c == "#" and self._word_start(i):
                end = s.find("\n", i)
                i = self.n if end < 0 else end
            else:
                i = self._skip_token(i)
        self.unbalanced = True
        return self.n

    def _skip_braces(self, i: int) -> int:
        s = self.s
        depth = 0
        while i < self.n:
            c = s[i]
            if c == "}":
                if depth == 0:
                    return i + 1
                depth -= 1
                i += 1
            elif c == "{":
                depth += 1
                i += 1
            else:
                i = self._skip_token(i)
        self.unbalanced = True
        return self.n


def _lex(cmd: str) -> _Lexer:
    lexer = _Lexer(cmd)
    lexer.run()
    return lexer


def split_command(cmd: str) -> list[str]:
    """Split a composite shell command into its simple commands.

    Splits on ``&&``, ``||``, ``|``, ``|&``, ``;``, newlines and ``&`` (a background job), outside
    quotes, escapes, ``$(…)``, backticks and ``${…}``. Redirections stay with their command
    (``2>&1``, ``&>log``, ``>|f``). Comments are dropped, a ``( … )`` subshell stays one part, an
    IPython escape (``!cmd``, ``!!cmd``) is removed. Parts are trimmed; empty ones dropped.

    Args:
        cmd: The command as the shell would receive it.

    Returns:
        The simple commands, in order, each a verbatim slice of ``cmd``
        (but for the IPython escape).
    """
    return _lex(cmd).parts


def inspect_command(cmd: str) -> CommandTraits:
    """Tell what a shell command does beyond running one program with literal words.

    Args:
        cmd: A simple or composite shell command.

    Returns:
        The command's traits; ``traits.simple`` is the test permission wildcards rely on.
    """
    lexer = _lex(cmd)
    return CommandTraits(
        substitution=lexer.substitution,
        file_redirect=lexer.file_redirect,
        expansion=lexer.expansion,
        compound=len(lexer.parts) > 1 or lexer.subshell,
        unbalanced=lexer.unbalanced,
    )


def inner_commands(cmd: str) -> list[str]:
    """The simple commands inside a command's substitutions (``$(…)``, backticks, ``<(…)``), nested ones too.

    Args:
        cmd: A simple or composite shell command.
    """
    # The lexer records nested substitutions as it skips through the outer ones: one level is all.
    return [part for body in _lex(cmd).inner for part in _lex(body).parts]


_ANSI_C_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_ANSI_C_NUMERIC = re.compile(r"x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)")


def _ansi_c_body(text: str, i: int) -> tuple[str, int]:
    """The value of a ``$'…'`` body starting at ``i`` (bash's escapes), and the index after its quote."""
    out: list[str] = []
    while i < len(text) and text[i] != "'":
        if text[i] != "\\" or i + 1 >= len(text):
            out.append(text[i])
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _ANSI_C_ESCAPES:
            out.append(_ANSI_C_ESCAPES[nxt])
            i += 2
            continue
        m = _ANSI_C_NUMERIC.match(text, i + 1)
        if m is None:
            out.append("\\" + nxt)
            i += 2
            continue
        hexa, u4, u8, octal, ctrl = m.groups()
        if ctrl is not None:
            out.append(chr(ord(ctrl) & 0x1F))
        else:
            code = int(hexa or u4 or u8, 16) if octal is None else int(octal, 8)
            out.append(chr(code) if code < 0x110000 else "\ufffd")
        i = m.end()
    return "".join(out), i + 1


def ansi_c_unquoted(text: str) -> str:
    """``text`` with each ``$'…'`` (bash's ANSI-C quoting) as the plain single-quoted word it stands for.

    ``$'\\x72m'`` is ``'rm'``, so a rule sees the program and the path that run, not their spelling.
    Inside double quotes ``$'`` is literal text, as in bash; ``$"…"`` (a translated string) is ``"…"``.
    """
    if "$" not in text:
        return text
    out: list[str] = []
    i, quote = 0, ""
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'":
            out.append(text[i : i + 2])
            i += 2
        elif quote:
            quote = "" if c == quote else quote
            out.append(c)
            i += 1
        elif c in "'\"":
            quote = c
            out.append(c)
            i += 1
        elif text.startswith("$'", i):
            value, i = _ansi_c_body(text, i + 2)
            out.append("'" + value.replace("'", "'\"'\"'") + "'")
        elif text.startswith('$"', i):
            i += 1  # the ``"`` opens an ordinary double-quoted string
        else:
            out.append(c)
            i += 1
    return "".join(out)


def command_words(cmd: str) -> list[str]:
    """The words of a simple command, quotes removed (``$'…'`` decoded), redirection operators as words of their own.

    Best effort (no expansion): an unparsable command falls back to whitespace splitting.

    Args:
        cmd: A simple shell command.

    Returns:
        The words, e.g. ``["cat", "<", "a b.txt"]`` for ``cat < 'a b.txt'``.
    """
    text = ansi_c_unquoted(_IPYTHON_ESCAPE.sub("", cmd, count=1).replace("\\\n", ""))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()")
    lexer.commenters = ""  # a ``#`` inside a word is text; reading more words is the safe side
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return text.split()


_SHELL_CELL_MAGIC = re.compile(r"^%%(bash|sh)\s*$")


def shell_only_cell(code: str) -> bool:
    """True for a code action that is nothing but shell: ``!cmd`` lines (comments and blank lines
    aside) or a bare ``%%bash``/``%%sh`` cell.

    Such a cell is judged by its shell parts alone, each asked on its own. A line with ``{`` (IPython
    fills ``{expr}`` from Python before the command runs), a continued line, a magic with arguments
    or any Python line makes it code, asked as a whole first.
    """
    lines = [line.strip() for line in code.splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if not lines:
        return False
    if _SHELL_CELL_MAGIC.match(lines[0]):
        first = next(line for line in code.splitlines() if line.strip())
        return first.startswith("%%")  # the magic must open the cell, unindented
    return all(
        _IPYTHON_ESCAPE.match(line) is not None and "{" not in line and not line.endswith("\\")
        for line in lines
    )
