"""File operations as they run inside the kernel, and the host-side text work (edits, diffs).

Every file tool reads and writes through a small Python snippet run by the agent's executor, so in
``sandbox`` and ``docker`` modes the tools act inside the same boundary as code (the working
directory is bound at the same path there) and never on the host behind the sandbox's back.
The snippet runs in a fresh namespace (``exec``), so it leaves no variables in the user's kernel.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from typing import Any

from freeact_tui.toolcalls import TextEdit

MARK = "\x1efreeact-file-op:"
"""Starts the line the snippet prints its JSON result on."""

MAX_PAGE_LINES = 2000
MAX_PAGE_CHARS = 24_000
MAX_LINE_CHARS = 2000
MAX_EDIT_BYTES = 4 * 1024 * 1024
"""Larger files are not rewritten by the file tools (the diff alone would flood the dialog)."""
MAX_MEDIA_BYTES = 20 * 1024 * 1024

# The kernel side. Plain Python (stdlib only); ``ARGS`` is set by the caller.
_KERNEL_SOURCE = r"""
import base64, hashlib, json, mimetypes, os, tempfile

def _resolve(a):
    root = os.path.realpath(a["root"])
    path = os.path.expanduser(a["path"])
    full = os.path.realpath(os.path.join(root, path))
    inside = full == root or full.startswith(root.rstrip("/") + "/")
    return full, inside

def _utf8(head, whole):
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return not whole and e.start >= len(head) - 4  # a character cut at the end of the sample is fine
    return True

def _stat(a):
    full, inside = _resolve(a)
    out = {"resolved": full, "inside": inside, "exists": os.path.exists(full)}
    out["is_file"] = os.path.isfile(full)
    out["is_dir"] = os.path.isdir(full)
    if out["is_file"]:
        out["size"] = os.path.getsize(full)
    elif not out["exists"]:
        out["near"] = _near(os.path.realpath(a["root"]), full)
        out["beside"] = _beside(os.path.realpath(a["root"]), full)
    return out

def _beside(root, full):
    # What the nearest existing folder above a missing path holds (a few names), so that the model
    # sees what is there instead of guessing or creating a file nobody asked for.
    top = os.path.dirname(full)
    while top and not os.path.isdir(top):
        top = os.path.dirname(top)
    try:
        names = sorted(n for n in os.listdir(top) if not n.startswith("."))
    except OSError:
        return None
    shown = [n + ("/" if os.path.isdir(os.path.join(top, n)) else "") for n in names[:12]]
    where = os.path.relpath(top, root) if top == root or top.startswith(root.rstrip("/") + "/") else top
    return {"dir": where, "names": shown, "more": max(len(names) - 12, 0)}

def _near(root, full):
    # Files named like the missing path under the working directory (models mangle long paths).
    name, found, seen = os.path.basename(full), [], 0
    if not name:
        return found
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
        if top[len(root):].count(os.sep) >= 3:
            dirs[:] = []
        if name in files:
            found.append(os.path.relpath(os.path.join(top, name), root))
            if len(found) >= 3:
                break
        seen += 1
        if seen >= 2000:
            break
    return found

def _load(a):
    out = _stat(a)
    if out["is_file"] and out["size"] <= a["max_bytes"]:
        with open(out["resolved"], "rb") as f:
            data = f.read()
        out["sha"] = hashlib.sha256(data).hexdigest()
        try:
            out["text"] = data.decode("utf-8")
        except UnicodeDecodeError:
            out["binary"] = True
    return out

def _read_text(a):
    out = _stat(a)
    if not out["is_file"]:
        return out
    with open(out["resolved"], "rb") as f:
        head = f.read(8192)
    if b"\0" in head:
        out["binary"] = True
        return out
    out["utf8"] = _utf8(head, len(head) < 8192)
    start, limit = a["offset"], a["limit"]
    lines, chars, total, cut, long_lines = [], 0, 0, None, 0
    with open(out["resolved"], encoding="utf-8", errors="replace", newline="") as f:
        for total, line in enumerate(f, 1):
            if total < start or cut is not None:
                continue
            if len(line) > a["max_line"]:
                line = line[: a["max_line"]] + " [… line cut]\n"
                long_lines += 1
            if len(lines) >= limit or (lines and chars + len(line) > a["max_chars"]):
                cut = total
                continue
            lines.append(line)
            chars += len(line)
    out.update(text="".join(lines), total=total, next=cut, long_lines=long_lines)
    return out

def _read_media(a):
    out = _stat(a)
    if not out["is_file"]:
        return out
    out["media_type"] = mimetypes.guess_type(out["resolved"])[0] or ""
    if out["size"] <= a["max_bytes"]:
        with open(out["resolved"], "rb") as f:
            out["data"] = base64.b64encode(f.read()).decode("ascii")
    return out

def _write(a):
    out = _stat(a)
    full = out["resolved"]
    if out["is_dir"]:
        return out
    current = None
    if out["is_file"]:
        with open(full, "rb") as f:
            current = hashlib.sha256(f.read()).hexdigest()
    if current != a["expect_sha"]:
        out["changed"] = True
        return out
    parent = os.path.dirname(full)
    os.makedirs(parent, exist_ok=True)
    data = a["content"].encode("utf-8")
    mode = os.stat(full).st_mode & 0o7777 if out["is_file"] else None
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".freeact-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, full)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    out["written"] = len(data)
    return out

def _parent(a):
    out = _stat(a)
    if not out["exists"]:
        os.makedirs(os.path.dirname(out["resolved"]), exist_ok=True)
    return out

def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask

def _run():
    try:
        result = {"load": _load, "read_text": _read_text, "read_media": _read_media, "write": _write, "parent": _parent}[ARGS["op"]](ARGS)
    except OSError as e:
        result = {"error": f"{type(e).__name__}: {e.strerror or e}"}
    print(MARK + json.dumps(result))

_run()
"""


def kernel_code(op: str, **args: Any) -> str:
    """A one-line cell that runs ``op`` in a fresh namespace and prints its result after ``MARK``."""
    namespace = {"__name__": "__freeact_file_op__", "ARGS": {"op": op, **args}, "MARK": MARK}
    return f"exec({_KERNEL_SOURCE!r}, {namespace!r})"


def parse_result(text: str) -> dict[str, Any] | None:
    """The snippet's JSON result in the cell's output, or ``None`` when it printed none."""
    at = text.rfind(MARK)
    if at < 0:
        return None
    try:
        value = json.loads(text[at + len(MARK) :].split("\n", 1)[0])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
"""A line as reading a file with ``newline=""`` gives it (its own line end kept)."""


def page_text(text: str, *, offset: int, limit: int, max_chars: int, max_line: int) -> dict[str, Any]:
    """A page of ``text`` as the kernel's ``read_text`` op pages a file (same result keys).

    For text that comes from elsewhere than the kernel (an editor's buffer), so both read alike.
    """
    if "\0" in text[:8192]:
        return {"binary": True}
    lines: list[str] = []
    chars = total = long_lines = 0
    cut: int | None = None
    for total, match in enumerate(_LINE.finditer(text), 1):
        line = match.group()
        if total < offset or cut is not None:
            continue
        if len(line) > max_line:
            line = line[:max_line] + " [… line cut]\n"
            long_lines += 1
        if len(lines) >= limit or (lines and chars + len(line) > max_chars):
            cut = total
            continue
        lines.append(line)
        chars += len(line)
    return {"text": "".join(lines), "total": total, "next": cut, "long_lines": long_lines, "utf8": True}


class EditError(Exception):
    """An edit that cannot be applied; the message is for the model."""


def apply_edits(text: str, edits: Sequence[TextEdit]) -> tuple[str, int]:
    """Apply exact replacements in order; each old text must occur exactly once.

    Returns:
        The new text and how many replacements were made.

    Raises:
        EditError: an old text is empty, missing or ambiguous (nothing is applied then).
    """
    crlf = "\r\n" in text
    for n, edit in enumerate(edits, 1):
        which = f"edit {n}: " if len(edits) > 1 else ""
        old, new = edit.old_text, edit.new_text
        if not old:
            raise EditError(f"{which}old_text is empty; give the exact text to replace.")
        count = text.count(old)
        if count == 0 and crlf and "\n" in old and "\r\n" not in old:
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")  # the file has CRLF line ends
            count = text.count(old)
        if count == 0:
            raise EditError(
                f"{which}old_text was not found (it must match exactly, whitespace included); "
                "read the file again and copy the text."
            )
        if count > 1:
            raise EditError(
                f"{which}old_text occurs {count} times; include more surrounding lines so it is unique."
            )
        text = text.replace(old, new, 1)
    return text, len(edits)


def unified_diff(path: str, old: str | None, new: str) -> str:
    """A unified diff of ``old`` → ``new`` (``old`` None: a new file, all lines added)."""
    before = old.splitlines(keepends=True) if old else []
    after = new.splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, after, fromfile="/dev/null" if old is None else f"a/{path}", tofile=f"b/{path}", n=3
    )
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def diff_stats(diff: str) -> tuple[int, int]:
    """Lines added and removed in a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def media_refusal(profile: Any, media_type: str) -> str | None:
    """Why a model with this pydantic-ai profile cannot take a file of ``media_type`` (None: it can)."""
    get = profile.get if isinstance(profile, dict) else lambda k, d: getattr(profile, k, d)
    major = media_type.split("/", 1)[0]
    if major == "image":
        ok, what = get("supports_image_input", True), "images"
    elif major == "audio":
        ok, what = get("supports_audio_file_input", True), "audio"
    elif major == "video":
        ok, what = get("supports_video_input", True), "video"
    else:
        types = get("supported_document_media_types", None)
        ok = get("supports_document_input", True) and (not types or media_type in types)
        what = f"{media_type} documents"
    return None if ok else f"This model does not accept {what}; the file was not attached."


__all__ = [
    "MARK",
    "EditError",
    "apply_edits",
    "diff_stats",
    "kernel_code",
    "media_refusal",
    "page_text",
    "parse_result",
    "unified_diff",
]
