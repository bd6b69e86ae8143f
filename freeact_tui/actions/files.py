"""The file tools: read a text file (paged), read a media file (attached), write a file, edit one.

Each call is resolved in the kernel first (where the path really points, whether that is inside
the working directory), then approved as a typed ``FileRead``/``FileWrite``/``FileEdit`` (a write
or edit carries the unified diff the user sees), then carried out in the kernel (``file_ops``).
Before a write, ``before_write`` (the checkpoint hook, when the agent passes one) runs.
Where the front end offers ``access`` (an editor's buffers, ``file_access``), text files inside the
working directory are read and written through it instead, after the same resolving and approval.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import posixpath
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic_ai.messages import BinaryContent

from freeact_tui.actions import file_ops as ops
from freeact_tui.actions.code import ActionOutcome
from freeact_tui.actions.file_access import FileAccess, FileAccessError
from freeact_tui.actions.ports import TurnPorts
from freeact_tui.events import Decision, Phase, ToolOutput
from freeact_tui.execution.base import ExecApproval, ExecResult
from freeact_tui.store.step_record import StepRecord
from freeact_tui.toolcalls import (
    FILE_TOOLS,
    READ_MEDIA_TOOL,
    READ_TEXT_TOOL,
    WRITE_TEXT_TOOL,
    FileCall,
    FileEdit,
    FileRead,
    FileWrite,
    file_edits,
)

logger = logging.getLogger(__name__)

BeforeWrite = Callable[[FileWrite | FileEdit, str], Awaitable[object]]
"""Called with the approved write or edit and its correlation id (the agent's checkpoint hook)."""


@dataclass
class FileToolOptions:
    """What the agent gives the file tools.

    Args:
        working_dir: relative paths resolve here; paths outside it always ask.
        model_profile: the model's pydantic-ai profile (which files it accepts), read per call.
        before_write: called after a write or edit is approved and before it happens (checkpoints).
        access: the front end's file access (an editor's buffers) for text files inside ``working_dir``.
    """

    working_dir: Path
    model_profile: Callable[[], Any] = lambda: {}
    before_write: BeforeWrite | None = None
    access: FileAccess | None = None


class FileOpError(Exception):
    """A file operation failed; the message is for the model."""


class FileTools:
    """Runs the file tool calls of one agent (through its dispatcher)."""

    def __init__(
        self,
        options: FileToolOptions,
        ports: TurnPorts,
        *,
        lock: asyncio.Lock,
        timeout: float | None,
    ) -> None:
        self.options = options
        self._ask = ports.ask
        self._emit = ports.emit
        self._ids = ports.ids
        self._set_phase = ports.set_phase
        self._executor = ports.executor
        self._overflow = ports.overflow
        self._lock = lock
        self._timeout = timeout

    @staticmethod
    def owns(tool_name: str) -> bool:
        return tool_name in FILE_TOOLS

    async def run(self, tool_name: str, args: dict[str, Any], corr: str) -> ActionOutcome:
        path = args.get("path")
        if not isinstance(path, str) or not path.strip():
            return self._fail("Missing string argument `path`.", corr, malformed=True)
        try:
            if tool_name == READ_TEXT_TOOL:
                return await self._read_text(path, args, corr)
            if tool_name == READ_MEDIA_TOOL:
                return await self._read_media(path, corr)
            if tool_name == WRITE_TEXT_TOOL:
                content = args.get("content")
                if not isinstance(content, str):
                    return self._fail("Missing string argument `content`.", corr, malformed=True)
                return await self._write(path, content, None, corr)
            edits = file_edits(args)
            if edits is None:
                return self._fail(
                    "Give `old_text` and `new_text` (strings), or `edits`: a list of {old_text, new_text}.",
                    corr,
                    malformed=True,
                )
            return await self._write(path, None, edits, corr)
        except FileOpError as exc:
            return self._fail(str(exc), corr)

    # -- the tools ------------------------------------------------------------------------------

    async def _read_text(self, path: str, args: dict[str, Any], corr: str) -> ActionOutcome:
        offset, limit = args.get("offset"), args.get("limit")
        for name, value in (("offset", offset), ("limit", limit)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                return self._fail(f"`{name}` must be a positive integer (lines count from 1).", corr)
        start = offset or 1
        page = min(limit or ops.MAX_PAGE_LINES, ops.MAX_PAGE_LINES)
        probe = await self._op(corr, "load", path=path, max_bytes=0)
        unsaved = await self._unsaved(probe)
        if probe["inside"] and unsaved is None:  # outside, not even whether it exists is told unasked
            _check_file(path, probe, text=True)
        call = FileRead(path, offset, limit, resolved=probe["resolved"], outside=not probe["inside"])
        decision = await self._ask(call, corr)
        if not decision.approved:
            return _rejected(f"reading {path}", decision, _where(call))
        limits = {
            "offset": start,
            "limit": page,
            "max_chars": ops.MAX_PAGE_CHARS,
            "max_line": ops.MAX_LINE_CHARS,
        }
        editor = self._editor(probe)
        buffer = (
            unsaved if unsaved is not None else await self._editor_read(editor, probe) if editor else None
        )
        if buffer is not None:
            result = ops.page_text(buffer, **limits)
        else:
            result = await self._op(corr, "read_text", path=path, **limits)
            _check_file(path, result, text=True)
        if result.get("binary"):
            raise FileOpError(
                f"{path} is a binary file; use `{READ_MEDIA_TOOL}` for images, audio and PDFs, or code."
            )
        total, text, cut = int(result["total"]), str(result["text"]), result.get("next")
        if start > max(total, 1):
            raise FileOpError(f"{path} has {total} lines; offset {start} is past its end.")
        notes = []
        if cut is not None:
            notes.append(f"[more: lines {cut}-{total} of {total}; call again with offset={cut}]")
        if not result.get("utf8", True):
            notes.append("[not UTF-8: undecodable bytes are shown as \ufffd]")
        if result.get("long_lines"):
            notes.append(f"[{result['long_lines']} long line(s) cut at {ops.MAX_LINE_CHARS} characters]")
        if not text and total == 0:
            text = "(empty file)"
        content = text + ("\n" if notes and not text.endswith("\n") else "") + "\n".join(notes)
        kept = self._overflow(content)
        self._emit(ToolOutput(content, truncated=kept.truncated, result_path=kept.path, **self._ids(corr)))
        return ActionOutcome(kept.content, shown=_where(call))

    async def _read_media(self, path: str, corr: str) -> ActionOutcome:
        probe = await self._op(corr, "load", path=path, max_bytes=0)
        if probe["inside"]:
            _check_file(path, probe)
        call = FileRead(path, media=True, resolved=probe["resolved"], outside=not probe["inside"])
        decision = await self._ask(call, corr)
        if not decision.approved:
            return _rejected(f"reading {path}", decision, _where(call))
        result = await self._op(corr, "read_media", path=path, max_bytes=ops.MAX_MEDIA_BYTES)
        _check_file(path, result)
        media_type = str(result.get("media_type") or "")
        if not media_type or media_type.split("/")[0] not in ("image", "audio", "video", "application"):
            raise FileOpError(
                f"{path} is not a media file this tool knows (image, audio, video, PDF); "
                f"use `{READ_TEXT_TOOL}` for text."
            )
        size = int(result["size"])
        if "data" not in result:
            raise FileOpError(
                f"{path} is {size:,} bytes; files over {ops.MAX_MEDIA_BYTES:,} bytes are not attached."
            )
        refusal = ops.media_refusal(self.options.model_profile(), media_type)
        if refusal is not None:
            raise FileOpError(refusal)
        data = base64.b64decode(result["data"])
        note = f"{path} ({media_type}, {size:,} bytes) is attached."
        image = data if media_type.startswith("image/") else None
        self._emit(ToolOutput(note, image=image, **self._ids(corr)))
        attached = BinaryContent(data, media_type=media_type, identifier=path)
        return ActionOutcome(note, attachments=[attached], shown=_where(call))

    async def _write(
        self, path: str, content: str | None, edits: list[Any] | None, corr: str
    ) -> ActionOutcome:
        current = await self._op(corr, "load", path=path, max_bytes=ops.MAX_EDIT_BYTES)
        old, buffer = await self._current_text(path, current)
        new, count = _new_text(path, current, old, content, edits)
        if new == old:  # nothing to approve, nothing to write
            summary = f"{path} already has this content; nothing was written."
            self._emit(ToolOutput(summary, **self._ids(corr)))
            return ActionOutcome(summary)
        diff = ops.unified_diff(path, old, new)
        resolved, outside = current["resolved"], not current["inside"]
        call: FileWrite | FileEdit = (
            FileEdit(path, tuple(edits), diff=diff, resolved=resolved, outside=outside)
            if edits is not None
            else FileWrite(path, new, diff=diff, resolved=resolved, outside=outside)
        )
        decision = await self._ask(call, corr)
        if not decision.approved:
            what = f"{'editing' if edits is not None else 'writing'} {path}"
            return _rejected(what, decision, replace(_where(call), diff=diff))
        if self.options.before_write is not None:
            await self.options.before_write(call, corr)
        written = await self._store(path, current, buffer, new, corr)
        added, removed = ops.diff_stats(diff)
        if edits is not None:
            summary = f"Edited {path}: {count} replacement(s), +{added} -{removed} lines."
        elif old is None:
            summary = f"Created {path} ({added} lines, {written:,} bytes)."
        else:
            summary = f"Wrote {path} ({written:,} bytes), +{added} -{removed} lines."
        self._emit(ToolOutput(summary, **self._ids(corr)))
        return ActionOutcome(summary, shown=replace(_where(call), diff=diff))

    async def _current_text(self, path: str, current: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """The text a write replaces (``None`` for a new file) and the editor's buffer it came from, if any;
        refuses what the file tools do not change (a directory, a large or binary file, a pattern)."""
        if current["is_dir"]:
            raise FileOpError(f"{path} is a directory.")
        exists = bool(current["is_file"])
        if exists and "sha" not in current:
            raise FileOpError(
                f"{path} is {int(current['size']):,} bytes; the file tools change files up to "
                f"{ops.MAX_EDIT_BYTES:,} bytes (use code for larger ones)."
            )
        if current.get("binary"):
            raise FileOpError(f"{path} is not a UTF-8 text file; the file tools change only text files.")
        old: str | None = current.get("text") if exists else None
        if not exists and (pattern := _pattern(path)) is not None:
            raise FileOpError(pattern)  # writing would create a file named like the pattern
        reader = self._editor(current)
        buffer = await self._editor_read(reader, current) if reader is not None and exists else None
        if not exists:
            buffer = await self._unsaved(current)  # a new buffer the editor has not saved yet
        # what the editor shows (unsaved changes included) is what is edited
        return (buffer if buffer is not None else old), buffer

    async def _store(
        self, path: str, current: Mapping[str, Any], buffer: str | None, new: str, corr: str
    ) -> int:
        """Write ``new`` through the editor or to the disk; the number of bytes written."""
        writer = self._editor(current, write=True)
        if writer is not None:
            result = await self._editor_write(writer, path, current, buffer, new, corr)
        else:
            result = await self._op(corr, "write", path=path, content=new, expect_sha=current.get("sha"))
        if result.get("changed"):
            raise FileOpError(
                f"{path} changed while waiting for approval; nothing was written. Read it again."
            )
        if "written" not in result:
            raise FileOpError(f"{path} could not be written.")
        return int(result["written"])

    # -- the front end's file access ----------------------------------------------------------------

    def _editor(self, where: Mapping[str, Any], *, write: bool = False) -> FileAccess | None:
        """The front end's file access for a resolved path inside the working directory, if it offers it."""
        access = self.options.access
        if access is None or not where.get("inside") or where.get("is_dir"):
            return None
        return access if (access.can_write if write else access.can_read) else None

    async def _editor_read(self, access: FileAccess, where: Mapping[str, Any]) -> str | None:
        """The editor's text of a file the kernel found, or ``None`` (then the disk is read, as without it)."""
        if not where.get("is_file") or int(where.get("size", 0)) > ops.MAX_EDIT_BYTES:
            return None  # a huge file is paged from the disk, not sent whole over the protocol
        try:
            return await access.read_text(str(where["resolved"]))
        except FileAccessError as exc:
            logger.warning("the editor could not read %s (%s); reading the disk", where["resolved"], exc)
            return None

    async def _unsaved(self, where: Mapping[str, Any]) -> str | None:
        """The editor's text of a path inside the working directory that is not on the disk (a buffer it
        has not saved yet), or ``None``: then the path is missing, as without the editor."""
        access = self._editor(where)
        if access is None or where.get("is_file") or where.get("is_dir"):
            return None
        try:
            return await access.read_text(str(where["resolved"]))
        except FileAccessError:
            return None

    async def _editor_write(
        self,
        access: FileAccess,
        path: str,
        current: Mapping[str, Any],
        buffer: str | None,
        new: str,
        corr: str,
    ) -> dict[str, Any]:
        """Write ``new`` through the editor, unless the file changed since it was shown for approval."""
        resolved = str(current["resolved"])
        if buffer is not None:
            try:
                now: str | None = await access.read_text(resolved)
            except FileAccessError as exc:
                raise FileOpError(f"{path}: the editor could not read it again: {exc}") from exc
            if now != buffer:
                return {"changed": True}
        else:  # what was shown came from the disk: the disk must still hold it
            again = await self._op(corr, "load", path=path, max_bytes=ops.MAX_EDIT_BYTES)
            if (again["is_file"], again.get("sha")) != (current["is_file"], current.get("sha")):
                return {"changed": True}
        if not current["is_file"]:  # a new file: its directory is made as the kernel's write makes it
            await self._op(corr, "parent", path=path)
        try:
            await access.write_text(resolved, new)
        except FileAccessError as exc:
            raise FileOpError(f"{path} was not written: the editor refused it: {exc}") from exc
        return {"written": len(new.encode("utf-8"))}

    # -- the kernel ---------------------------------------------------------------------------------

    async def _op(self, corr: str, op: str, **args: Any) -> dict[str, Any]:
        """Run one file operation in the kernel and return its result (errors raise FileOpError)."""
        code = ops.kernel_code(op, root=str(self.options.working_dir), **args)
        executor = await self._executor()
        result: ExecResult | None = None
        async with self._lock:
            self._set_phase(corr, Phase.EXECUTION)
            try:
                async for item in executor.stream(code, timeout=self._timeout):
                    if isinstance(item, ExecApproval):  # the snippet asks for nothing; refuse anything
                        await item.reject()
                    elif isinstance(item, ExecResult):
                        result = item
            finally:
                self._set_phase(corr, None)
        if result is None or result.kernel_died or result.timed_out or result.cancelled:
            raise FileOpError("The file operation did not finish in the kernel.")
        parsed = ops.parse_result(result.text or "")
        if parsed is None:
            raise FileOpError(
                f"The file operation failed in the kernel: {(result.text or '').strip()[-500:]}"
            )
        if "error" in parsed:
            raise FileOpError(f"{args.get('path', '')}: {parsed['error']}")
        return parsed

    def _fail(self, message: str, corr: str, *, malformed: bool = False) -> ActionOutcome:
        self._emit(ToolOutput(message, is_error=True, **self._ids(corr)))
        return ActionOutcome(message, is_error=True, malformed=malformed)


def _check_file(path: str, result: Mapping[str, Any], *, text: bool = False) -> None:
    if result.get("is_dir"):
        raise FileOpError(f"{path} is a directory; list it with code (e.g. `!ls {path}`).")
    if not result.get("is_file"):
        raise FileOpError(_missing(path, result) or _absent(path, result, create=text))


def _absent(path: str, result: Mapping[str, Any], *, create: bool) -> str:
    """A missing file's error: what the folder above it holds, then (for text) how a new file is made.

    Told only "does not exist", Qwen2.5-Coder-1.5B wrote a fake tool result claiming it had created
    the file; told only how to create it, it created files nobody asked for instead of looking at
    what is there (#45). The facts come first: the names beside the missing one.
    """
    beside = result.get("beside") or {}
    names = [str(n) for n in beside.get("names") or []]
    where = str(beside.get("dir") or ".")
    folder = "The working directory" if where == "." else f"`{where}`"
    if names:
        more = int(beside.get("more") or 0)
        listed = ", ".join(f"`{n}`" for n in names) + (f" and {more} more" if more else "")
        held = f" {folder} holds {listed}."
    else:
        held = f" {folder} is empty." if beside else ""
    how = f" A new file is made with `{WRITE_TEXT_TOOL}`." if create else ""
    return f"{path} does not exist.{held}{how}"


def _pattern(path: str) -> str | None:
    """The error for a missing path whose name is a glob (``*.txt``): a pattern names many files, no tool's one.

    Told to create it, Qwen2.5-Coder-1.5B wrote a file named ``*.txt`` when asked to rename every .txt file (#30).
    """
    if not any(c in "*?[" for c in posixpath.basename(path)):
        return None
    return f"{path} is a pattern, not a file: the file tools take one file each; use code for several files."


def _missing(path: str, result: Mapping[str, Any]) -> str | None:
    """A missing path's error when files of that name are in the working directory (models mangle long paths)."""
    if (pattern := _pattern(path)) is not None:
        return pattern
    near = [str(n) for n in result.get("near") or []]
    if not near:
        return None
    named = " or ".join(f"`{n}`" for n in near)
    return f"{path} does not exist. Did you mean {named} (relative to the working directory)?"


def _where(call: FileCall) -> StepRecord:
    """Stored with the result, so a resumed session shows where the path pointed (and the warning)."""
    return StepRecord(resolved=call.resolved, outside=call.outside)


def _rejected(what: str, decision: Decision, shown: StepRecord) -> ActionOutcome:
    if decision.instruction:  # the user said what to do instead: the turn goes on
        text = f"The user rejected {what}. Instead, the user says: {decision.instruction}"
        return ActionOutcome(text, instructed=True, is_error=True, shown=shown)
    if decision.reason:
        text = f"Refused {what}: {decision.reason}. Wait for new instructions."
    else:
        text = f"The user rejected {what}. Wait for new instructions."
    return ActionOutcome(text, rejected=True, shown=shown)


__all__ = ["BeforeWrite", "FileToolOptions", "FileTools"]


def _new_text(
    path: str, current: Mapping[str, Any], old: str | None, content: str | None, edits: list[Any] | None
) -> tuple[str, int]:
    """The text a write leaves and how many replacements made it (0 for a whole write)."""
    if edits is None:
        assert content is not None
        return content, 0
    if old is None:
        raise FileOpError(
            _missing(path, current) or _absent(path, current, create=True)
        )
    try:
        return ops.apply_edits(old, edits)
    except ops.EditError as exc:
        raise FileOpError(f"{path} was not changed: {exc}") from exc
