"""No module of the package grows past 500 lines (#27): a module that large hides more than one job."""

from __future__ import annotations

from pathlib import Path

import freeact_tui

LIMIT = 500


def test_no_module_is_over_the_limit() -> None:
    root = Path(freeact_tui.__file__).parent
    sizes = {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in root.rglob("*.py")
    }
    assert len(sizes) > 100  # the package was found, not an empty folder
    over = {name: size for name, size in sizes.items() if size > LIMIT}
    assert over == {}, f"modules over {LIMIT} lines: {over}"
