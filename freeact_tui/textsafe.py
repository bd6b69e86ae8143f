"""Text from models, files, MCP servers and stored sessions, made safe to put on a terminal.

Two treatments share one table of what is dangerous:

- ``visible(text)``: every control character is shown as a visible symbol (ESC as ``␛``, C1
  controls and bidi overrides as ``\\x9b``/``<U+202E>``), so what the user reads is what the text
  holds — the approval dialog must never show ``print("hi")`` for code that runs something else.
- ``sanitize_ansi(text)``: kernel output keeps its SGR colours (programs print them on purpose)
  and loses every other escape sequence (cursor moves, screen clears, titles, clipboard writes).
"""

from __future__ import annotations

import re

_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# Any other escape sequence (cursor movement, screen clearing, OSC titles/hyperlinks, …).
_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_ESC = re.compile(r"\x1b[P^_X][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]?")
# C0 controls but newline, tab, carriage return and ESC (handled by the patterns above).
_C0_DROPPED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")

# Bidi embeddings, overrides and isolates reorder what is shown ("Trojan Source").
_BIDI = (0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069)


def _visible_table(keep: str) -> dict[int, str]:
    table: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20)}  # ␀ … ␟ (ESC is ␛)
    table[0x7F] = "␡"
    table.update(
        {code: f"\\x{code:02x}" for code in range(0x80, 0xA0)}
    )  # C1: 0x9b is a CSI on some terminals
    table.update({code: f"<U+{code:04X}>" for code in (*_BIDI, 0x2028, 0x2029)})
    for char in keep:
        del table[ord(char)]
    return table


_MULTILINE = _visible_table("\n\t")
_ONE_LINE = _visible_table("")
_KERNEL = _visible_table("\n\t\r")  # a lone \r rewrites a progress line in the output log
# One character for one: an editor's cursor offsets keep pointing at the same characters.
_SAME_LENGTH = {code: sign if len(sign) == 1 else "\ufffd" for code, sign in _visible_table("\t").items()}
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f" + "".join(chr(code) for code in (*_BIDI, 0x2028, 0x2029)) + "]")


def visible(text: str, *, multiline: bool = True) -> str:
    """``text`` with every control character shown as a visible symbol, none left for the terminal.

    Args:
        text: Untrusted text (model output, a file name, a tool result, a stored session).
        multiline: Keep newlines and tabs (a code block, an answer); otherwise they are shown too.

    Returns:
        Text that cannot move the cursor, erase, set the title, write the clipboard or reorder
        itself; ``\\r\\n`` becomes ``\\n``.
    """
    if not _UNSAFE.search(text):
        return text  # the common case costs one scan
    if multiline:
        text = text.replace("\r\n", "\n")
    return text.translate(_MULTILINE if multiline else _ONE_LINE)


def visible_in_place(line: str) -> str:
    """One line of an editor with each control character replaced by one visible symbol (same length).

    C0 controls become their pictures (ESC is ``␛``); C1 controls and bidi overrides, which have
    none, become ``\ufffd``.
    """
    return line.translate(_SAME_LENGTH) if _UNSAFE.search(line) else line


def sanitize_ansi(text: str) -> str:
    """Keep text, newlines, tabs, carriage returns and SGR colour codes; drop every other control sequence.

    Args:
        text: Raw kernel output.

    Returns:
        Text that cannot move the cursor, clear the screen, set titles or ring the bell.
    """
    kept: list[str] = []
    pos = 0
    for match in _SGR.finditer(text):
        kept.append(_strip_controls(text[pos : match.start()]))
        kept.append(match.group())
        pos = match.end()
    kept.append(_strip_controls(text[pos:]))
    return "".join(kept)


def _strip_controls(text: str) -> str:
    if "\x1b" in text:
        text = _OSC.sub("", text)
        text = _CSI.sub("", text)
        text = _ESC.sub("", text)
    text = _C0_DROPPED.sub("", text)
    # What is left (C1 controls, bidi overrides) is shown, never sent.
    return text.translate(_KERNEL) if _UNSAFE.search(text) else text


def strip_sgr(text: str) -> str:
    """Plain text without colour codes."""
    return _SGR.sub("", text)


_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_MD_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_CODE = re.compile(r"(`+)(.+?)\1")
_MD_LINE_START = re.compile(r"^\s*(?:#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)", re.M)


def one_line_summary(text: str, limit: int = 80) -> str:
    """``text`` as one line of at most ``limit`` characters for a list, a title or a status line.

    Markdown marks (``**bold**``, backticks, links, headings, list bullets) are dropped, whitespace
    runs become one space, control characters are shown visibly, and a longer text is cut at a word
    boundary with "…".
    """
    plain = _MD_LINE_START.sub("", text.replace("```", ""))
    plain = _MD_LINK.sub(r"\1", plain)
    plain = _MD_CODE.sub(lambda m: m.group(2).strip(), plain)
    for _ in range(2):  # nested emphasis: ***both*** or **a *b* c**
        plain = _MD_EMPHASIS.sub(lambda m: m.group(2) or m.group(3), plain)
    plain = visible(" ".join(plain.split()), multiline=False)
    if len(plain) <= limit:
        return plain
    cut = plain[: max(limit - 1, 1)]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a word boundary not too far back; else a very long word is cut
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + "…"
