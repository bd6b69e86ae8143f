"""#40: a success repeats an earlier step when its code is the same but for comments and layout (kernel-free)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.agent.policy.progress import code_identity

STATEMENTS = st.lists(
    st.sampled_from(
        ["print('working on it')", "x = 1 + 2", "import os", "y = [i for i in range(3)]", "pass"]
    ),
    min_size=1,
    max_size=4,
)
COMMENTS = st.text(alphabet="abcxyz0123456789 #äö", max_size=20)
SPACES = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def dressed(draw: st.DrawFn, statements: list[str]) -> str:
    """``statements`` with drawn comments, trailing spaces and blank lines."""
    lines: list[str] = []
    for statement in statements:
        if draw(st.booleans()):
            lines.append(f"# {draw(COMMENTS)}")
        comment = f"  # {draw(COMMENTS)}" if draw(st.booleans()) else ""
        lines.append(f"{statement}{draw(SPACES)}{comment}")
        lines.extend([""] * draw(st.integers(0, 2)))
    return "\n".join(lines)


@given(st.data(), STATEMENTS)
def test_code_that_differs_only_in_comments_and_layout_is_the_same_step(
    data: st.DataObject, statements: list[str]
) -> None:
    assert code_identity(data.draw(dressed(statements))) == code_identity(data.draw(dressed(statements)))


@given(STATEMENTS, STATEMENTS)
def test_different_code_stays_different(first: list[str], second: list[str]) -> None:
    if first != second:
        assert code_identity("\n".join(first)) != code_identity("\n".join(second))


def test_code_that_does_not_parse_is_compared_by_its_text_with_spacing_collapsed() -> None:
    assert code_identity("!ls   -la\n") == code_identity("!ls -la")
    assert code_identity("!ls -la") != code_identity("!ls -l")
    assert code_identity("print('working on it')  # 1") == code_identity("print('working on it')  # 2")
