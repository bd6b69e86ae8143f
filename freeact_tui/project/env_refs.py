"""Project data never reads the user's environment: a ``${NAME}`` in a project value names the project's own.

The class (#39): a cloned repository's ``.env`` (``LAUNDER=${OPENAI_API_KEY}``), its ``kernel_env``
(``URL = "${DATABASE_URL}"``) or any other value it sets would, interpolated from the app's process
environment, copy the user's key or database password under a harmless name into the kernel, an MCP
server or a request, while the trust dialog shows only a name. Recognising secrets by their names cannot
close it (``DATABASE_URL``, ``SENTRY_DSN``, ``PGSERVICE`` hold credentials too).

The mechanism, one place for every reader of project values: a project file is read with no interpolation
(``files.read_env``: python-dotenv's ``interpolate=False``), and a ``${NAME}`` left in a project value
resolves only among the names the project's own ``.env`` defines (``resolve``; in the ``.env`` itself, the
names defined above it: ``resolve_env_file``). A reference to anything else (the user's environment) is
refused: the value is not applied and the refusal is named (``refusal``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

REFERENCE = re.compile(r"\$\{(?P<name>[^}:]*)(?::-(?P<default>[^}]*))?\}")
"""A reference as python-dotenv and the config's ``${VAR}`` read it (``${NAME}``, ``${NAME:-default}``)."""


@dataclass(frozen=True)
class Resolved:
    """A project value with its references resolved among the project's own names (``value``), or the
    names it reads from elsewhere (``foreign``: then ``value`` is ``None``)."""

    value: str | None
    foreign: tuple[str, ...] = ()


def references(value: str) -> list[str]:
    """The names ``value`` references (``${NAME}``), in order."""
    return [m.group("name") for m in REFERENCE.finditer(value)]


def resolve(value: str, own: Mapping[str, str | None]) -> Resolved:
    """``value`` with each ``${NAME}`` replaced by the project's own ``own[NAME]``; a name ``own`` does not
    define (with a value) makes it ``foreign``, whatever default it spells (a default is read only where
    the name is unset, which is the user's environment to say)."""
    foreign = tuple(dict.fromkeys(n for n in references(value) if own.get(n) is None))
    if foreign:
        return Resolved(None, foreign)
    return Resolved(REFERENCE.sub(lambda m: own[m.group("name")] or "", value))


def refusal(foreign: tuple[str, ...]) -> str:
    """Why a value reading ``foreign`` names is not applied (one line)."""
    names = ", ".join(f"${{{name}}}" for name in foreign)
    return f"it reads {names}, which the project's own .env does not set (your environment would give it)"


def resolve_env_file(values: Mapping[str, str | None]) -> tuple[dict[str, str | None], dict[str, str]]:
    """A ``.env`` read without interpolation, resolved as python-dotenv would but among its own names only
    (each value sees the names defined above it): the values kept, and the names refused with why."""
    kept: dict[str, str | None] = {}
    refused: dict[str, str] = {}
    for name, value in values.items():
        if value is None:
            kept[name] = None
            continue
        found = resolve(value, kept)
        if found.value is None:
            refused[name] = refusal(found.foreign)
            kept.pop(name, None)
        else:
            kept[name] = found.value
    return kept, refused


__all__ = ["REFERENCE", "Resolved", "references", "refusal", "resolve", "resolve_env_file"]
