"""Planted files for trust-boundary tests: what an attacker leaves where the app's importer might look."""

from __future__ import annotations

import importlib.util
import marshal
from pathlib import Path


def plant_pyc(source: Path, code: str) -> Path:
    """A valid bytecode cache for ``source`` as it is now (its mtime and size in the header), holding ``code``:
    the standard path finder's loader would run it instead of the source. Returns the ``.pyc`` path."""
    cache = Path(importlib.util.cache_from_source(str(source)))
    cache.parent.mkdir(parents=True, exist_ok=True)
    info = source.stat()
    header = importlib.util.MAGIC_NUMBER + b"\0\0\0\0"
    header += int(info.st_mtime).to_bytes(4, "little") + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    cache.write_bytes(header + marshal.dumps(compile(code, str(source), "exec")))
    return cache
