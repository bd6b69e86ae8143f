"""#40: a reply of whitespace, thinking written as tags or empty code fences only says nothing (kernel-free)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.agent.policy.text_protocol import said

SPACE = st.text(alphabet=" \t\n", max_size=6)
THOUGHT = st.text(alphabet="abc xyz.,0123äö\n", max_size=30)
NOTHING = st.one_of(
    SPACE,
    st.builds(lambda tag, t: f"<{tag}>{t}</{tag}>", st.sampled_from(["think", "thinking", "THINK"]), THOUGHT),
    st.builds(
        lambda lang, blank: f"```{lang}\n{blank}```",
        st.sampled_from(["", "python", "bash"]),
        st.sampled_from(["", "\n", "  \n\n"]),
    ),
)


@given(st.lists(NOTHING, max_size=5).map("\n".join))
def test_a_reply_of_nothing_but_spacing_thinking_and_empty_fences_says_nothing(text: str) -> None:
    assert said(text) == ""


@given(
    st.lists(NOTHING, max_size=3).map("\n".join),
    st.text(alphabet="abcdefg äöü", min_size=1).filter(str.strip),
)
def test_words_around_them_are_what_the_reply_says(noise: str, words: str) -> None:
    assert said(f"{noise}\n{words}\n{noise}") == words.strip()


def test_a_fence_with_code_is_kept() -> None:
    assert said("```python\nprint(1)\n```") == "```python\nprint(1)\n```"
