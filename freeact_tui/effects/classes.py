"""What a code action does, as data: its effects, the classes rules allow, and the words for both.

A reading (``freeact_tui.effects.reader``) finds effects of these kinds: it reads or writes files
inside the working folder, touches paths outside it, runs programs, uses the network, reads the
environment (ambient secrets), or does something the reading cannot tell. A cell with none of them only computes.

Rules name an effect *class* (``effects:<class>``). An allow rule covers a cell whose effects all lie
within the class (``in-folder`` covers reading and writing inside the folder, and computing);
``cannot tell`` is within no class, so no effect rule ever allows code the reading does not
understand. A deny or ask rule matches a cell that has an effect of its class, or that cannot be
told (it may have it).

``describe`` and ``class_words`` are the one place the words come from: the approval dialog, the
rules screen, the headless refusal and ACP's options all say them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from freeact_tui.effects.listing import listed
from freeact_tui.reach.breadth import EFFECT_PREFIX  # a rule pattern naming an effect class


class Kind(StrEnum):
    """One kind of effect, widest last (the order of the words)."""

    READS = "reads"
    WRITES = "writes"
    OUTSIDE = "outside"
    CONTROLS = "controls"
    """Writes a name that configures git or this app, or names programs they run (``paths.PROTECTED_NAMES``:
    ``.git/hooks``, ``.git/config``, ``.freeact/``, ``.env``, …), or that configures code the kernel runs later
    (``paths.CONFIGURES_CODE``: ``matplotlibrc``, ``pytest.ini``, ``.pdbrc``, …), or code the kernel may import (the folder
    is on its ``sys.path``: ``helper.py``, ``pandas.pyc``, ``x.so``, ``x.pth``; ``paths.runs_later``):
    inside the folder, yet what runs later without a question, so no class allows it."""
    RELINKS = "relinks"
    """Changes where paths lead: moves a folder or a symlink (a relative link's target depends on where it
    is; every path through a moved folder leads elsewhere), anything but a regular file (checked when the
    cell is read, right before it runs). Code an earlier cell left behind (a ``__del__``, a callback) may
    write through the moved name later: no class allows it, and once it ran the kernel is widened
    (``ledger``)."""
    PROGRAMS = "programs"
    NETWORK = "network"
    ENVIRONMENT = "environment"
    """Reads the process environment or stored credentials (``os.environ``, ``os.getenv``, ``netrc``,
    ``keyring``; ``known.AMBIENT``): where API keys and tokens live, so no class allows it."""
    UNKNOWN = "unknown"


@dataclass(frozen=True, order=True)
class Found:
    """One effect and what it concerns (a path, a program, a module, or why it cannot be told)."""

    kind: Kind
    what: str


@dataclass(frozen=True)
class Reading:
    """Every effect found in one action (none: it only computes)."""

    found: frozenset[Found] = frozenset()

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset(f.kind for f in self.found)

    def names(self, kind: Kind) -> list[str]:
        return sorted({f.what for f in self.found if f.kind == kind})

    @property
    def effect_class(self) -> str | None:
        """The narrowest class an allow rule must name to cover this action (``None``: no class does)."""
        kinds = self.kinds
        if Kind.UNKNOWN in kinds:
            return None
        return next((name for name, allowed in ALLOWS.items() if kinds <= allowed), None)


def reading(found: Iterable[Found]) -> Reading:
    return Reading(frozenset(found))


_FOLDER = frozenset({Kind.READS, Kind.WRITES})

ALLOWS: dict[str, frozenset[Kind]] = {
    "computes": frozenset(),
    "reads": frozenset({Kind.READS}),
    "in-folder": _FOLDER,
    "outside": _FOLDER | {Kind.OUTSIDE},
    "programs": _FOLDER | {Kind.PROGRAMS},
    "network": _FOLDER | {Kind.NETWORK},
}
"""What an allow rule of each class lets run unasked (narrowest first); ``unknown`` is in none."""

MATCHES: dict[str, frozenset[Kind]] = {
    "computes": frozenset(Kind),
    "reads": frozenset({Kind.READS}),
    "in-folder": frozenset({Kind.WRITES, Kind.CONTROLS, Kind.RELINKS}),
    "outside": frozenset({Kind.OUTSIDE, Kind.RELINKS}),
    "programs": frozenset({Kind.PROGRAMS}),
    "network": frozenset({Kind.NETWORK}),
    "unknown": frozenset(),
}
"""What a deny or ask rule of each class matches (besides every action that cannot be told)."""

CLASSES: tuple[str, ...] = tuple(MATCHES)

_CLASS_WORDS = {
    "computes": "code that only computes (no files, programs or network)",
    "reads": "code that only reads inside this folder",
    "in-folder": "code that only reads and writes inside this folder",
    "outside": "code that touches paths outside this folder",
    "programs": "code that runs programs",
    "network": "code that uses the network",
    "unknown": "code whose effects cannot be told",
}
_ALLOW_WORDS = {
    "outside": "code that reads and writes inside this folder or touches paths outside it",
    "programs": "code that reads and writes inside this folder or runs programs",
    "network": "code that reads and writes inside this folder or uses the network",
}

_KIND_WORDS = {
    Kind.READS: "reads inside this folder",
    Kind.WRITES: "writes inside this folder",
    Kind.OUTSIDE: "touches paths outside this folder",
    Kind.CONTROLS: "writes tool configuration (git, this app, dot-named files) or code the kernel may run",
    Kind.RELINKS: "changes where paths lead",
    Kind.PROGRAMS: "runs programs",
    Kind.NETWORK: "uses the network",
    Kind.ENVIRONMENT: "reads the environment or stored credentials",
    Kind.UNKNOWN: "cannot tell what it does",
}


def class_of(pattern: str) -> str | None:
    """The class an ``effects:`` pattern names (``None``: not an effect pattern)."""
    if not pattern.startswith(EFFECT_PREFIX):
        return None
    return pattern[len(EFFECT_PREFIX) :].strip()


def check_pattern(kind: str, pattern: str, effect: str) -> None:
    """Refuse an effect pattern no rule can hold.

    Raises:
        ValueError: an unknown class, a rule not on code, or an allow rule for code that cannot be told.
    """
    name = class_of(pattern)
    if name is None:
        return
    if name not in MATCHES:
        raise ValueError(f"unknown effect class {name!r} (one of {', '.join(CLASSES)})")
    if kind not in ("code", "*"):
        raise ValueError(f"an effect rule is for code actions (kind code or *), not {kind}")
    if effect == "allow" and name not in ALLOWS:
        raise ValueError("code whose effects cannot be told is never allowed by its effects")


def pattern_matches(pattern: str, effect: str, found: Reading) -> bool:
    """Whether a rule ``effect`` with the effect ``pattern`` decides an action read as ``found``."""
    name = class_of(pattern)
    if name is None or name not in MATCHES:
        return False
    kinds = found.kinds
    if effect == "allow":
        return name in ALLOWS and Kind.UNKNOWN not in kinds and kinds <= ALLOWS[name]
    return Kind.UNKNOWN in kinds or bool(kinds & MATCHES[name])


def class_words(name: str, *, effect: str = "allow") -> str:
    """What a class covers, in words: ``code that only reads and writes inside this folder``."""
    if effect == "allow" and name in _ALLOW_WORDS:
        return _ALLOW_WORDS[name]
    return _CLASS_WORDS.get(name, f"code of the unknown class {name!r}")


def describe(found: Reading) -> str:
    """The reading in one line: ``writes inside this folder: a.txt, b.txt; runs programs: ls``.

    A file that is written is not also listed as read.
    """
    if not found.found:
        return "only computes (no files, programs or network)"
    written = set(found.names(Kind.WRITES))
    parts: list[str] = []
    for kind in reversed(Kind):  # widest first: what matters most leads
        names = found.names(kind)
        if kind == Kind.READS:
            names = [n for n in names if n not in written]
        if names or (kind in found.kinds and kind != Kind.READS):
            parts.append(f"{_KIND_WORDS[kind]}: {listed(names)}" if names else _KIND_WORDS[kind])
    return "; ".join(parts)


__all__ = [
    "ALLOWS",
    "CLASSES",
    "EFFECT_PREFIX",
    "MATCHES",
    "Found",
    "Kind",
    "Reading",
    "check_pattern",
    "class_of",
    "class_words",
    "describe",
    "pattern_matches",
    "reading",
]
