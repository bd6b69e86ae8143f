"""The ``@`` file picker on 50,000 files: index time (git and plain walk) and filter time per keystroke.

Run: ``python bench/file_picker.py`` (``--json`` prints one JSON object). Makes a temporary tree of
50,000 empty files in 500 directories (plus an ignored ``node_modules`` and ``build/``), lists it with
``git ls-files`` and with the walk, then types queries one character at a time as a user would.
Target: ≤ 16 ms p95 per keystroke (one frame), index ≤ 2 s.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)

from freeact_tui.tui.file_index import FileIndex, list_files  # noqa: E402

FILES = 50_000
QUERIES = ("widgetsconv", "src/mod42/file", "test_tui", "readme", "zzq")


def make_tree(root: Path) -> None:
    names = ("widget", "conversation", "test_tui", "model", "README", "file")
    for d in range(500):
        folder = root / "src" / f"mod{d}" / ("widgets" if d % 3 == 0 else "core")
        folder.mkdir(parents=True)
        for f in range(FILES // 500):
            (folder / f"{names[f % len(names)]}_{f}.py").touch()
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").touch()
    (root / "build").mkdir()
    (root / "build" / "out.o").touch()
    (root / ".gitignore").write_text("build/\nnode_modules/\n*.o\n")


async def main() -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root)
        started = time.perf_counter()
        walked = list_files(root)
        figures["index walk (ms)"] = round((time.perf_counter() - started) * 1000)
        await asyncio.to_thread(subprocess.run, ["git", "init", "-q"], cwd=root, check=True)
        started = time.perf_counter()
        paths = list_files(root)
        figures["index git ls-files (ms)"] = round((time.perf_counter() - started) * 1000)
        figures["files"] = len(paths)
        assert len(walked) == len(paths) == FILES + 1, (len(walked), len(paths))  # + .gitignore
    index = FileIndex(paths)
    times: list[float] = []
    for query in QUERIES:
        for end in range(1, len(query) + 1):
            started = time.perf_counter()
            index.filter(query[:end])
            times.append((time.perf_counter() - started) * 1000)
        index.filter("")
    times.sort()
    figures["keystrokes"] = len(times)
    figures["filter median (ms)"] = round(statistics.median(times), 1)
    figures["filter p95 (ms)"] = round(times[int(len(times) * 0.95) - 1], 1)
    figures["filter max (ms)"] = round(times[-1], 1)
    return figures


if __name__ == "__main__":
    run_bench(__doc__.splitlines()[0], main)  # type: ignore[union-attr]
