"""Colour themes from TOML files: ours (``themes/*.toml`` in the package) and the user's.

Public interface:

- ``register_themes(app) -> list[str]``: registers the bundled themes, then the user's
  (``paths.user_themes_dir()/*.toml``; a user theme may replace a bundled one of the same name),
  and returns warning messages, one per file that was skipped. Never raises for a bad file.
  Textual's built-in themes stay available. Call it in ``App.__init__`` or ``on_mount`` before
  setting ``app.theme``.
- ``load_theme_file(path) -> Theme`` (raises ``ThemeError``) and ``load_theme_dir(dir)``.
- ``DEFAULT_THEME`` (``"freeact-dark"``) and ``BUNDLED_THEMES`` (names shipped with the package).

Persist a choice with ``freeact_tui.project.config.save_user_setting("theme", name)``.

A theme file holds the fields of ``textual.theme.Theme``: ``name`` (defaults to the file name),
``primary`` (required), ``secondary``, ``accent``, ``foreground``, ``background``, ``surface``,
``panel``, ``boost``, ``success``, ``warning``, ``error``, ``dark``, ``luminosity_spread``,
``text_alpha``, ``ansi``, and a ``[variables]`` table of Textual design variables.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.css.constants import VALID_STYLE_FLAGS
from textual.theme import Theme

from freeact_tui.project import paths

DEFAULT_THEME = "freeact-dark"
BUNDLED_THEMES = ("freeact-dark", "freeact-light")

_COLOUR_FIELDS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
    "success",
    "warning",
    "error",
)
_FLOAT_FIELDS = ("luminosity_spread", "text_alpha")
_BOOL_FIELDS = ("dark", "ansi")
_KNOWN = {"name", "variables", *_COLOUR_FIELDS, *_FLOAT_FIELDS, *_BOOL_FIELDS}


class ThemeError(Exception):
    """A theme file cannot be used; ``str(error)`` names the file and the problem."""


def _is_colour(token: str) -> bool:
    try:
        Color.parse(token)
    except ColorParseError:
        return False
    return True


def _valid_variable(value: str) -> bool:
    """Design variables hold colours (``#abc 35%``, ``auto 60%``) or text styles (``bold reverse``)."""
    tokens = value.split()
    if not tokens:
        return False
    for token in tokens:
        percent = token.endswith("%") and token[:-1].replace(".", "", 1).isdigit()
        if not (percent or token == "auto" or token in VALID_STYLE_FLAGS or _is_colour(token)):
            return False
    return True


def _colour(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _is_colour(value):
        raise ThemeError(f"{where} is not a colour (got {value!r})")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ThemeError(f"{where} must be true or false")
    return value


def _fraction(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ThemeError(f"{where} must be a number between 0 and 1")
    return float(value)


# Each typed field of a theme file → its check and conversion (``where`` names the field in the error).
_FIELD_VALUE: dict[str, Callable[[Any, str], Any]] = {
    **dict.fromkeys(_COLOUR_FIELDS, _colour),
    **dict.fromkeys(_BOOL_FIELDS, _flag),
    **dict.fromkeys(_FLOAT_FIELDS, _fraction),
}


def _theme_from_data(data: dict[str, Any], source: Path) -> Theme:
    unknown = sorted(set(data) - _KNOWN)
    if unknown:
        raise ThemeError(f"Theme {source}: unknown key(s) {', '.join(unknown)}")
    name = data.get("name", source.stem)
    if not isinstance(name, str) or not name.strip():
        raise ThemeError(f"Theme {source}: `name` must be a non-empty string")
    if "primary" not in data:
        raise ThemeError(f"Theme {source}: `primary` is required")
    kwargs: dict[str, Any] = {"name": name.strip()}
    for key, value in data.items():
        if key in _FIELD_VALUE:
            kwargs[key] = _FIELD_VALUE[key](value, f"Theme {source}: `{key}`")
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ThemeError(f"Theme {source}: `variables` must be a table")
    for key, value in variables.items():
        if not isinstance(value, str) or not _valid_variable(value):
            raise ThemeError(f"Theme {source}: variable `{key}` has an invalid value {value!r}")
    kwargs["variables"] = dict(variables)
    theme = Theme(**kwargs)
    try:
        theme.to_color_system().generate()
    except Exception as exc:  # any failure here would otherwise surface when the theme is applied
        raise ThemeError(f"Theme {source}: {exc}") from exc
    return theme


def load_theme_file(path: Path) -> Theme:
    """Read one theme file.

    Args:
        path: A ``.toml`` theme file.

    Returns:
        The theme, validated (its colours parse and its colour system generates).

    Raises:
        ThemeError: the file is unreadable, not TOML, or has a missing/unknown key or a bad value.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ThemeError(f"Theme {path} cannot be read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ThemeError(f"Theme {path} is not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ThemeError(f"Theme {path} is not valid TOML: {exc}") from exc
    return _theme_from_data(data, path)


def load_theme_dir(directory: Path) -> tuple[list[Theme], list[str]]:
    """Read every ``*.toml`` theme in a directory (sorted by file name).

    Args:
        directory: The directory; a missing one yields no themes.

    Returns:
        The themes that loaded, and one warning per file that was skipped.
    """
    if not directory.is_dir():
        return [], []
    themes: list[Theme] = []
    warnings: list[str] = []
    for path in sorted(directory.glob("*.toml")):
        try:
            themes.append(load_theme_file(path))
        except ThemeError as exc:
            warnings.append(f"{exc} — skipped")
    return themes, warnings


def register_themes(app: App[Any]) -> list[str]:
    """Register our bundled themes, then the user's, with ``app``.

    Args:
        app: The Textual app.

    Returns:
        Warnings about theme files that were skipped (empty when all loaded).
    """
    warnings: list[str] = []
    for directory in (paths.bundled_themes_dir(), paths.user_themes_dir()):
        themes, problems = load_theme_dir(directory)
        warnings.extend(problems)
        for theme in themes:
            app.register_theme(theme)
    return warnings


class ConfiguredTheme:
    """The config's theme on ``app``: registered and chosen before anything is mounted (chosen in
    ``on_mount``, it restyled every widget of the first screen again, a frame after drawing it in the
    default theme), and kept in the user config when the user picks another (``follow``).

    Args:
        app: The app, in its ``__init__``.
        name: The config's theme.
    """

    def __init__(self, app: App[Any], name: str) -> None:
        self.app = app
        self.saved = name
        self.warnings = register_themes(app)
        """What to tell the user once the app runs: skipped theme files, an unknown theme."""
        if name in app.available_themes:
            app.theme = name
        else:
            names = ", ".join(sorted(app.available_themes))
            self.warnings.append(f"Unknown theme {name!r} in the config; using {app.theme!r}. Available: {names}")

    def follow(self) -> None:
        """From now on, keep the user's choice (the palette's too) in the user config."""
        self.app.theme_changed_signal.subscribe(self.app, self._save)

    def _save(self, theme: Theme) -> None:
        if theme.name == self.saved:
            return
        self.saved = theme.name
        from freeact_tui.project.config import save_user_setting  # pydantic: not for the first frame

        try:
            save_user_setting("theme", theme.name)
        except OSError as exc:
            self.app.notify(f"Theme not saved: {exc}", severity="warning")


__all__ = [
    "BUNDLED_THEMES",
    "DEFAULT_THEME",
    "ConfiguredTheme",
    "ThemeError",
    "load_theme_dir",
    "load_theme_file",
    "register_themes",
]
