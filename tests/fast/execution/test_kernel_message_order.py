"""The shell channel's reply and the iopub channel's output are not ordered against each other.

A cell's text must not depend on where the `execute_reply` falls among the iopub messages (seen in CI:
the reply's one-line error summary came first and the output after it).
"""

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.execution.kernel.client import _Cell

IOPUB: list[tuple[str, dict[str, Any]]] = [
    ("status", {"execution_state": "busy"}),
    ("stream", {"name": "stdout", "text": "partial\n"}),
    ("error", {"ename": "ZeroDivisionError", "evalue": "division by zero",
               "traceback": ["Traceback", "ZeroDivisionError: division by zero"]}),
    ("status", {"execution_state": "idle"}),
]
REPLY = ("execute_reply", {"status": "error", "ename": "ZeroDivisionError", "evalue": "division by zero"})


def _feed(messages: list[tuple[str, dict[str, Any]]], tmp: Path) -> tuple[str, int, str | None]:
    cell = _Cell(lambda _e: None, tmp)
    done_at = -1
    for i, (kind, content) in enumerate(messages):
        if cell.feed(kind, content) and done_at < 0:
            done_at = i
    return cell.text(), done_at, cell.error


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=len(IOPUB)))
def test_the_reply_anywhere_among_the_output_gives_the_same_text(at: int) -> None:
    messages = [*IOPUB[:at], REPLY, *IOPUB[at:]]
    text, done_at, error = _feed(messages, Path("/nonexistent-images"))
    assert text.startswith("partial\n"), text
    assert text.count("ZeroDivisionError: division by zero") == 1
    assert error is not None and error.startswith("Traceback")
    assert done_at == len(messages) - 1  # complete only once both the reply and idle came


def test_a_reply_error_without_an_error_message_still_says_what_failed() -> None:
    messages = [IOPUB[0], IOPUB[1], REPLY, IOPUB[3]]
    text, done_at, error = _feed(messages, Path("/nonexistent-images"))
    assert text == "partial\nZeroDivisionError: division by zero"
    assert error == "ZeroDivisionError: division by zero" and done_at == 3
