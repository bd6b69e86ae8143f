"""An inline preview of a PNG produced by code, drawn with half blocks (works in any colour terminal)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

# Terminal cells are about twice as tall as wide; one cell shows two pixel rows (upper and lower half).
MAX_COLUMNS = 60
MAX_ROWS = 20


def load_cells(
    path: Path | bytes, max_columns: int = MAX_COLUMNS, max_rows: int = MAX_ROWS
) -> list[Strip] | None:
    """The image (a file, or its bytes) scaled to fit ``max_columns`` × ``max_rows`` cells, or None if it cannot be read."""
    try:
        from PIL import Image
    except ImportError:  # pillow is optional for the app: without it, images stay file links
        return None
    try:
        with Image.open(io.BytesIO(path) if isinstance(path, bytes) else path) as image:
            rgb = image.convert("RGB")
    except (OSError, ValueError):
        return None
    scale = min(max_columns / rgb.width, (max_rows * 2) / rgb.height, 1.0)
    width = max(1, int(rgb.width * scale))
    height = max(2, int(rgb.height * scale)) // 2 * 2
    small = rgb.resize((width, height))
    pixels = small.load()
    assert pixels is not None
    strips: list[Strip] = []
    for y in range(0, height, 2):
        segments = []
        for x in range(width):
            top = pixels[x, y]
            bottom = pixels[x, y + 1]
            assert isinstance(top, tuple) and isinstance(bottom, tuple)
            style = Style(
                color=f"rgb({top[0]},{top[1]},{top[2]})", bgcolor=f"rgb({bottom[0]},{bottom[1]},{bottom[2]})"
            )
            segments.append(Segment("▀", style))
        strips.append(Strip(segments, width))
    return strips


class ImagePreview(Widget):
    """A static preview; the file link next to it opens the full image."""

    DEFAULT_CSS = """
    ImagePreview {
        height: auto;
        width: auto;
        margin: 0 0 1 2;
    }
    """

    def __init__(self, strips: list[Strip], *, name: str | None = None) -> None:
        super().__init__(name=name)
        self._strips = strips

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return self._strips[0].cell_length if self._strips else 0

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._strips)

    def render_line(self, y: int) -> Strip:
        return self._strips[y] if 0 <= y < len(self._strips) else Strip.blank(self.size.width)
