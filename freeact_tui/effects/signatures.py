"""The one binder: a call of a function the reading has a rule about, bound to that function's parameters.

A rule is about a parameter (``allow_pickle`` of ``numpy.load``, ``followlinks`` of ``os.walk``, ``backend``
of ``matplotlib.use``), and a parameter can be given in several spellings: by position, by keyword,
through ``*[...]`` or ``**{...}``. The reading binds every call it has a rule about to the function's
parameter list (``SIGNATURES``, checked against the real functions by the tests where they import) and
judges the BOUND parameter, so that every spelling of one binding is judged the same. An argument that
cannot be bound (``*values``, ``**options`` of values the reading does not know, more positional
arguments than the function takes, a keyword it does not have) makes the call "cannot tell".

The table is written out rather than taken from ``inspect.signature`` at run time: the kernel's
libraries may not be importable in the app, and may differ from the app's; the parameter names and
their order are stable across the versions the app supports.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    """A function's parameters: positional (in order), keyword-only, and where extra arguments go."""

    positional: tuple[str, ...]
    keyword_only: frozenset[str] = frozenset()
    rest: str | None = None
    """The ``*args`` parameter (extra positional arguments bind to it), if any."""
    keywords: str | None = None
    """The ``**kwargs`` parameter: any other keyword binds under its own name (judged by that name)."""


def parse(text: str) -> Signature:
    """``"file mmap_mode * max_header_size"``, ``"file *args allow_pickle **kwds"``: Python's own order."""
    positional: list[str] = []
    keyword_only: set[str] = set()
    rest = keywords = None
    after_star = False
    for word in text.split():
        if word.startswith("**"):
            keywords = word[2:]
        elif word.startswith("*"):
            rest, after_star = word[1:] or None, True
        elif after_star:
            keyword_only.add(word)
        else:
            positional.append(word)
    return Signature(tuple(positional), frozenset(keyword_only), rest, keywords)


_TEXT: dict[str, str] = {
    # builtins and pathlib
    "open": "file mode buffering encoding errors newline closefd opener",
    "pathlib.Path.open": "mode buffering encoding errors newline",
    # a path's reads and writes (the receiver aside), as the newest Python has them: a later keyword
    # (``recurse_symlinks``) is bound by name, and judged, whichever Python the kernel runs
    **{f"pathlib.Path.{n}": "" for n in "read_bytes is_symlink lstat iterdir absolute rmdir".split()},
    **{f"pathlib.Path.{n}": "* follow_symlinks" for n in "exists is_file is_dir stat owner group".split()},
    "pathlib.Path.read_text": "encoding errors newline",
    "pathlib.Path.glob": "pattern * case_sensitive recurse_symlinks",
    "pathlib.Path.rglob": "pattern * case_sensitive recurse_symlinks",
    "pathlib.Path.resolve": "strict",
    "pathlib.Path.samefile": "other_path",
    "pathlib.Path.write_text": "data encoding errors newline",
    "pathlib.Path.write_bytes": "data",
    "pathlib.Path.mkdir": "mode parents exist_ok",
    "pathlib.Path.touch": "mode exist_ok",
    "pathlib.Path.unlink": "missing_ok",
    "pathlib.Path.chmod": "mode * follow_symlinks",
    # numpy
    "numpy.load": "file mmap_mode allow_pickle fix_imports encoding * max_header_size",
    "numpy.loadtxt": "fname dtype comments delimiter converters skiprows usecols unpack ndmin encoding max_rows "
    "* quotechar like",
    "numpy.genfromtxt": "fname dtype comments delimiter skip_header skip_footer converters missing_values "
    "filling_values usecols names excludelist deletechars replace_space autostrip case_sensitive defaultfmt "
    "unpack usemask loose invalid_raise max_rows encoding * ndmin like",
    "numpy.fromfile": "file dtype count sep offset * like",
    "numpy.save": "file arr allow_pickle",
    "numpy.savetxt": "fname X fmt delimiter newline header footer comments encoding",
    "numpy.savez": "file *args allow_pickle **kwds",
    "numpy.savez_compressed": "file *args allow_pickle **kwds",
    # os, os.path, shutil
    "os.listdir": "path",
    "os.scandir": "path",
    "os.walk": "top topdown onerror followlinks",
    "os.stat": "path * dir_fd follow_symlinks",
    "os.lstat": "path * dir_fd",
    "os.makedirs": "name mode exist_ok",
    "os.mkdir": "path mode * dir_fd",
    "os.remove": "path * dir_fd",
    "os.unlink": "path * dir_fd",
    "os.rmdir": "path * dir_fd",
    "os.removedirs": "name",
    "os.rename": "src dst * src_dir_fd dst_dir_fd",
    "os.replace": "src dst * src_dir_fd dst_dir_fd",
    **{f"os.path.{n}": "path" for n in "exists isfile islink abspath".split()},
    **{f"os.path.{n}": "filename" for n in "getsize getmtime getctime getatime".split()},
    "os.path.isdir": "s",
    "os.path.realpath": "filename * strict",
    "shutil.copy": "src dst * follow_symlinks",
    "shutil.copy2": "src dst * follow_symlinks",
    "shutil.copyfile": "src dst * follow_symlinks",
    "shutil.move": "src dst copy_function",
    "shutil.rmtree": "path ignore_errors onerror * onexc dir_fd",
    "shutil.disk_usage": "path",
    # matplotlib
    "matplotlib.use": "backend * force",
    "matplotlib.pyplot.savefig": "fname **kwargs",
    "matplotlib.pyplot.imsave": "fname arr **kwargs",
    "matplotlib.pyplot.imread": "fname format",
    # logging
    "logging.basicConfig": "**kwargs",
}
_PANDAS_READS = {
    "csv": "filepath_or_buffer", "json": "path_or_buf", "excel": "io", "parquet": "path", "feather": "path",
    "table": "filepath_or_buffer", "fwf": "filepath_or_buffer", "orc": "path", "xml": "path_or_buffer",
    "stata": "filepath_or_buffer", "sas": "filepath_or_buffer", "spss": "path", "html": "io",
}  # fmt: skip
"""pandas' readers by the name of their first parameter (the path, by position or by that keyword)."""

SIGNATURES: dict[str, Signature] = {
    **{name: parse(text) for name, text in _TEXT.items()},
    # pandas' readers take the path first and their options by keyword (positional options are
    # deprecated or gone): anything more by position is not bound, so it cannot be told
    **{f"pandas.read_{n}": parse(f"{first} **kwargs") for n, first in _PANDAS_READS.items()},
    "pandas.read_pickle": parse("filepath_or_buffer compression storage_options"),
}
"""Every function the reading has a rule about, by its dotted name (``open`` for the builtin)."""

WRITES_ITS_ARGUMENT = parse("path_or_buf **kwargs")
"""A method on a value that writes its first argument (``df.to_csv``, ``fig.savefig``): its other
parameters differ by receiver, so they are bound by keyword only."""

MOVES_TO_ITS_ARGUMENT = parse("target")
"""``Path.rename``/``Path.replace``: the one target."""


class CannotBind(Exception):
    """An argument that cannot be bound to a parameter: what the call passes cannot be told."""


Resolve = Callable[[ast.expr], ast.expr | None]
"""The expression a name always holds in the cell (a dict or list literal it was bound to), if any."""


def expanded_positional(args: list[ast.expr], resolve: Resolve) -> list[ast.expr]:
    """The positional arguments with ``*[a, b]`` and ``*(a, b)`` (literal or a name bound to one) spread."""
    out: list[ast.expr] = []
    for arg in args:
        if not isinstance(arg, ast.Starred):
            out.append(arg)
            continue
        value = arg.value
        literal = resolve(value) if isinstance(value, ast.Name) else value
        if not isinstance(literal, ast.List | ast.Tuple) or any(
            isinstance(e, ast.Starred) for e in literal.elts
        ):
            raise CannotBind("positional arguments unpacked from a value")
        out += literal.elts
    return out


def expanded_keywords(keywords: list[ast.keyword], resolve: Resolve) -> list[tuple[str, ast.expr]]:
    """The keyword arguments with ``**{'k': v}`` (literal or a name bound to one) spread."""
    out: list[tuple[str, ast.expr]] = []
    for keyword in keywords:
        if keyword.arg is not None:
            out.append((keyword.arg, keyword.value))
            continue
        value = keyword.value
        literal = resolve(value) if isinstance(value, ast.Name) else value
        if not isinstance(literal, ast.Dict):
            raise CannotBind("keyword arguments unpacked from a value")
        for key, item in zip(literal.keys, literal.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise CannotBind("keyword arguments unpacked with names not known before it runs")
            out.append((key.value, item))
    return out


def bind_call(call: ast.Call, signature: Signature, resolve: Resolve) -> list[tuple[str, ast.expr]]:
    """``call``'s arguments as ``(parameter, value)`` pairs, in the function's terms.

    Raises:
        CannotBind: an argument that cannot be bound (the call cannot be told).
    """
    positional = signature.positional
    bound: list[tuple[str, ast.expr]] = []
    for index, value in enumerate(expanded_positional(list(call.args), resolve)):
        if index < len(positional):
            bound.append((positional[index], value))
        elif signature.rest is not None:
            bound.append((signature.rest, value))
        else:
            raise CannotBind("more positional arguments than the function takes")
    taken = {name for name, _ in bound}
    for name, value in expanded_keywords(list(call.keywords), resolve):
        known = name in positional or name in signature.keyword_only
        if name in taken or not (known or signature.keywords):
            raise CannotBind(f"an argument {name}= the function does not take once")
        taken.add(name)
        bound.append((name, value))
    return bound


__all__ = [
    "MOVES_TO_ITS_ARGUMENT",
    "SIGNATURES",
    "WRITES_ITS_ARGUMENT",
    "CannotBind",
    "Resolve",
    "Signature",
    "bind_call",
    "expanded_keywords",
    "expanded_positional",
    "parse",
]
