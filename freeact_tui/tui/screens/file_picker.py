"""The ``@`` file picker: a small dialog above the prompt listing the working directory's files.

Typing filters fuzzily, Up/Down choose, Enter picks (the path is inserted after the ``@``), Esc closes.
A query starting with ``/`` lists the skills instead; picking one dismisses with ``/<name>`` (the
screen puts it at the prompt's start, where freeact's ``/<skill> args`` invokes it).
The index is built once per app in a thread (``FileIndexCache``); until it is ready the dialog says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from freeact_tui.text.safe import visible
from freeact_tui.tui.file_index import FileIndex, list_files
from freeact_tui.tui.screens.picker import ListModal

SHOWN = 50


class FileIndexCache:
    """Lists the files of ``root`` once, in a thread; ``refresh()`` lists them again next time.

    ``use_git`` is asked each time the files are listed: git lists them only in a trusted folder (in
    one not trusted the picker walks the folder, and nothing of the folder's git config is read).
    """

    def __init__(self, root: Path, use_git: Callable[[], bool] = lambda: False) -> None:
        self.root = root
        self.use_git = use_git
        self._task: asyncio.Task[FileIndex] | None = None

    async def get(self) -> FileIndex:
        if self._task is None or (self._task.done() and self._task.exception() is not None):
            self._task = asyncio.create_task(self._build())
        return await asyncio.shield(self._task)

    def ready(self) -> FileIndex | None:
        """The index if it is built (``None`` while listing, before the first ``get()`` or after a failure)."""
        task = self._task
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result()

    async def _build(self) -> FileIndex:
        return FileIndex(await asyncio.to_thread(partial(list_files, self.root, use_git=self.use_git())))

    def refresh(self) -> None:
        if self._task is not None and self._task.done():
            self._task = None


class FilePicker(ListModal):
    """Pick a file of the working directory; dismisses with its relative path, or ``None``."""

    CSS_PATH = "file_picker.tcss"

    def __init__(
        self, cache: FileIndexCache, query: str = "", skills: list[tuple[str, str]] | None = None
    ) -> None:
        super().__init__()
        self.cache = cache
        self.skills = skills or []
        self.index: FileIndex | None = None
        self._query = query
        self.shown: str | None = None
        """The query whose matches are listed (``None`` until the index is ready)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="picker") as box:
            box.border_title = "@ file"
            box.border_subtitle = "↑↓ choose · Enter insert · Esc close"
            hint = "Type to filter files" + (" (/ for skills)" if self.skills else "")
            yield Input(self._query, placeholder=hint, id="picker-input")
            yield OptionList(id="picker-list")
            yield Static("Indexing files…", id="picker-status")

    async def on_mount(self) -> None:
        self.query_one(Input).focus()
        self.run_worker(self._load(), exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        try:
            self.index = await self.cache.get()
        except Exception as exc:  # an unreadable directory is said, not a crash
            self.query_one("#picker-status", Static).update(f"Cannot list files: {exc}")
            return
        self._show(self.query_one(Input).value)

    @on(Input.Changed, "#picker-input")
    def _changed(self, event: Input.Changed) -> None:
        self._show(event.value)

    def _show(self, query: str) -> None:
        """Filter in a thread (the UI keeps taking keys); only the newest query's result is shown."""
        if query.startswith("/") and self.skills:
            self._query = query
            self._show_skills(query[1:].strip().lower())
            return
        if self.index is None:
            return
        self._query = query
        self.run_worker(
            partial(self._filter, self.index, query), thread=True, group="filter", exit_on_error=False
        )

    def _filter(self, index: FileIndex, query: str) -> None:
        found = index.filter(query, SHOWN)
        matched = index.matched
        if self.is_attached:
            self.app.call_from_thread(self._apply, index, query, found, matched)

    def _apply(self, index: FileIndex, query: str, found: list[str], matched: int) -> None:
        if query != self._query or not self.is_attached:
            return
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(Content(visible(path, multiline=False)), id=path) for path in found])
        if found:
            options.highlighted = 0
        if not found:
            status = (
                f"No file matches {visible(query, multiline=False)!r}" if query.strip() else "No files here"
            )
        elif query.strip():
            status = f"{matched:,} of {len(index):,} files"
        else:
            status = f"{len(index):,} files"
        self.query_one("#picker-status", Static).update(status)
        self.shown = query

    def _show_skills(self, query: str) -> None:
        found = [(n, d) for n, d in self.skills if query in n.lower()]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(f"/{n}  {d[:60]}", id=f"/{n}") for n, d in found])
        if found:
            options.highlighted = 0
        self.query_one("#picker-status", Static).update(
            f"{len(found)} of {len(self.skills)} skills · Enter: /<skill> at the prompt's start"
        )
        self.shown = "/" + query

    @on(Input.Submitted, "#picker-input")
    def _submitted(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return
        self.dismiss(options.get_option_at_index(options.highlighted).id)
