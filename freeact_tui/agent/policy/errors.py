"""The identity of an error across attempts: one normaliser for every rule that compares errors.

Two attempts fail "the same way" when their errors are equal after ``normalise_error``: the
exception line of a traceback, without what changes from one attempt to the next (colours,
timestamps, addresses, ids, paths, line and cell numbers, spacing). The progress bound
(``progress.py``) and the repeat guard's message (``repeat_guard.py``) both read errors through it.
"""

from __future__ import annotations

import builtins
import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
)
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX_ID = re.compile(r"(?<!\.)\b(?=[0-9a-fA-F_]*\d)(?=[0-9a-fA-F_]*[a-fA-F])[0-9a-fA-F_]{8,}\b(?![-+]\d)")
"""An id in hex; not the digits of a float (``1.0000000000000002e+16``)."""
_PATH = re.compile(
    r"(?:[A-Za-z]:)?(?:[\\/][^\s\\/'\"`:,;()<>\[\]]+)+[\\/]?|~(?:[\\/][^\s\\/'\"`:,;()<>\[\]]+)+"
)
_LINE = re.compile(r"\b(line|lines|col|column|Line|Cell In\s*\[?\d*\]?)\s*\d+(?:\s*-\s*\d+)?", re.I)
_CELL = re.compile(r"\[\d+\]")
_NUMBER = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)")
_SPACE = re.compile(r"\s+")
_TAIL_CHARS = 300
_KIND = re.compile(r"^([A-Za-z_][\w.]*)\s*:")


def error_line(text: str) -> str:
    """The line that names an error: a traceback's exception line (its last non-empty line)."""
    lines = [line.strip() for line in _ANSI.sub("", text).strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def normalise_error(text: str) -> str:
    """What identifies an error across attempts, whatever wraps it.

    Its last non-empty line (a traceback's exception line), without what changes from one attempt
    to the next: terminal colours, timestamps, addresses, ids, paths, numbers of any form (ints,
    floats, exponents, hex; also inside names such as ``var_7``), spacing.
    Idempotent: ``normalise_error(normalise_error(e)) == normalise_error(e)``.
    """
    return _stripped(error_line(text))[:_TAIL_CHARS]


def _stripped(line: str) -> str:
    """``line`` without what changes from one attempt to the next (see ``normalise_error``)."""
    line = _TIMESTAMP.sub("<time>", line)
    line = _UUID.sub("<id>", line)
    line = _PATH.sub("<path>", line)
    line = _HEX_ID.sub("<id>", line)
    line = _LINE.sub(lambda m: f"{m.group(1).split()[0].lower()} <n>", line)
    line = _CELL.sub("[<n>]", line)
    line = _NUMBER.sub("<n>", line)
    return _SPACE.sub(" ", line).strip()


def output_shape(text: str) -> str:
    """What identifies an action's whole output across attempts, normalised as errors are
    (``normalise_error``: colours, timestamps, ids, paths, numbers, spacing stripped), every line kept:
    ``step 3`` and ``step 4``, a clock, a counter, a file name with a number are one result."""
    return _stripped(_ANSI.sub("", text))


_BUILTIN_ERRORS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)


def error_shape(text: str) -> str:
    """What makes an error new to a turn: ``normalise_error`` with an exception class the code defined
    itself (any name that is not one of Python's own) as one placeholder — a model that invents a
    class each time (``class Qwzx(Exception)``) fails the same way each time."""
    line = normalise_error(text)
    found = _KIND.match(line)
    if found is None or found.group(1).rsplit(".", 1)[-1] in _BUILTIN_ERRORS:
        return line
    return "<exception>" + line[found.end(1) :]


def error_kind(text: str) -> str:
    """The kind of an error whatever its message: the exception's name (``ValueError``, ``bash``),
    else the normalised error itself. Messages a program makes up each time (a random word, a name
    the model invented) differ from attempt to attempt; the kind does not."""
    line = _ANSI.sub("", error_line(text))
    found = _KIND.match(line)
    return found.group(1) if found else normalise_error(text)


__all__ = ["error_kind", "error_line", "error_shape", "normalise_error", "output_shape"]
