"""THE table of characters made visible (issue #39): decided by Unicode data, shown as escapes that
neither hide, reorder nor shift anything, and never make two texts look the same.

Properties over arbitrary Unicode (every ``Cf``, C0, C1, bidi control weighted in), checked against
``wcwidth`` (the terminal's idea of a width) and ``rich.cells.cell_len`` (the app's).
"""

from __future__ import annotations

import re
import sys
import unicodedata

import wcwidth
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from freeact_tui.text.safe import (
    HIDDEN_CATEGORIES,
    INVISIBLE,
    hidden,
    one_line,
    sanitize_ansi,
    visible,
    visible_in_place,
)

FORMAT = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
NAMED = [
    *map(chr, range(0x00, 0x20)), "\x7f", *map(chr, range(0x80, 0xA0)),  # C0, DEL, C1
    *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)), "\u200e", "\u200f", "\u061c",  # bidi
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",  # zero-width
    "\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u180e", "\u2028", "\u2029", "\u00a0", "\u3000",
    "\ufe0f", "\U000e0041", "\U000e007f", "\ud800", "\ue000", "⟨", "␛",
]  # fmt: skip
hostile = st.text(
    alphabet=st.one_of(
        st.sampled_from(NAMED), st.sampled_from(FORMAT), st.characters(), st.sampled_from("ab ⟩U+")
    ),
    max_size=60,
)
ESCAPE = re.compile(r"⟨U\+([0-9A-F]{4,6})⟩")


def test_every_named_character_is_in_the_table() -> None:
    for char in NAMED:
        assert hidden(char) or char in "⟨␛", f"U+{ord(char):04X}"
    for char in FORMAT:  # every Cf of this Python's Unicode, whatever its version
        assert hidden(char), f"U+{ord(char):04X}"
    assert not any(hidden(c) for c in "a Z 0 é 你 ✓ 😀 \u0301".split(" ") for c in c)
    assert all(reason for reason in INVISIBLE.values())


def test_the_fast_path_agrees_with_the_table_everywhere() -> None:
    # visible() skips text that str.isprintable() passes: that must be the table's categories, exactly.
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert char.isprintable() == (unicodedata.category(char) not in HIDDEN_CATEGORIES or char == " "), (
            hex(code)
        )


@settings(max_examples=1500, deadline=None)
@given(hostile)
def test_the_visible_form_holds_no_character_of_the_table(text: str) -> None:
    for multiline in (True, False):
        shown = visible(text, multiline=multiline)
        kept = "\n\t" if multiline else ""
        assert not [c for c in shown if hidden(c) and c not in kept], shown
    assert not [c for c in visible_in_place(text) if hidden(c) and c != "\t"]
    assert not [c for c in sanitize_ansi(text) if hidden(c) and c not in "\n\t\r\x1b"]


# Letters, digits, CJK, Hangul syllables and emoji: ordinary text whose width terminals agree on.
ordinary = st.characters(
    codec="utf-8",
    categories=("Lu", "Ll", "Nd", "Po", "Sm"),
    max_codepoint=0x24F,
) | st.sampled_from("你好世界한국어日本語😀🎉✓→…")
drawn = st.text(alphabet=st.one_of(st.sampled_from(NAMED), st.sampled_from(FORMAT), ordinary), max_size=60)


@settings(max_examples=1500, deadline=None)
@given(drawn)
def test_the_visible_form_is_as_wide_as_the_terminal_draws_it(text: str) -> None:
    # The app lays out with rich's cell_len; a terminal draws with wcwidth's idea. With the table's
    # characters escaped they agree, so no border shifts, and nothing is left a terminal cannot draw (-1).
    shown = visible(text, multiline=False)
    assert wcwidth.wcswidth(shown) == cell_len(shown), [(c, hex(ord(c))) for c in shown]


@settings(max_examples=1500, deadline=None)
@given(hostile)
def test_each_escape_is_exactly_as_wide_as_it_is_long(text: str) -> None:
    # Over any Unicode: a character of the table adds the cells of its escape (one a character of it),
    # nothing else; every other character keeps its own width.
    shown = visible(text, multiline=False)
    escaped = [c for c in text if hidden(c) or c in "⟨" or 0x2400 <= ord(c) <= 0x2426]
    rest = "".join(c for c in text if c not in escaped)
    signs = sum(len(visible(c, multiline=False)) for c in escaped)
    assert cell_len(shown) == cell_len(rest) + signs
    assert wcwidth.wcswidth(shown) >= 0  # no control character left


def _reverse(shown: str) -> str:
    pictures = {chr(0x2400 + c): chr(c) for c in range(0x20)} | {"␡": "\x7f"}
    # the pictures first, on the text between escapes: an escape may stand for a picture itself (U+2400)
    pieces = ESCAPE.split(shown)  # text, code, text, code, …, text
    return "".join(
        chr(int(piece, 16)) if index % 2 else "".join(pictures.get(c, c) for c in piece)
        for index, piece in enumerate(pieces)
    )


@settings(max_examples=1500, deadline=None)
@given(hostile, hostile)
def test_two_different_texts_never_look_the_same(a: str, b: str) -> None:
    assert _reverse(visible(a, multiline=False)) == a
    if a != b:
        assert visible(a, multiline=False) != visible(b, multiline=False)


def test_reported_cases() -> None:
    assert visible("\u3164 = 1") == "⟨U+3164⟩ = 1"  # a Hangul filler as a Python name
    assert visible("ok\u202e)x(") == "ok⟨U+202E⟩)x("
    assert visible("a\u200bb\ufeff") == "a⟨U+200B⟩b⟨U+FEFF⟩"
    assert visible("literal ⟨U+202E⟩") == "literal ⟨U+27E8⟩U+202E⟩"  # cannot imitate an escape
    assert one_line("a\u202e  b\n c") == "a\u202e b c"  # stored as written, drawn once through visible
    assert _reverse(visible("\u2400", multiline=False)) == "\u2400"  # a picture written as such
