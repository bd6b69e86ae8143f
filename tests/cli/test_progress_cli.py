"""#40's table: a server that keeps making one mistake costs a few requests, in every protocol.

The real CLI (``freeact-tui run``, headless, a real kernel) against the fake OpenAI-compatible server
through ``--base-url``: the default protocol (``auto`` for a ``--base-url`` server), ``tools`` and
``text``. Each row counts the requests the server received and the exit code (4: ``stalled``, the
turn made no progress ``max_steps_without_progress`` steps in a row). Before #40 the default protocol
spent the whole budget of 100 requests on the first three rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, ReplySpec, ToolCallReply
from tests.helpers import cli, fake_args
from tests.scripted import CODE_TOOL

pytestmark = pytest.mark.kernel

BROKEN_JSON = Reply(tool_calls=[ToolCallReply(CODE_TOOL, '{"code": "pri')])
UNKNOWN_TOOL = Reply(tool_calls=[ToolCallReply("no_such_tool", {"x": 1})])
SAME_FAILURE = Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": "1 / 0"})])
SAME_FAILING_BLOCK = Reply("```python\n1 / 0\n```")
EMPTY = Reply("")
WHITESPACE = Reply("   \n\t  \n")
THINK_ONLY = Reply("<think>I should run some code now.</think>")
EMPTY_FENCE = Reply("```python\n```")


def two_failures_in_turn(request: RecordedRequest) -> Reply:
    code = "1 / 0" if request.index % 2 else "import no_such_module_40"
    return Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code})])


def two_failing_blocks_in_turn(request: RecordedRequest) -> Reply:
    code = "1 / 0" if request.index % 2 else "import no_such_module_40"
    return Reply(f"```python\n{code}\n```")


def numbered_failure(request: RecordedRequest) -> Reply:
    """The same failure with a new number each time: a counter and a variable's name."""
    n = request.index
    return Reply(
        tool_calls=[
            ToolCallReply(CODE_TOOL, {"code": f"undefined_var_{n}; raise ValueError(f'attempt {n}')"})
        ]
    )


def numbered_failing_block(request: RecordedRequest) -> Reply:
    return Reply(f"```python\nraise ValueError('attempt {request.index}', {request.index}.5)\n```")


def commented_success(request: RecordedRequest) -> Reply:
    """The same successful step with a new comment each time."""
    code = f"print('working on it')  # {request.index}"
    return Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code})])


def commented_block(request: RecordedRequest) -> Reply:
    return Reply(f"```python\n# try {request.index}\nprint('working on it')\n```")


def numbered_print(request: RecordedRequest) -> Reply:
    """A step new only in a number in its string, and in its output (round 6: 100 requests)."""
    return Reply(
        tool_calls=[ToolCallReply(CODE_TOOL, {"code": f"print('working on it, step {request.index}')"})]
    )


def numbered_variable(request: RecordedRequest) -> Reply:
    return Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": f"v_{request.index} = 1"})])


def numbered_file_block(request: RecordedRequest) -> Reply:
    return Reply(f"```python\nopen('f_{request.index}.txt', 'w').write('x')\n```")


def broken_twice_then_a_numbered_print(request: RecordedRequest) -> Reply:
    if request.index % 3 == 2:
        return numbered_print(request)
    return Reply(tool_calls=[ToolCallReply(CODE_TOOL, '{"code": "pri' + "x" * request.index)])


# (the model keeps sending, protocol, the fault, requests, exit code); protocol None: the default (auto)
TABLE: list[tuple[str, str | None, ReplySpec, int, int]] = [
    ("a tool call with broken JSON arguments", None, BROKEN_JSON, 3, 4),
    ("a tool call with broken JSON arguments", "tools", BROKEN_JSON, 3, 4),
    ("a tool call with broken JSON arguments", "text", BROKEN_JSON, 3, 4),
    ("a call of a tool that does not exist", None, UNKNOWN_TOOL, 3, 4),
    ("a call of a tool that does not exist", "tools", UNKNOWN_TOOL, 3, 4),
    ("the same code that fails the same way", None, SAME_FAILURE, 4, 4),
    ("the same code that fails the same way", "tools", SAME_FAILURE, 4, 4),
    ("the same code that fails the same way", "text", SAME_FAILING_BLOCK, 4, 4),
    ("the same failure with a new number each time", None, numbered_failure, 4, 4),
    ("the same failure with a new number each time", "tools", numbered_failure, 4, 4),
    ("the same failure with a new number each time", "text", numbered_failing_block, 4, 4),
    ("the same success with a new comment each time", None, commented_success, 4, 4),
    ("the same success with a new comment each time", "tools", commented_success, 4, 4),
    ("the same success with a new comment each time", "text", commented_block, 4, 4),
    ("a success new only in a number in its string", None, numbered_print, 4, 4),
    ("a success new only in a number in its variable's name", "tools", numbered_variable, 4, 4),
    ("a success new only in a number in its file's name", "text", numbered_file_block, 4, 4),
    ("two broken calls, then a success new only in a number", None, broken_twice_then_a_numbered_print, 6, 4),
    ("two failing steps in turn", None, two_failures_in_turn, 5, 4),
    ("two failing steps in turn", "tools", two_failures_in_turn, 5, 4),
    ("two failing steps in turn", "text", two_failing_blocks_in_turn, 5, 4),
    ("an empty reply", None, EMPTY, 2, 1),  # one nudge, then the empty reply ends the turn: no answer
    ("an empty reply", "tools", EMPTY, 1, 1),
    ("an empty reply", "text", EMPTY, 2, 1),
    ("a reply of whitespace only", None, WHITESPACE, 2, 1),
    ("a reply of whitespace only", "tools", WHITESPACE, 1, 1),
    ("a reply of whitespace only", "text", WHITESPACE, 2, 1),
    ("a reply of thinking only", None, THINK_ONLY, 2, 1),
    ("a reply of thinking only", "tools", THINK_ONLY, 1, 1),
    ("a reply of thinking only", "text", THINK_ONLY, 2, 1),
    ("a reply of an empty code fence only", None, EMPTY_FENCE, 2, 1),
    ("a reply of an empty code fence only", "tools", EMPTY_FENCE, 1, 1),
    ("a reply of an empty code fence only", "text", EMPTY_FENCE, 2, 1),
]


@pytest.mark.parametrize(
    ("keeps_sending", "protocol", "fault", "requests", "exit_code"),
    TABLE,
    ids=[f"{row[0]}-{row[1] or 'default'}" for row in TABLE],
)
def test_a_model_that_keeps_making_one_mistake_costs_a_few_requests(
    keeps_sending: str,
    protocol: str | None,
    fault: ReplySpec,
    requests: int,
    exit_code: int,
    fake_openai: FakeOpenAI,
    tmp_path: Path,
    isolated_home: Path,
) -> None:
    fake_openai.default = fault
    chosen = ["--action-protocol", protocol] if protocol else []
    done = cli("run", *fake_args(fake_openai), *chosen, "--allow", "code:*", "-o", "json", "go", cwd=tmp_path)
    assert done.stdout.strip(), done.stderr
    result = json.loads(done.stdout)
    assert (fake_openai.count, done.returncode) == (requests, exit_code), (keeps_sending, result["errors"])
    if exit_code == 4:
        (error,) = result["errors"]
        assert result["status"] == "stalled" and error["kind"] == "stalled"
        assert "no progress" in error["message"] and "max_steps_without_progress" in error["message"]
    if exit_code == 1:  # no answer: one error says so (it was ``errors: []``), the answer holds no thinking
        (error,) = result["errors"]
        assert error["kind"] == "model" and "no answer" in error["message"]
        assert "<think>" not in result["answer"] and done.stderr.count("no answer") == 1


def test_run_help_lists_the_stalled_exit_code(tmp_path: Path, isolated_home: Path) -> None:
    done = cli("run", "--help", cwd=tmp_path)
    assert "4 stalled" in " ".join(done.stdout.split()), done.stdout
