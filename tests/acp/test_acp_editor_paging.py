"""A file read from an editor's buffer is paged exactly as the kernel pages the same file on disk.

The file tools page a buffer the ACP client gave on the host (``file_ops.page_text``) and a file on
disk in the kernel (the ``read_text`` op); the model must not be able to tell which it got.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from freeact_tui.actions import file_ops as ops
from freeact_tui.execution.base import ExecResult
from freeact_tui.execution.kernel.executor import KernelExecutor

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

TEXTS = {
    "plain": "one\ntwo\nthree\n",
    "no final newline": "one\ntwo",
    "crlf and cr": "a\r\nb\rc\n\nd",
    "empty": "",
    "long line": "short\n" + "x" * 50 + "\nafter\n",
    "many lines": "".join(f"line {n}\n" for n in range(1, 40)),
    "unicode": "äöü\n€ and \u2028 inside\nend\n",
}
PAGES = [
    {"offset": 1, "limit": 2000, "max_chars": 24_000, "max_line": 2000},
    {"offset": 2, "limit": 3, "max_chars": 24_000, "max_line": 2000},
    {"offset": 1, "limit": 2000, "max_chars": 30, "max_line": 20},
    {"offset": 10, "limit": 5, "max_chars": 24_000, "max_line": 2000},
]


async def kernel_page(
    executor: KernelExecutor, root: Path, name: str, page: dict[str, int]
) -> dict[str, Any]:
    code = ops.kernel_code("read_text", root=str(root), path=name, **page)
    result = None
    async for item in executor.stream(code, timeout=30):
        if isinstance(item, ExecResult):
            result = item
    assert result is not None
    parsed = ops.parse_result(result.text or "")
    assert parsed is not None, result.text
    return parsed


@pytest.mark.parametrize("page", PAGES, ids=lambda p: "-".join(str(v) for v in p.values()))
async def test_a_buffer_pages_like_the_same_file_in_the_kernel(
    executor: KernelExecutor, tmp_path: Path, page: dict[str, int]
) -> None:
    for n, (what, text) in enumerate(TEXTS.items()):
        name = f"file{n}.txt"
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        on_disk = await kernel_page(executor, tmp_path, name, page)
        from_buffer = ops.page_text(text, **page)
        keys = ("text", "total", "next", "long_lines", "utf8")
        assert {k: from_buffer[k] for k in keys} == {k: on_disk[k] for k in keys}, what


async def test_a_buffer_with_nul_bytes_is_binary() -> None:
    assert ops.page_text("a\0b", offset=1, limit=10, max_chars=100, max_line=100) == {"binary": True}
