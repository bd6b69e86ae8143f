"""The session table of ``freeact-tui sessions list`` (no typer here: the quick path prints it too)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from freeact_tui.store.index import SessionIndex, is_uuid

_SHORT_ID = 8


def short_ids(ids: list[str]) -> dict[str, str]:
    """The shortest prefix of at least 8 characters that tells each UUID apart from the others;
    a named id (``countries-session``) is shown whole, as its name is what the user knows."""
    ordered = sorted(ids)
    shorts = {}
    for i, session_id in enumerate(ordered):
        if not is_uuid(session_id):
            shorts[session_id] = session_id
            continue
        neighbours = ordered[max(0, i - 1) : i] + ordered[i + 1 : i + 2]
        common = max((_common_prefix(session_id, n) for n in neighbours), default=0)
        shorts[session_id] = session_id[: max(_SHORT_ID, common + 1)]
    return shorts


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def when(ts: datetime) -> str:
    """A stored time as the listing shows it (local time, to the minute)."""
    return ts.astimezone().strftime("%Y-%m-%d %H:%M")


def print_sessions(root: Path, *, limit: int, show_all: bool, full_ids: bool) -> None:
    """Print the sessions under ``root`` (absolute), newest first: ``limit`` of them unless ``show_all``."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from freeact_tui.text.safe import visible

    infos = SessionIndex(root).infos(sizes=False)  # sizes are not shown: no directory scan each
    if not infos:
        print(f"No sessions in {root}", flush=True)
        return
    shown = infos if show_all else infos[:limit]
    shorts = {i.id: i.id for i in infos} if full_ids else short_ids([i.id for i in infos])
    console = Console(highlight=False, soft_wrap=False)
    # Only title and cwd give way on a narrow terminal; ids, times and counts stay whole.
    id_width = max(len(shorts[i.id]) for i in shown)
    cwd_width = min(30, max(3, *(len(i.cwd or "") for i in shown)))
    title_width = max(12, console.width - id_width - 16 - 4 - cwd_width - 8)
    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("ID", no_wrap=True, style="cyan", min_width=id_width)
    table.add_column("Title", overflow="ellipsis", no_wrap=True, max_width=title_width)
    table.add_column("Updated", no_wrap=True, min_width=16)
    table.add_column("Msgs", justify="right", no_wrap=True, min_width=4)
    table.add_column("Cwd", overflow="ellipsis", no_wrap=True, max_width=cwd_width)
    for info in shown:
        # Text, not str: a stored title is neither markup nor terminal control.
        title = Text(visible(info.title, multiline=False) + (" [damaged]" if info.damaged else ""))
        cwd = Text(visible(info.cwd or "", multiline=False))
        table.add_row(shorts[info.id], title, when(info.updated), str(info.message_count), cwd)
    console.print(table)
    if len(shown) < len(infos):
        print(f"({len(infos) - len(shown)} older sessions not shown; use --all)", flush=True)


__all__ = ["print_sessions", "short_ids", "when"]
