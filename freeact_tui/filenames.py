"""One name comparison for every check that decides on a protected, secret or code-configuring name (#39).

The class: the app's name equality differs from the file system's. A case-insensitive or normalising file
system (macOS APFS and HFS+, Windows, a mounted FAT/exFAT or ciopfs folder, ext4 with casefold) opens the
same file for ``.GIT/config`` as for ``.git/config``, for ``AGENTS.MD``, ``.ENV`` and ``.Freeact/`` as for
the names the app protects, for an NFD spelling as for its NFC one; Windows drops the dots and spaces
that end a name (``.env.`` is ``.env``). A check comparing names as Python strings allows the variant.

The mechanism: ``fold`` is the key every such check compares (the tables are folded once, the name at each
use): Unicode NFC, case folded (``casefold``: ``ß`` is ``ss``, the Kelvin sign is ``k``), NFC again, the
dots and spaces that end it dropped. It is conservative: a name that MIGHT open the same file somewhere
folds to the same key, so the variant is refused, asked or guarded like the name itself. It decides only
where more is refused; a name exempted from a check (the app's own files) is compared exactly.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable


def fold(name: str) -> str:
    """The key under which a file system may take ``name`` to be the same name (see the module docstring)."""
    key = unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())
    trimmed = key.rstrip(". ")
    return trimmed if trimmed.strip(".") else key  # ``.`` and ``..`` stay themselves


def fold_path(path: str) -> str:
    """``path`` (``/``-separated) with each of its names folded (``fold``)."""
    return "/".join(fold(part) for part in path.split("/"))


def folded(names: Iterable[str]) -> frozenset[str]:
    """The keys of ``names`` (``fold``): a table to test folded names against."""
    return frozenset(fold(name) for name in names)


def same_name(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` may name the same file (``fold``)."""
    return fold(a) == fold(b)


__all__ = ["fold", "fold_path", "folded", "same_name"]
