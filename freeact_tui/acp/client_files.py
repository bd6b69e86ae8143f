"""The client's ``fs/read_text_file`` and ``fs/write_text_file`` as the file tools' ``FileAccess``.

Where the client offers them (``clientCapabilities.fs``), the file tools read and write text files in
the working directory through the editor, so the model sees and edits its buffers, unsaved changes
included. What the editor gave or took last is kept per path: the diff a write or edit shows for
approval is against that text, and a written plan file becomes a ``plan`` update.
"""

from __future__ import annotations

import asyncio
import logging

from acp.interfaces import Client
from acp.schema import FileSystemCapabilities

from freeact_tui.acp.client_requests import FS_TIMEOUT, ask_client
from freeact_tui.actions.file_access import FileAccessError

logger = logging.getLogger(__name__)


class ClientFiles:
    """One session's text files, read and written by the ACP client (an editor).

    Args:
        client: the connection to the client.
        session_id: the ACP session the requests belong to.
        fs: what the client offered in ``initialize``.
        timeout: seconds each request may wait for the client's answer (``client_requests.FS_TIMEOUT``).
    """

    def __init__(
        self, client: Client, session_id: str, fs: FileSystemCapabilities, timeout: float = FS_TIMEOUT
    ) -> None:
        self._client = client
        self._timeout = timeout
        self._session_id = session_id
        self._fs = fs
        self.texts: dict[str, str] = {}
        """The latest text of each path the editor gave (read) or took (written)."""
        self.written: dict[str, str] = {}
        """Texts written since ``take_written`` (a plan file among them becomes a ``plan`` update)."""

    @property
    def can_read(self) -> bool:
        return bool(self._fs.read_text_file)

    @property
    def can_write(self) -> bool:
        return bool(self._fs.write_text_file)

    async def read_text(self, path: str) -> str:
        try:
            response = await ask_client(
                self._client.read_text_file(session_id=self._session_id, path=path),
                self._timeout,
                f"fs/read_text_file of {path}",
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an error answer, or the client is gone
            raise FileAccessError(_reason(exc)) from exc
        self.texts[path] = response.content
        return response.content

    async def write_text(self, path: str, content: str) -> None:
        try:
            await ask_client(
                self._client.write_text_file(session_id=self._session_id, path=path, content=content),
                self._timeout,
                f"fs/write_text_file of {path}",
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise FileAccessError(_reason(exc)) from exc
        logger.info("the client wrote %s (%d characters)", path, len(content))
        self.texts[path] = content
        self.written[path] = content

    def take_written(self) -> dict[str, str]:
        taken, self.written = self.written, {}
        return taken


def _reason(exc: Exception) -> str:
    data = getattr(exc, "data", None)
    detail = data.get("details") or data.get("message") if isinstance(data, dict) else None
    return f"{exc}{f' ({detail})' if detail else ''}" or type(exc).__name__


__all__ = ["ClientFiles"]
