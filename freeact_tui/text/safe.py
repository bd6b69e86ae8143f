"""Text from models, files, MCP servers and stored sessions, made safe to put on a terminal.

THE table of characters made visible is here, and only here: ``hidden(char)`` says whether a
character is one the user could not see, or that would move, reorder or shift what is drawn. It is
decided by Unicode data (``unicodedata.category``), so that a new Unicode version is covered:

- ``Cc`` controls (C0, DEL, C1): move the cursor, erase, set titles, write the clipboard;
- ``Cf`` format characters: bidi embeddings/overrides/isolates/marks (Trojan Source), zero-width
  space/joiners, word joiner, BOM, invisible operators, tag characters, soft hyphen, …;
- ``Zl``/``Zp`` line and paragraph separators; ``Zs`` spaces other than the ASCII space (they look
  like a space and are not one to Python or a shell);
- ``Cs`` lone surrogates (cannot be written), ``Co`` private use and ``Cn`` unassigned code points
  (their look and width are the font's guess);

plus ``INVISIBLE``, a short list of characters Unicode classes as letters, marks or symbols that
draw nothing (each with its reason).

Each is shown as an escape that names it, ``⟨U+202E⟩``; C0 controls and DEL as their control
pictures (ESC as ``␛``). A literal ``⟨`` or control picture in the text is escaped too, so that two
different texts never look the same. Three treatments share the table:

- ``visible(text)``: what the user reads is what the text holds — the approval dialog must never
  show ``print("hi")`` for code that runs something else;
- ``visible_in_place(line)``: one character for one, for an editor's cursor;
- ``sanitize_ansi(text)``: kernel output keeps its SGR colours (programs print them on purpose)
  and loses every other escape sequence (cursor moves, screen clears, titles, clipboard writes).
"""

from __future__ import annotations

import re
import unicodedata

_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# Any other escape sequence (cursor movement, screen clearing, OSC titles/hyperlinks, …).
_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_ESC = re.compile(r"\x1b[P^_X][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]?")
# C0 controls but newline, tab, carriage return and ESC (handled by the patterns above).
_C0_DROPPED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
"""Unicode general categories made visible (``Zs`` but the ASCII space)."""


def _span(first: int, last: int, reason: str) -> dict[int, str]:
    return dict.fromkeys(range(first, last + 1), reason)


INVISIBLE: dict[int, str] = {
    0x115F: "Hangul choseong filler: a letter (Lo) that draws nothing, valid in a Python name",
    0x1160: "Hangul jungseong filler: a letter (Lo) that draws nothing",
    0x3164: "Hangul filler: a letter (Lo) that draws nothing, valid in a Python name",
    0xFFA0: "halfwidth Hangul filler: a letter (Lo) that draws nothing, valid in a Python name",
    0x2800: "braille pattern blank: a symbol (So) drawn as a space",
    0x034F: "combining grapheme joiner: a mark (Mn) that draws nothing",
    0x17B4: "Khmer vowel inherent AQ: a mark (Mn) that draws nothing",
    0x17B5: "Khmer vowel inherent AA: a mark (Mn) that draws nothing",
    **_span(0x180B, 0x180F, "Mongolian variation selectors and vowel separator: draw nothing"),
    **_span(
        0xFE00, 0xFE0F, "variation selectors: draw nothing; the width of what they follow varies by terminal"
    ),
    **_span(0xE0100, 0xE01EF, "variation selectors supplement: draw nothing"),
    **_span(
        0x1F1E6, 0x1F1FF, "regional indicators: one or two cells by terminal and neighbour (borders shift)"
    ),
    **_span(0x1F3FB, 0x1F3FF, "emoji skin-tone modifiers: no cell or two by terminal and neighbour"),
}
"""Characters made visible that their category does not cover, each with the reason."""

IMITATIONS: frozenset[int] = frozenset({0x27E8, *range(0x2400, 0x2427)})
"""Drawn safely, yet escaped too: the escapes' own opening bracket ``⟨`` and the control pictures
(``␛`` for ESC, …), so that no text can imitate the escape of another (two texts never look the same)."""


def hidden(char: str) -> bool:
    """Whether ``char`` is in the table: shown as an escape, never drawn as it is."""
    code = ord(char)
    if code == 0x20:
        return False
    return code in INVISIBLE or unicodedata.category(char) in HIDDEN_CATEGORIES


def escape_of(char: str) -> str:
    """The visible form of one character of the table: a control picture (C0, DEL) or ``⟨U+XXXX⟩``."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟ (ESC is ␛)
    if code == 0x7F:
        return "␡"
    return f"⟨U+{code:04X}⟩"


class _Table(dict[int, "str | int"]):
    """A ``str.translate`` table over all of Unicode, filled as characters are met."""

    def __init__(self, keep: str, *, one_char: bool = False) -> None:
        super().__init__()
        self.keep = frozenset(ord(c) for c in keep)
        self.one_char = one_char

    def __missing__(self, code: int) -> str | int:
        char = chr(code)
        imitation = code in IMITATIONS and not self.one_char  # one for one: nothing can imitate an escape
        if code in self.keep or not (hidden(char) or imitation):
            value: str | int = code
        else:
            value = escape_of(char)
            if self.one_char and len(value) != 1:
                value = "\ufffd"
        self[code] = value
        return value


_MULTILINE = _Table("\n\t")
_ONE_LINE = _Table("")
_KERNEL = _Table("\n\t\r")  # a lone \r rewrites a progress line in the output log
# One character for one: an editor's cursor offsets keep pointing at the same characters.
_SAME_LENGTH = _Table("\t", one_char=True)


# The fast path: printable text (no category of the table) without any of the listed characters.
def _ranges(codes: list[int]) -> str:
    """A regular-expression character class of ``codes`` as ranges (a long list of single characters is slow)."""
    spans: list[list[int]] = []
    for code in codes:
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return (
        "[" + "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in spans) + "]"
    )


_LISTED = re.compile(_ranges(sorted({*INVISIBLE, *IMITATIONS})))


def _plain(text: str, keep: str = "") -> bool:
    """Whether ``text`` holds no character of the table (but those in ``keep``): one C scan each.

    ``str.isprintable`` is false exactly for the categories of ``HIDDEN_CATEGORIES`` (but the space).
    """
    printable = text.isprintable()
    if not printable and keep:
        stripped = text
        for char in keep:
            stripped = stripped.replace(char, "")
        printable = stripped.isprintable()
    return printable and (text.isascii() or _LISTED.search(text) is None)  # none listed is ASCII


def visible(text: str, *, multiline: bool = True) -> str:
    """``text`` with every character of the table shown as a visible escape, none left for the terminal.

    Args:
        text: Untrusted text (model output, a file name, a tool result, a stored session).
        multiline: Keep newlines and tabs (a code block, an answer); otherwise they are shown too.

    Returns:
        Text that cannot move the cursor, erase, set the title, write the clipboard, reorder or hide
        itself; ``\\r\\n`` becomes ``\\n``.
    """
    if multiline:
        if _plain(text, "\n\t"):
            return text  # the common case costs two scans
        return text.replace("\r\n", "\n").translate(_MULTILINE)
    return text if _plain(text) else text.translate(_ONE_LINE)


def visible_in_place(line: str) -> str:
    """One line of an editor with each character of the table replaced by one visible symbol (same length).

    C0 controls become their pictures (ESC is ``␛``); the others, which have none, become ``\ufffd``.
    """
    return line if _plain(line, "\t") else line.translate(_SAME_LENGTH)


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
    # What is left (C1 controls, bidi overrides, invisible characters) is shown, never sent.
    return text if _plain(text, "\n\t\r") else text.translate(_KERNEL)


def strip_sgr(text: str) -> str:
    """Plain text without colour codes."""
    return _SGR.sub("", text)


_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_MD_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_CODE = re.compile(r"(`+)(.+?)\1")
_MD_LINE_START = re.compile(r"^\s*(?:#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)", re.M)


def one_line(text: str, limit: int = 80) -> str:
    """``text`` as one plain line of at most ``limit`` characters, NOT made visible: for what is stored
    (a session's title) and drawn later, through ``visible``, once (``visible`` is not idempotent).

    Markdown marks (``**bold**``, backticks, links, headings, list bullets) are dropped, whitespace
    runs become one space, and a longer text is cut at a word boundary with "…".
    """
    return _cut(_plain_line(text), limit)


def one_line_summary(text: str, limit: int = 80) -> str:
    """``text`` as one line of at most ``limit`` characters for a list, a title or a status line,
    drawn now: like ``one_line``, with every character of the table shown."""
    return _cut(visible(_plain_line(text), multiline=False), limit)


def _plain_line(text: str) -> str:
    plain = _MD_LINE_START.sub("", text.replace("```", ""))
    plain = _MD_LINK.sub(r"\1", plain)
    plain = _MD_CODE.sub(lambda m: m.group(2).strip(), plain)
    for _ in range(2):  # nested emphasis: ***both*** or **a *b* c**
        plain = _MD_EMPHASIS.sub(lambda m: m.group(2) or m.group(3), plain)
    return " ".join(plain.split())


def _cut(plain: str, limit: int) -> str:
    if len(plain) <= limit:
        return plain
    cut = plain[: max(limit - 1, 1)]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a word boundary not too far back; else a very long word is cut
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + "…"
