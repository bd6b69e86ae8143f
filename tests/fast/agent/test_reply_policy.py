"""The reply policy as a table: (mode, history, reply) → decision, without a kernel or a model.

Each row names the case (a trace of a small model, mostly Qwen2.5-Coder-1.5B in ``bench/real_model.py``
and the held-out tasks of #30, or the commit of #10 that made the rule) that motivated it. The
policy functions are called directly; ``-m "not kernel"`` runs this file in about a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.agent.policy.nudge import CHECK, NUDGE_RULES
from freeact_tui.agent.policy.outcomes import RESULTS_KEY
from freeact_tui.agent.policy.progress import StopTurn, SwitchProtocol
from freeact_tui.agent.policy.reply import (
    FinalAnswer,
    NudgeModel,
    RunBlocks,
    RunCalls,
    claims_output,
    reply_policy,
)
from freeact_tui.agent.policy.text_protocol import TextAction, tagged_calls, text_actions, unwrap_code_tool
from freeact_tui.agent.policy.written_calls import written_tool_calls
from freeact_tui.store.prompt_record import CANCELLED_NOTE, CUT_KEY
from freeact_tui.store.step_record import StepRecord
from freeact_tui.store.transcript import NUDGE_KEY
from freeact_tui.toolcalls import CODE_TOOL, EDIT_TEXT_TOOL, READ_TEXT_TOOL

TOOLS: dict[str, list[str]] = {
    CODE_TOOL: ["code"],
    READ_TEXT_TOOL: ["path"],
    EDIT_TEXT_TOOL: ["path", "old_text", "new_text"],
}

# -- building histories -----------------------------------------------------------------------------


def prompt(text: str = "Compute 1234 * 5678 with Python.") -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(text)])


def reply(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


def code_call(code: str, call_id: str) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(CODE_TOOL, {"code": code}, tool_call_id=call_id)])


def returned(call_id: str, output: str, outcome: str = "ok", **meta: Any) -> ModelRequest:
    part = ToolReturnPart(CODE_TOOL, output, tool_call_id=call_id, metadata={"outcome": outcome, **meta})
    return ModelRequest(parts=[part])


def tool_step(code: str, output: str, outcome: str = "ok", call_id: str = "c1") -> list[ModelMessage]:
    return [code_call(code, call_id), returned(call_id, output, outcome)]


def block_step(code: str, output: str, outcome: str = "ok") -> list[ModelMessage]:
    results = [{"id": "text_1", "code": code, "outcome": outcome, "output": output}]
    return [
        reply(f"```python\n{code}\n```"),
        ModelRequest(
            parts=[UserPromptPart(f"Output of your code block:\n{output}")], metadata={RESULTS_KEY: results}
        ),
    ]


def nudge(
    text: str = "You did not run any code for my last request. Call the tool now.", why: str = "x"
) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(text)], metadata={NUDGE_KEY: why})


@dataclass(frozen=True)
class Row:
    case: str
    """The trace or commit that motivated the rule."""
    mode: str
    turn: list[ModelMessage]
    """The turn before the reply (it starts with the prompt)."""
    reply: ModelResponse
    expect: type
    blocks: list[str] = field(default_factory=list)
    """For ``RunBlocks``: the code that runs; for ``RunCalls``: the calls' tool names."""
    switch: bool = False
    told: str = ""
    """For ``NudgeModel``: words of what the model is told."""
    earlier: list[ModelMessage] = field(default_factory=list)
    """Turns before this one."""


def read_step(path: str, content: str, call_id: str = "r1") -> list[ModelMessage]:
    call = ToolCallPart(READ_TEXT_TOOL, {"path": path}, tool_call_id=call_id)
    result = ToolReturnPart(READ_TEXT_TOOL, content, tool_call_id=call_id, metadata={"outcome": "ok"})
    return [ModelResponse(parts=[call]), ModelRequest(parts=[result])]


BRIEF = "Liebe Anna,\nvielen Dank für die Einladung zum Sommerfest.\nJonas"
ERROR_LINE = "2026-11-27 04:05:00 ERROR disk quota exceeded on /srv"
FENCED_42 = "```python\n42\n```"
PANDAS = "import pandas as pd\nprint(pd.read_csv('cities.csv').max())"
MISSING_PANDAS = "ModuleNotFoundError: No module named 'pandas'"
ROWS: list[Row] = [
    # -- tools: the null policy ----------------------------------------------------------------------
    Row(
        "tools: a claim without code is the answer (a strong model's answers are answers)",
        "tools",
        [prompt()],
        reply("1234 * 5678 = 7006652"),
        FinalAnswer,
    ),
    Row(
        "tools: a code block in the answer is an example, never run",
        "tools",
        [prompt()],
        reply("```python\nprint(1)\n```"),
        FinalAnswer,
    ),
    Row(
        "tools: tool calls run, side by side",
        "tools",
        [prompt()],
        code_call("print(1)", "c1"),
        RunCalls,
        blocks=[CODE_TOOL],
    ),
    Row("tools: an empty reply is not nudged", "tools", [prompt()], reply(""), FinalAnswer),
    # -- text -----------------------------------------------------------------------------------------
    Row(
        "text: freeact's protocol, a python block runs",
        "text",
        [prompt()],
        reply("```python\nprint(1234 * 5678)\n```"),
        RunBlocks,
        blocks=["print(1234 * 5678)"],
    ),
    Row(
        "text: a bash block runs as a %%bash cell",
        "text",
        [prompt("List files")],
        reply("```bash\nls\n```"),
        RunBlocks,
        blocks=["%%bash\nls"],
    ),
    Row(
        "text: unlabelled Python code runs (small models leave out the language, #10 0f3e7c8)",
        "text",
        [prompt()],
        reply("```\nprint(1234 * 5678)\n```"),
        RunBlocks,
        blocks=["print(1234 * 5678)"],
    ),
    Row(
        "#30: a fenced 42 (the expected output) ran as 'Code action: 42', again and again",
        "text",
        [prompt()],
        reply(FENCED_42),
        NudgeModel,
        told="did not run",
    ),
    Row(
        "#30: a fenced 1 in a bash block is output, not a command",
        "text",
        [prompt()],
        reply("```bash\n1\n```"),
        NudgeModel,
        told="did not run",
    ),
    Row(
        "#30: a fenced string or list is a value shown, not code",
        "text",
        [prompt()],
        reply("```python\n'done'\n```"),
        NudgeModel,
        told="did not run",
    ),
    Row(
        "text: code restated in the answer after it ran does not run again (#10)",
        "text",
        [prompt(), *block_step("print(1234 * 5678)", "7006652")],
        reply("The result is 7006652:\n```python\nprint(1234 * 5678)\n```"),
        FinalAnswer,
    ),
    Row(
        "#45: the app's own cancel note, given as the answer to the next request, is asked for once more",
        "auto",
        [prompt("What is 6 times 7?")],
        reply(CANCELLED_NOTE),
        NudgeModel,
        told="repeats my words or the app's notes",
        earlier=[
            prompt("Print 1 to 30 slowly."),
            ModelResponse(parts=[TextPart(CANCELLED_NOTE)], metadata={CUT_KEY: "cancelled"}),
        ],
    ),
    Row(
        "#45 attack 6: the cancel note translated (German), answering the next request, is asked for once"
        " more: it refers to nothing of the request (structure, not words)",
        "auto",
        [prompt("What is the capital of France?")],
        reply("Der Benutzer hat diese Anfrage abgebrochen, bevor sie beantwortet wurde."),
        NudgeModel,
        told="uses nothing of my request",
        earlier=[
            prompt("Summarise the README"),
            ModelResponse(parts=[TextPart(CANCELLED_NOTE)], metadata={CUT_KEY: "cancelled"}),
        ],
    ),
    Row(
        "#45: the request echoed back is asked for once more (any language: overlap, not phrases)",
        "text",
        [
            prompt("Zähle die Wörter in brief.txt und nenne mir die Zahl."),
            *block_step("print(len(open('brief.txt').read().split()))", "12"),
        ],
        reply("Zähle die Wörter in brief.txt und nenne mir die Zahl."),
        NudgeModel,
        told="repeats my words or the app's notes",
    ),
    Row(
        "#45: an answer that quotes the output is no echo",
        "text",
        [prompt(), *block_step("print('The product is', 1234 * 5678)", "The product is 7006652")],
        reply("The product is 7006652."),
        FinalAnswer,
    ),
    Row(
        "#45 seconds in a day (German): a number in no output and not in the request is asked to be checked",
        "text",
        [
            prompt("Wie viele Sekunden hat ein Tag?"),
            *block_step("print(24 * 60 * 60 * 138.57)", "11972808.0"),
        ],
        reply("Ein Tag hat 10,982,432 Sekunden."),
        NudgeModel,
        told="appear in no output of your code: 10,982,432",
    ),
    Row(
        "#45: numbers from the output, written with separators or rounded, are grounded",
        "auto",
        [
            prompt("Seconds in a day, and the mean of p.csv?"),
            *tool_step("print(24 * 3600, 5.928571)", "86400.0 5.928571", "ok", "c1"),
        ],
        reply("A day has 86,400 seconds; the mean is 5.93."),
        FinalAnswer,
    ),
    Row(
        "#45: a number only the turn's code wrote grounds nothing (x = 99, 'the result is 99'): asked once",
        "auto",
        [prompt("Set x."), *tool_step("x = 99", "", "ok", "c1")],
        reply("The result is 99, and I have set x."),
        NudgeModel,
    ),
    Row(
        "#45: the numbers are asked about once; the reply after that is the answer",
        "text",
        [
            prompt("Wie viele Sekunden hat ein Tag?"),
            *block_step("print(24 * 60 * 60 * 138.57)", "11972808.0"),
            reply("Ein Tag hat 10,982,432 Sekunden."),
            nudge("These numbers in your reply appear in no output of your code: 10,982,432.", CHECK.log),
            *block_step("print(24 * 60 * 60 * 138.57)", "11972808.0"),
        ],
        reply("Es sind 10,982,432 Sekunden pro Tag."),
        FinalAnswer,
    ),
    Row(
        "#40 text: the code that just failed, sent again, is a step (it counts against progress), not the answer",
        "text",
        [prompt(), *block_step("1 / 0", "ZeroDivisionError: division by zero", "error")],
        reply("```python\n1 / 0\n```"),
        RunBlocks,
        blocks=["1 / 0"],
    ),
    Row(
        "text: an answer from the output is the answer",
        "text",
        [prompt(), *block_step("print(1234 * 5678)", "7006652")],
        reply("1234 * 5678 = 7006652."),
        FinalAnswer,
    ),
    Row(
        "text: a claimed number no code computed gets a nudge (#10 '1234 * 5678 = 7006652')",
        "text",
        [prompt()],
        reply("1234 * 5678 = 7006652."),
        NudgeModel,
        told="do not know the result",
    ),
    Row(
        "text: a claimed change gets a nudge (#10 'The file has been created')",
        "text",
        [prompt("Create notes.txt")],
        reply("The file has been created."),
        NudgeModel,
        told="did not happen",
    ),
    Row(
        "text: an empty reply before any action gets a nudge",
        "text",
        [prompt()],
        reply(""),
        NudgeModel,
        told="empty",
    ),
    Row(
        "text: a reply that needs no action ends the turn",
        "text",
        [prompt("Hi!")],
        reply("Hello! How can I help?"),
        FinalAnswer,
    ),
    Row(
        "#30 pandas: after the import failed the reply claimed 'Average price: 5.93' (no digit pair: missed)",
        "text",
        [prompt(), *block_step("import pandas", "ModuleNotFoundError: No module named 'pandas'", "error")],
        reply("The average price is 5.93."),
        NudgeModel,
        told="last action failed",
    ),
    # -- auto on tool calls ---------------------------------------------------------------------------
    Row(
        "auto: a model that never made a working tool call and writes a block switches to text",
        "auto",
        [prompt()],
        reply("```python\nprint(1234 * 5678)\n```"),
        RunBlocks,
        blocks=["print(1234 * 5678)"],
        switch=True,
    ),
    Row(
        "auto: blocks after a working tool call are examples in an answer",
        "auto",
        [prompt(), *tool_step("print(1234 * 5678)", "7006652")],
        reply("Done: 7006652. For another pair:\n```python\nprint(2 * 3)\n```"),
        FinalAnswer,
    ),
    Row(
        "auto: a block after a failed tool call is the next step (!pip install after ImportError, #10)",
        "auto",
        [prompt(), *tool_step("import sympy", "ModuleNotFoundError: No module named 'sympy'", "error")],
        reply("```python\n!pip install sympy\n```"),
        RunBlocks,
        blocks=["!pip install sympy"],
        earlier=[prompt("earlier"), *tool_step("print(1)", "1", call_id="e1")],
    ),
    Row(
        "auto: a Hermes-style <tool_call> written as text is made (#10)",
        "auto",
        [prompt()],
        reply(
            '<tool_call>{"name": "ipybox_execute_ipython_cell", "arguments": {"code": "print(1)"}}</tool_call>'
        ),
        RunCalls,
        blocks=[CODE_TOOL],
    ),
    Row(
        "#27: a single-quoted <tool_call> is made too (the two parsers disagreed)",
        "auto",
        [prompt()],
        reply(
            "<tool_call>{'name': 'ipybox_execute_ipython_cell', 'arguments': {'code': 'print(1)'}}</tool_call>"
        ),
        RunCalls,
        blocks=[CODE_TOOL],
    ),
    Row(
        "#30 derived primes: ipybox_execute_ipython_cell({'code': '!pip install sympy'}) passes the "
        "arguments object whole: a call (it was 'broken' twice and switched to text)",
        "auto",
        [prompt(), *tool_step("import sympy", "ModuleNotFoundError: No module named 'sympy'", "error")],
        reply('Install it:\n```python\nipybox_execute_ipython_cell({"code": "!pip install sympy"})\n```'),
        RunCalls,
        blocks=[CODE_TOOL],
    ),
    Row(
        'auto: out = ipybox_execute_ipython_cell("!wc -l x") is a call (#10 07f34ae)',
        "auto",
        [prompt()],
        reply('out = ipybox_execute_ipython_cell("!wc -l rows.csv")\nprint(out)'),
        RunCalls,
        blocks=[CODE_TOOL],
    ),
    Row(
        "auto: 'with filesystem_read_text_file(...) as f:' is example code, not a call (#10 35c97e2)",
        "auto",
        [prompt(), *tool_step("print(1)", "1")],
        reply("You can do:\n```python\nwith filesystem_read_text_file('a.txt') as f:\n    print(f)\n```"),
        NudgeModel,
        told="how to do it",
    ),
    Row(
        "auto: a tool defined as a function in the reply is example code (#10 a57de46)",
        "auto",
        [prompt(), *tool_step("print(1)", "1")],
        reply(
            "def filesystem_read_text_file(path):\n    return open(path).read()\n\nfilesystem_read_text_file('a.txt')"
        ),
        FinalAnswer,
    ),
    Row(
        "auto: 'Here's how you can do it' with code after a step that worked is nudged (#10 a57de46)",
        "auto",
        [prompt(), *tool_step("import os", "")],
        reply("Here's how you can do it:\n```python\nprint(len(os.listdir()))\n```"),
        NudgeModel,
        told="write the answer from it",
    ),
    Row(
        "auto: told how-to, the reply's blocks run like any reply to a nudge",
        "auto",
        [
            prompt(),
            *tool_step("import os", ""),
            reply("Here's how:\n```python\nprint(1)\n```"),
            nudge(
                "You told me how to do it instead of doing it.",
                "the reply shows code to run instead of running it",
            ),
        ],
        reply("```python\nprint(len(os.listdir()))\n```"),
        RunBlocks,
        blocks=["print(len(os.listdir()))"],
    ),
    Row(
        "auto: an empty reply after a working action is asked for the answer (#10 07f34ae)",
        "auto",
        [prompt(), *tool_step("print(1234 * 5678)", "7006652")],
        reply(""),
        NudgeModel,
        told="Use the output above",
    ),
    Row(
        "auto: a reply repeating an earlier one after an action gets a nudge (#10 07f34ae)",
        "auto",
        [prompt(), reply("I will compute it."), nudge(), *tool_step("print(1234 * 5678)", "7006652")],
        reply("I will compute it."),
        NudgeModel,
        told="previous reply again",
    ),
    Row(
        "auto: at most two nudges a turn, the second only after an action",
        "auto",
        [prompt(), reply("1234 * 5678 = 7006652."), nudge()],
        reply("1234 * 5678 = 7006652."),
        FinalAnswer,
    ),
    Row(
        "auto: a number the user gave is known: no nudge",
        "auto",
        [prompt("Is 7006652 even?")],
        reply("Yes, 7006652 is even."),
        FinalAnswer,
    ),
    Row(
        "auto: a number from an output is known after a failure elsewhere is not (structural)",
        "auto",
        [prompt(), *tool_step("print(1234 * 5678)", "7006652")],
        reply("It is 7006652."),
        FinalAnswer,
    ),
    # -- structure: the code that failed never ran again ----------------------------------------------
    Row(
        "#30 held-out biggest_city (a rule derived from a held-out failure): import pandas failed, "
        "%%bash pip install worked, the answer named a city no code had found",
        "auto",
        [
            prompt("which city in cities.csv has the most people?"),
            *tool_step(PANDAS, MISSING_PANDAS, "error", call_id="c1"),
            *tool_step("%%bash\npip install pandas", "Successfully installed pandas-3.1.1", call_id="c2"),
        ],
        reply("The city with the most people is: New York"),
        NudgeModel,
        told="has not run again",
    ),
    Row(
        "#30 held-out csv_average, text protocol: the same after a !pip line, a made-up price",
        "text",
        [
            prompt("what's the average price in prices.csv?"),
            *block_step(PANDAS, MISSING_PANDAS, "error"),
            *block_step("!pip install pandas", "Successfully installed pandas-3.1.1"),
        ],
        reply("The average price in prices.csv is: 123.45"),
        NudgeModel,
        told="has not run again",
    ),
    Row(
        "#30: the failed code ran again after the install: its answer is the answer",
        "auto",
        [
            prompt("which city in cities.csv has the most people?"),
            *tool_step(PANDAS, MISSING_PANDAS, "error", call_id="c1"),
            *tool_step("%%bash\npip install pandas", "Successfully installed pandas-3.1.1", call_id="c2"),
            *tool_step(PANDAS, "Lagos", call_id="c3"),
        ],
        reply("The city with the most people is Lagos."),
        FinalAnswer,
    ),
    Row(
        "#30: Python that worked after the failure (not a shell step) may give the answer",
        "auto",
        [
            prompt("which city in cities.csv has the most people?"),
            *tool_step(PANDAS, MISSING_PANDAS, "error", call_id="c1"),
            *tool_step(
                "import csv\nprint(max(csv.DictReader(open('cities.csv')), key=...))", "Lagos", call_id="c2"
            ),
        ],
        reply("The city with the most people is Lagos."),
        FinalAnswer,
    ),
    Row(
        "#30 held-out biggest_city: the whole JSON call passed to the tool it names, in a how-to reply "
        "after a failed import (twice so, both counted as broken calls, auto switched and gave up)",
        "auto",
        [
            prompt("which city in cities.csv has the most people?"),
            *tool_step(PANDAS, MISSING_PANDAS, "error"),
        ],
        reply(
            "To resolve the `ModuleNotFoundError`, you need to install the pandas library. You can do this by "
            "running the following command in your IPython cell:\n\n```python\n"
            f'{CODE_TOOL}({{"name": "{CODE_TOOL}", "arguments": {{"code": "!pip install pandas"}}}})\n```'
        ),
        RunCalls,
        blocks=[CODE_TOOL],
    ),
    # -- structure: a reply that plays the tool ---------------------------------------------------------
    Row(
        "#30 held-out word_count_de (derived from it): the file's text read back in <tool_response> tags "
        "was taken as the answer to 'how many words'",
        "auto",
        [prompt("Wie viele Wörter stehen in brief.txt?"), *read_step("brief.txt", BRIEF)],
        reply(f"<tool_response>\n{BRIEF}\n</tool_response>"),
        NudgeModel,
        told="repeats the tool's output",
    ),
    Row(
        "#30 derived primes (seen there, not derived from it): replies held made-up tracebacks in the tags; here after a step that worked",
        "text",
        [
            prompt("How many primes are there below 10000?"),
            *block_step("!pip install sympy", "Successfully installed"),
        ],
        reply("<tool_response>\nNameError: name 'count' is not defined\n</tool_response>"),
        NudgeModel,
        told="```python block now",
    ),
    Row(
        "#30 held-out error_line_de: the output line repeated as it is IS the answer ('which line has ERROR?')",
        "auto",
        [prompt("Welche Zeile in log.txt enthält ERROR?"), *read_step("log.txt", ERROR_LINE)],
        reply(ERROR_LINE),
        FinalAnswer,
    ),
    Row(
        "#30 held-out literal_42: an echoed '42' after print(42) is the answer (why a plain echo is no rule)",
        "auto",
        [prompt("just print 42 and tell me"), *tool_step("print(42)", "42")],
        reply("42"),
        FinalAnswer,
    ),
    Row(
        "#30: German prompt, code ran the wrong thing, answer 'The user approved this action, continuing.'",
        "auto",
        [prompt("Wie viele Sekunden hat ein Tag? Rechne es mit Python aus.")],
        reply("86400 Sekunden."),
        NudgeModel,
        told="do not know the result",
    ),
]


def decide(row: Row) -> Any:
    policy = reply_policy(row.mode)  # type: ignore[arg-type]
    return policy.decide(row.reply, [*row.earlier, *row.turn], row.turn, TOOLS)


@pytest.mark.parametrize("row", ROWS, ids=[r.case for r in ROWS])
def test_decision_table(row: Row) -> None:
    decision = decide(row)
    assert type(decision) is row.expect, (row.case, decision)
    match decision:
        case RunBlocks(blocks=blocks, switch=switch):
            assert [b.code for b in blocks] == row.blocks
            assert (switch is not None) == row.switch
        case RunCalls(calls=calls):
            assert [c.tool_name for c in calls] == row.blocks
        case NudgeModel(told=told):
            assert row.told in told, told
        case FinalAnswer():
            pass


def test_the_table_is_big_enough() -> None:
    assert len(ROWS) >= 30


def test_the_table_mirrors_the_nudge_rules() -> None:
    """#41: every row of the nudge table (``NUDGE_RULES``, in order) is the decision of a row here."""
    given = [d.reason for d in map(decide, ROWS) if isinstance(d, NudgeModel)]
    missing = [rule.reason.log for rule in NUDGE_RULES if rule.reason not in given]
    assert missing == []


# -- the pieces the table rests on -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>{'name': 'ipybox_execute_ipython_cell', 'arguments': {'code': 'print(1)'}}</tool_call>",
        '<tool_call>{"name": "ipybox_execute_ipython_cell", "arguments": {"code": "print(1)"}}</tool_call>',
    ],
)
def test_the_two_readers_of_written_calls_agree(text: str) -> None:
    """#27: tagged_calls gave [] where written_tool_calls found the call (single quotes)."""
    made = written_tool_calls(text, TOOLS)
    assert [c.args_as_dict()["code"] for c in made] == ["print(1)"]
    assert tagged_calls(text) == [TextAction("python", "print(1)")]


def test_a_python_form_code_tool_call_in_a_block_is_unwrapped() -> None:
    """#27: unwrap_code_tool left ``out = ipybox_execute_ipython_cell("print(1)")`` as it was; written_calls made it."""
    source = 'out = ipybox_execute_ipython_cell("print(1)")\nprint(out)'
    assert unwrap_code_tool(source) == "print(1)"
    assert [c.args_as_dict() for c in written_tool_calls(source, TOOLS)] == [{"code": "print(1)"}]
    assert text_actions(f"```python\n{source}\n```") == [TextAction("python", "print(1)")]


@pytest.mark.parametrize("source", ["42", "1", "-3.5", "'done'", "x", "[1, 2]", "{'a': 1}", "1,234"])
def test_a_literal_block_is_never_an_action(source: str) -> None:
    assert text_actions(f"```python\n{source}\n```") == []
    assert text_actions(f"```\n{source}\n```") == []


def test_a_bash_command_that_is_a_word_is_still_a_command() -> None:
    assert text_actions("```bash\nls\n```") == [TextAction("bash", "ls")]


# -- repeated errors, every protocol ---------------------------------------------------------------

ZERO = "Traceback (most recent call last):\n  ...\nZeroDivisionError: division by zero"
PANDAS = "ModuleNotFoundError: No module named 'pandas'"


def broken(
    call_id: str = "b1", told: str = "Invalid JSON arguments for `ipybox_execute_ipython_cell`."
) -> list[ModelMessage]:
    """A step whose one call was broken (bad JSON arguments, an unknown tool): the dispatcher's answer."""
    call = ToolCallPart(CODE_TOOL, '{"code": "pri', tool_call_id=call_id)
    ret = ToolReturnPart(
        CODE_TOOL, told, tool_call_id=call_id, metadata={"outcome": "error", "malformed": True}
    )
    return [ModelResponse(parts=[call]), ModelRequest(parts=[ret])]


def guarded_step(code: str, error: str, call_id: str) -> list[ModelMessage]:
    told = f"This is the code that just failed ({error}). Do not repeat it: change it to fix the cause."
    guarded = ToolReturnPart(CODE_TOOL, told, tool_call_id=call_id, metadata=StepRecord("error", guarded=error).to_meta())
    return [code_call(code, call_id), ModelRequest(parts=[guarded])]


def nudged_step(why: str = "the reply was empty") -> list[ModelMessage]:
    return [reply(""), nudge("Your reply was empty. Go on.", why)]


P = "progress"
STOP = "stop"
SWITCH = "switch"


@pytest.mark.parametrize(
    ("case", "modes", "steps", "expect"),
    [
        (
            "#30 pandas: import fails, !pip elsewhere, import fails again, !pip again (A, B, A, B, A)",
            ("tools", "auto"),
            [
                tool_step("import pandas", PANDAS, "error", "c1"),
                tool_step("!pip install pandas", "Successfully installed pandas", "ok", "c2"),
                tool_step("import pandas as p", PANDAS, "error", "c3"),
                tool_step("!pip install pandas", "Successfully installed pandas", "ok", "c4"),
                tool_step("import pandas", PANDAS, "error", "c5"),
            ],
            [P, P, "repeated failure", "repeated success", STOP],
        ),
        (
            "#30 text protocol too: the same error from blocks",
            ("text", "auto"),
            [
                block_step("import pandas", PANDAS, "error"),
                block_step("import pandas as pd", PANDAS, "error"),
                block_step("import pandas as p", PANDAS, "error"),
                block_step("import pandas as q", PANDAS, "error"),
            ],
            [P, "repeated failure", "repeated failure", STOP],
        ),
        (
            "the same error with another line number, path and address is the same error",
            ("tools", "text", "auto"),
            [
                tool_step(
                    "f()", 'File "/tmp/a/x.py", line 3\nValueError: bad <obj at 0x7f3a2b>', "error", "c1"
                ),
                tool_step(
                    "f(1)", 'File "/home/u/y.py", line 41\nValueError: bad <obj at 0x1c>', "error", "c2"
                ),
            ],
            [P, "repeated failure"],
        ),
        (
            "#40: broken JSON arguments three times: stopped (tools), switched after two (auto)",
            ("tools",),
            [broken("b1"), broken("b2"), broken("b3")],
            ["broken call", "broken call", STOP],
        ),
        (
            "#40: auto switches to text after two steps of only broken calls, then stops on the third",
            ("auto",),
            [broken("b1"), broken("b2"), broken("b3")],
            ["broken call", SWITCH, STOP],
        ),
        (
            "#40: the repeat guard's refusals count against progress; a new error is progress",
            ("auto",),
            [
                tool_step("1/0", ZERO, "error", "c1"),
                guarded_step("1/0", "ZeroDivisionError: division by zero", "c2"),
                guarded_step("1/0", "ZeroDivisionError: division by zero", "c3"),
                tool_step("import pandas", PANDAS, "error", "c4"),
            ],
            [P, "refused call", "refused call", P],
        ),
        (
            "#40: empty replies and nudges count; a fix resets the count",
            ("text", "auto"),
            [
                nudged_step(),
                nudged_step("the reply claims results no action produced"),
                tool_step("print(1)", "1", "ok", "c1"),
                nudged_step(),
            ],
            ["no answer", "no answer", P, "no answer"],
        ),
        (
            "one error, then a fix, then other work: every step is progress",
            ("tools", "text", "auto"),
            [
                tool_step("1/0", ZERO, "error", "c1"),
                tool_step("print(1)", "1", "ok", "c2"),
                tool_step("x = sum(range(3))\nprint(x)", "3", "ok", "c3"),
            ],
            [P, P, P],
        ),
        (
            "the same successful step again, word for word, is no progress",
            ("tools",),
            [tool_step("print(1)", "1", "ok", "c1"), tool_step("print(1)", "1", "ok", "c2")],
            [P, "repeated success"],
        ),
    ],
)
def test_progress_per_step(
    case: str, modes: tuple[str, ...], steps: list[list[ModelMessage]], expect: list[str]
) -> None:
    """#40: one notion of progress, the same in every protocol; the third step in a row without it stops."""
    for mode in modes:
        policy = reply_policy(mode)  # type: ignore[arg-type]
        got: list[str] = []
        for step in steps:
            verdict = policy.after_step(step)
            faults = policy.meter.faults
            got.append(
                STOP
                if isinstance(verdict, StopTurn)
                else SWITCH
                if isinstance(verdict, SwitchProtocol)
                else faults[-1].kind
                if faults
                else P
            )
        assert got == expect, (case, mode)


def test_the_stop_message_says_what_kept_failing_and_what_to_do() -> None:
    policy = reply_policy("tools", stall_limit=2)
    policy.after_step(broken("b1", "Unknown tool `no_such_tool`."))
    stop = policy.after_step(broken("b2", "Invalid JSON arguments."))
    assert isinstance(stop, StopTurn) and stop.steps == 2
    assert "Unknown tool `no_such_tool`" in stop.message and "Invalid JSON arguments" in stop.message
    assert "--action-protocol text" in stop.message and "max_steps_without_progress = 2" in stop.message


def test_the_repeat_guard_is_auto_only() -> None:
    """#10: an edit with an empty old_text sent eight times; only ``auto`` refuses the same failing call."""
    call = ToolCallPart(EDIT_TEXT_TOOL, {"path": "a", "old_text": "", "new_text": ""}, tool_call_id="c2")
    failed = ToolReturnPart(
        EDIT_TEXT_TOOL, "old_text is empty", tool_call_id="c1", metadata={"outcome": "error"}
    )
    history: Sequence[ModelMessage] = [
        prompt(),
        ModelResponse(parts=[ToolCallPart(EDIT_TEXT_TOOL, call.args, tool_call_id="c1")]),
        ModelRequest(parts=[failed]),
        ModelResponse(parts=[call]),
    ]
    guarded = reply_policy("auto").guard(call, history)
    assert guarded is not None and "just failed the same way" in guarded.message
    assert reply_policy("tools").guard(call, history) is None


# -- output the model made up ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "text", "ran", "expect"),
    [
        (
            "#30 pandas: every reply showed 'Output: Average price: 5.93' for code that had not run",
            "```python\nimport pandas as pd\nprint(pd.read_csv('p.csv').price.mean())\n```\nOutput:\n```\nAverage price: 5.93\n```",
            False,
            True,
        ),
        ("a labelled result with no code before it, nothing ran", "Result:\n```\n7006652\n```", False, True),
        ("a labelled output quoting what ran in this turn", "Output:\n```\n7006652\n```", True, False),
        ("code alone is no claim", "```python\nprint(1)\n```", False, False),
        ("prose alone is no claim", "The answer is 42.", False, False),
    ],
)
def test_output_the_model_made_up_is_marked(case: str, text: str, ran: bool, expect: bool) -> None:
    assert claims_output(text, ran=ran) is expect, case


def test_a_final_answer_with_made_up_output_carries_the_flag() -> None:
    text = "```python\nprint(2 + 2)\n```\nOutput:\n```\n4\n```"
    decision = reply_policy("tools").decide(reply(text), [prompt()], [prompt()], TOOLS)
    assert isinstance(decision, FinalAnswer) and decision.claims_output
    auto = reply_policy("text").decide(reply(text), [prompt()], [prompt()], TOOLS)
    assert isinstance(auto, RunBlocks) and auto.claims_output


def test_a_python_form_call_may_pass_the_arguments_object_whole() -> None:
    # #30 derived primes: the model wrote the JSON call's arguments as one dict
    (call,) = written_tool_calls(f'{CODE_TOOL}({{"code": "!pip install sympy"}})', TOOLS)
    assert call.args == {"code": "!pip install sympy"}
    # a dict with other keys is not the arguments object: it stays the first parameter's value
    (other,) = written_tool_calls(f'{CODE_TOOL}({{"cmd": "ls"}})', TOOLS)
    assert other.args == {"code": {"cmd": "ls"}}
    # #30 held-out biggest_city: the whole JSON call as the one argument, to the tool it names
    (whole,) = written_tool_calls(
        f'{CODE_TOOL}({{"name": "{CODE_TOOL}", "arguments": {{"code": "x = 1"}}}})', TOOLS
    )
    assert whole.args == {"code": "x = 1"}
    # naming another tool, it is not this call's arguments
    (named,) = written_tool_calls(
        f'{CODE_TOOL}({{"name": "other", "arguments": {{"code": "x = 1"}}}})', TOOLS
    )
    assert named.args == {"code": {"name": "other", "arguments": {"code": "x = 1"}}}


# -- one policy per protocol owns its state ---------------------------------------------------------

_STEPS = {
    "broken": lambda i: broken(f"b{i}"),
    # a new step has a new shape or a new result, not the same code with another number or name and
    # the same output but for a number (``progress.py``): here another file read, another text shown
    "new": lambda i: tool_step(f"print(open('f{i}.txt').read())", f"text {'abcdefghij'[i]}", "ok", f"c{i}"),
    "same failure": lambda i: tool_step("1/0", ZERO, "error", f"c{i}"),
}


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["tools", "text", "auto"]),
    st.lists(st.sampled_from(sorted(_STEPS)), min_size=1, max_size=8),
    st.integers(min_value=1, max_value=4),
)
def test_each_protocol_returns_its_state_changes_as_decisions(mode: str, kinds: list[str], limit: int) -> None:
    """Over generated runs of steps: only ``auto`` switches, once, exactly when two steps in a row had
    only broken calls, and is in text from then on; every protocol stops at the ``limit``-th step in a
    row without progress and not before (a new result is progress; a broken call or a failure met
    before is not)."""
    policy = reply_policy(mode, stall_limit=limit)  # type: ignore[arg-type]
    assert policy.name == mode and policy.in_text is (mode == "text")
    without = broken_run = switches = 0
    failed_before = False
    for i, kind in enumerate(kinds):
        verdict = policy.after_step(_STEPS[kind](i))
        progress = kind == "new" or (kind == "same failure" and not failed_before)
        failed_before |= kind == "same failure"
        without = 0 if progress else without + 1
        broken_run = broken_run + 1 if kind == "broken" else 0
        if without >= limit:
            assert isinstance(verdict, StopTurn) and verdict.steps == limit
            break
        if mode == "auto" and not switches and broken_run >= 2:
            assert verdict == SwitchProtocol("the model sent broken tool calls 2 times in a row")
            switches += 1
        else:
            assert verdict is None
        assert policy.in_text is (mode == "text" or switches > 0)
        assert policy.reads_written_calls is (mode == "auto" and not switches)


def test_auto_takes_its_switch_when_it_decides_to_run_blocks() -> None:
    """The switch on a reply's code block is the policy's own: the loop only announces ``RunBlocks.switch``."""
    policy = reply_policy("auto")
    blocked = reply("```python\nprint(1234 * 5678)\n```")
    first = policy.decide(blocked, [prompt()], [prompt()], TOOLS)
    assert isinstance(first, RunBlocks) and first.switch is not None and policy.in_text
    again = policy.decide(blocked, [prompt()], [prompt()], TOOLS)
    assert isinstance(again, RunBlocks) and again.switch is None


def test_a_resumed_text_session_stays_in_text_in_auto_only() -> None:
    history = [prompt(), *block_step("print(1)", "1")]
    for mode, in_text in (("auto", True), ("tools", False), ("text", True)):
        policy = reply_policy(mode)  # type: ignore[arg-type]
        policy.resume(history)
        assert policy.in_text is in_text, mode


def test_the_turn_only_reads_decisions_from_the_policy() -> None:
    """The turn's modules use the policy through its decisions: no switch, no mode, no counter of its own."""
    import ast
    from pathlib import Path

    import freeact_tui.agent.turn as turn

    allowed = {"decide", "after_step", "begin_turn", "reads_written_calls", "guard"}
    used: set[str] = set()
    for path in Path(turn.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
                if node.value.attr in ("policy", "_policy"):
                    used.add(node.attr)
    assert used and used <= allowed, used - allowed
