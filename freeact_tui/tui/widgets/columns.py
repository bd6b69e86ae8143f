"""Two columns of text, the second wrapping in its own column: key tables that fit any width.

A table drawn as padded lines (``key.ljust(width) + "   " + text``) wraps its long texts back under the
key column on a narrow terminal (at 80 columns the help's commands read ``from`` and ``block found)`` on
lines of their own). ``Columns`` lays the cells out in a grid instead: the first column as wide as the
given width, the second taking the rest and wrapping inside it, so a row is a row at any width.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.containers import Grid
from textual.content import Content
from textual.widgets import Static

GAP = 3
"""Cells between the key column and the text column."""


class Columns(Grid):
    """``(key, text)`` rows: keys in a column ``key_width`` wide, texts wrapping beside them."""

    DEFAULT_CSS = """
    Columns {
        grid-size: 2;
        grid-rows: auto;
        height: auto;
    }
    Columns > .columns-key { width: 100%; }
    Columns > .columns-text { width: 100%; }
    """

    def __init__(
        self, rows: Sequence[tuple[str, str]], key_width: int, key_style: str, *, gap: int = GAP, **kwargs: object
    ) -> None:
        cells = []
        for key, text in rows:
            cells += [
                Static(Content.styled(key, key_style), classes="columns-key"),
                Static(Content(text), classes="columns-text"),
            ]
        super().__init__(*cells, **kwargs)  # type: ignore[arg-type]
        self.styles.grid_columns = f"{key_width + gap} 1fr"


__all__ = ["GAP", "Columns"]
