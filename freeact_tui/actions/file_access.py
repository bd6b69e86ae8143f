"""Where the file tools read and write text files when not in the kernel: an editor's open buffers.

A front end that can reach the user's editor (ACP's ``fs/read_text_file`` / ``fs/write_text_file``)
hands the agent a ``FileAccess``; the file tools then read and write text files inside the working
directory through it, so the model sees and edits what the editor shows, unsaved changes included.
The kernel still resolves every path first (where it points, whether it is inside the working
directory), approvals and checkpoints apply as before, and anything else (media files, paths
outside the working directory, a front end without it) goes through the kernel as always.
"""

from __future__ import annotations

from typing import Protocol


class FileAccessError(Exception):
    """The front end could not read or write the file; the message says why (for the model)."""


class FileAccess(Protocol):
    """Text files read and written by the front end (absolute, resolved paths)."""

    @property
    def can_read(self) -> bool:
        """Whether ``read_text`` may be called."""
        ...

    @property
    def can_write(self) -> bool:
        """Whether ``write_text`` may be called."""
        ...

    async def read_text(self, path: str) -> str:
        """The whole text of ``path`` as the editor has it (its unsaved buffer, else the file).

        Raises:
            FileAccessError: it could not be read.
        """
        ...

    async def write_text(self, path: str, content: str) -> None:
        """Replace the text of ``path`` (created when missing) with ``content``.

        Raises:
            FileAccessError: it could not be written.
        """
        ...


__all__ = ["FileAccess", "FileAccessError"]
