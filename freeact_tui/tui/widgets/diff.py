"""File tool calls as shown to the user: what is read or written, where, and the coloured diff."""

from __future__ import annotations

from textual.content import Content

from freeact_tui.actions.file_ops import diff_stats
from freeact_tui.text.safe import visible
from freeact_tui.toolcalls import FileCall, FileEdit, FileRead, FileWrite

DIFF_COLLAPSE_LINES = 60
"""A longer diff starts collapsed in the log (the approval dialog always shows it)."""


def diff_content(diff: str) -> Content:
    """A unified diff, coloured: added lines green, removed red, hunk headers accented."""
    parts: list[Content | tuple[str, str] | str] = []
    for line in visible(diff).splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            parts.append((line, "bold $text-muted"))
        elif line.startswith("@@"):
            parts.append((line, "$text-accent"))
        elif line.startswith("+"):
            parts.append((line, "$text-success on $success 10%"))
        elif line.startswith("-"):
            parts.append((line, "$text-error on $error 10%"))
        elif line.startswith("\\"):
            parts.append((line, "italic $text-muted"))
        else:
            parts.append(line)
    return Content.assemble(*parts).rstrip("\n") if parts else Content("(no changes)")


def file_call_header(call: FileCall) -> Content:
    """One line naming the operation and the path, and a warning when the path leaves the working dir."""
    path = visible(call.path, multiline=False)
    match call:
        case FileRead():
            what = " (media file)" if call.media else ""
            head = Content.assemble(
                ("Read ", "bold"), (path, "bold $text-accent"), f"{what}{call.line_range()}"
            )
        case FileWrite(diff=diff) | FileEdit(diff=diff):
            verb = "Edit" if isinstance(call, FileEdit) else "Write"
            if isinstance(call, FileWrite) and diff.startswith("--- /dev/null"):
                verb = "Create"
            added, removed = diff_stats(diff)
            stats = f"  +{added} -{removed}" if diff else ""
            head = Content.assemble((verb + " ", "bold"), (path, "bold $text-accent"), (stats, "$text-muted"))
        case _:
            head = Content(visible(call.display_text()))
    if call.outside:
        where = call.resolved or call.path
        head = Content.assemble(
            head,
            "\n",
            ("⚠ outside the working directory: ", "bold $text-warning"),
            (visible(where, multiline=False), "$text-warning"),
        )
    return head


def file_call_content(call: FileCall) -> Content:
    """The whole call: its header, then the diff of a write or edit (or its raw arguments, if no diff)."""
    head = file_call_header(call)
    match call:
        case FileWrite(diff=diff) | FileEdit(diff=diff) if diff:
            return Content.assemble(head, "\n", diff_content(diff))
        case FileWrite(content=content):
            return Content.assemble(head, "\n", Content(visible(content.rstrip("\n"))))
        case FileEdit(edits=edits):
            lines = [
                f"{sign}{line}\n"
                for e in edits
                for sign, text in (("-", e.old_text), ("+", e.new_text))
                for line in text.splitlines()
            ]
            return Content.assemble(head, "\n", diff_content("".join(lines)))
    return head


__all__ = ["DIFF_COLLAPSE_LINES", "diff_content", "diff_stats", "file_call_content", "file_call_header"]
