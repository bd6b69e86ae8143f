"""Images produced by code: an inline half-block preview under the file link."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from textual.app import App, ComposeResult

from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock
from freeact_tui.tui.widgets.image_preview import ImagePreview, load_cells


def two_colour_png(path: Path, size: tuple[int, int] = (40, 40)) -> Path:
    image = Image.new("RGB", size, (255, 0, 0))
    image.paste((0, 0, 255), (0, size[1] // 2, size[0], size[1]))
    image.save(path)
    return path


def test_preview_keeps_colours_and_fits_the_cell_budget(tmp_path: Path) -> None:
    strips = load_cells(two_colour_png(tmp_path / "a.png", (400, 400)), max_columns=20, max_rows=10)
    assert strips is not None and len(strips) == 10
    assert all(strip.cell_length == 20 for strip in strips)
    top = list(strips[0])[0].style
    bottom = list(strips[-1])[0].style
    assert top is not None and top.color is not None and top.color.triplet == (255, 0, 0)
    assert bottom is not None and bottom.bgcolor is not None and bottom.bgcolor.triplet == (0, 0, 255)


def test_unreadable_image_gives_no_preview(tmp_path: Path) -> None:
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    assert load_cells(broken) is None
    assert load_cells(tmp_path / "missing.png") is None


async def test_output_block_shows_link_and_preview(tmp_path: Path) -> None:
    png = two_colour_png(tmp_path / "plot.png")

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ExecutionOutputBlock(corr_id="c1")

    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        block = app.query_one(ExecutionOutputBlock)
        await block.finish("plotted", images=[png], is_error=False, truncated=False, result_path=None)
        await pilot.pause()
        previews = list(block.query(ImagePreview))
        assert len(previews) == 1
        assert previews[0].size.height == 20  # 40×40 px: two pixel rows a cell
