"""Round 6 (minor): a fenced block tagged with any Python-ish tag runs as code in the text protocol —
one table, ``PYTHON_LANGS`` (the tester's ```py3 block was shown, nudged once, then taken as the
answer); a ```pycon block runs its prompted lines (kernel-free)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.agent.policy.text_protocol import PYTHON_LANGS, code_blocks

STATEMENTS = st.lists(
    st.sampled_from(
        ["print('hi 3')", "x = 1 + 2", "import os", "print(os.getcwd())", "y = [i for i in range(3)]"]
    ),
    min_size=1,
    max_size=4,
)


@given(tag=st.sampled_from(sorted(PYTHON_LANGS)), upper=st.booleans(), statements=STATEMENTS)
def test_every_python_tag_runs_its_block(tag: str, upper: bool, statements: list[str]) -> None:
    code = "\n".join(statements)
    if tag == "pycon":
        code = "\n".join(f">>> {s}" for s in statements)
    text = f"Let me run it.\n```{tag.upper() if upper else tag}\n{code}\n```"
    (action,) = code_blocks(text)
    assert action.language == "python" and action.code == "\n".join(statements)


@given(statements=STATEMENTS, outputs=st.lists(st.sampled_from(["3", "hi 3", "/home/user"]), max_size=3))
def test_a_console_block_runs_its_prompted_lines_not_its_imagined_output(
    statements: list[str], outputs: list[str]
) -> None:
    lines: list[str] = []
    for i, statement in enumerate(statements):
        lines.append(f">>> {statement}")
        lines.extend(outputs[i : i + 1])
    (action,) = code_blocks("```pycon\n" + "\n".join(lines) + "\n```")
    assert action.code == "\n".join(statements)


def test_the_testers_py3_block_runs() -> None:
    (action,) = code_blocks("```py3\nprint('hi 3')\n```")
    assert action.code == "print('hi 3')"
