"""Serving small models (``auto``/``text``): unlabelled code blocks run, and a turn that would end
without anything having run gets one corrective nudge. Real kernel; only the LLM is scripted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart

from freeact_tui.agent.policy.nudge import NUDGE_KEY, reason_for
from freeact_tui.agent.policy.text_protocol import TextAction, code_blocks, is_python_code
from freeact_tui.events import (
    AgentError,
    ApprovalRequest,
    CodeExecutionOutput,
    Nudge,
    ProtocolSwitch,
    Response,
)
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.store import transcript as tr
from freeact_tui.store.export import render_text
from freeact_tui.tui.replay import replay_history
from tests.helpers import freeact_load, make_agent, of, run
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]


def last_user_text(messages: list[object]) -> str:
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return "\n".join(str(p.content) for p in request.parts if isinstance(p, UserPromptPart))


def outputs(events: list[object]) -> list[str]:
    return [(o.text or "").strip() for o in of(events, CodeExecutionOutput)]  # type: ignore[arg-type]


# -- unlabelled fences ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "print(secret + 1)",
        "secret = 41",
        "import math\nmath.sqrt(2)",
        "!wc -l rows.csv",
        "%%bash\nls",
        "await f()",
    ],
)
async def test_an_unlabelled_block_of_python_code_is_code(source: str) -> None:
    assert is_python_code(source)


@pytest.mark.parametrize(
    "source",
    [
        "42",
        "7006652",
        "hello world",
        "alpha.py\nbeta.py",
        "hello.txt",
        "[1, 2, 3]",
        "{'a': 1}",
        "Traceback (most recent call last):\n  File x\nNameError: name 'x' is not defined",
        "$ wc -l rows.csv\n37 rows.csv",
        "37 rows.csv",
        "! important",
        "100% done",
    ],
)
async def test_output_or_prose_in_an_unlabelled_block_is_not_code(source: str) -> None:
    assert not is_python_code(source)


async def test_code_blocks_take_unlabelled_python_code_but_not_output_or_other_languages() -> None:
    text = (
        "```\nprint(6 * 7)\n```\nOutput:\n```\n42\n```\n```text\nprint('no')\n```\n```js\nconsole.log(1)\n```"
    )
    assert code_blocks(text) == [TextAction("python", "print(6 * 7)")]


async def test_text_mode_runs_an_unlabelled_block_of_code(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["Let me compute it:\n```\nprint(6 * 7)\n```"], ["It is 42."])
    async with make_agent(s, executor, tmp_path, action_protocol="text") as agent:
        events = await run(agent, "6*7?")
    assert [r.tool_call.code for r in of(events, ApprovalRequest)] == ["print(6 * 7)"]
    assert outputs(events) == ["42"]
    assert of(events, Response)[-1].content == "It is 42."


async def test_auto_switches_on_an_unlabelled_block_of_code(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["```\nprint(2 ** 10)\n```"], ["1024"])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "2**10?")
    assert len(of(events, ProtocolSwitch)) == 1
    assert outputs(events) == ["1024"]


# -- the nudge ------------------------------------------------------------------------------------


async def test_auto_nudges_a_reply_that_claims_a_result_and_the_model_then_acts(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        ["The result of 1234 * 5678 is 7006652."],
        [Code("print(1234 * 5678)")],
        ["1234 * 5678 = 7006652."],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "What is 1234 * 5678? Run code.")
        history = list(agent.history)
        session_id = agent.session_id
    nudges = of(events, Nudge)
    assert len(nudges) == 1 and "claims results" in nudges[0].reason
    told = last_user_text(s.requests[1])
    assert told == nudges[0].message and told.startswith(
        "You did not run any code for my last request, so what your reply states did not happen."
    )
    assert "ipybox_execute_ipython_cell" in told  # still in tools: it is told to call the tool
    assert outputs(events) == ["7006652"]
    assert [r.content for r in of(events, Response)] == [
        "The result of 1234 * 5678 is 7006652.",
        "1234 * 5678 = 7006652.",
    ]
    assert not of(events, ProtocolSwitch) and not of(events, AgentError)
    # stored as a plain user message marked in its metadata; freeact loads the session
    nudge_messages = [
        m for m in history if isinstance(m, ModelRequest) and m.metadata and NUDGE_KEY in m.metadata
    ]
    assert len(nudge_messages) == 1 and nudge_messages[0].metadata == {NUDGE_KEY: nudges[0].reason}
    path = tmp_path / "sessions" / session_id / "main.jsonl"
    loaded = freeact_load(path)
    assert [type(m) for m in loaded] == [
        ModelRequest,
        ModelResponse,
        ModelRequest,
        ModelResponse,
        ModelRequest,
        ModelResponse,
    ]
    kinds = [
        {p["part_kind"] for p in json.loads(line)["message"]["parts"]}
        for line in path.read_text().splitlines()
    ]
    assert kinds[2] == {"user-prompt"}
    # the transcript, the replayed log and the export show it as a nudge, not as a user message
    entries = list(tr.walk(loaded))
    assert [e for e in entries if isinstance(e, tr.NudgeEntry)] == [tr.NudgeEntry(nudges[0].reason, told)]
    assert [e.text for e in entries if isinstance(e, tr.PromptEntry)] == ["What is 1234 * 5678? Run code."]
    nudged = [e for e in replay_history(loaded) if isinstance(e, Nudge)]
    assert len(nudged) == 1 and "claims results" in nudged[0].reason
    assert "── Nudge (the reply claims results no action produced)" in render_text(loaded)


async def test_at_most_one_nudge_per_turn(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["The file has been created."], ["I have created the file."], ["Done: 12345."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Create a file.")
        requests = len(s.requests)
        second = await run(agent, "And another.")
    assert len(of(events, Nudge)) == 1 and requests == 2  # the 2nd claim ends the turn
    assert of(events, Response)[-1].content == "I have created the file."
    assert len(of(second, Nudge)) == 1  # a new turn may get its own nudge


async def test_a_number_only_the_code_wrote_is_checked_once(executor: KernelExecutor, tmp_path: Path) -> None:
    # #45: a number in no output of the turn and not in the request is asked once (the model's own code
    # grounds nothing); the same reply after the check is the answer
    s = script([Code("x = 99")], ["The result is 99, and I have set x."], ["The result is 99, and I have set x."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Set x.")
    assert len(of(events, Nudge)) == 1 and len(s.requests) == 3
    assert of(events, Response)[-1].content == "The result is 99, and I have set x."


async def test_no_nudge_after_something_ran_in_the_turn(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("x = 99\nprint(x)")], ["The result is 99, and I have set x."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Set x.")
    assert not of(events, Nudge) and len(s.requests) == 2


async def test_no_nudge_after_a_rejected_action(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["```python\nprint('rm')\n```"], ["OK."])
    async with make_agent(s, executor, tmp_path, action_protocol="text") as agent:
        events = await run(agent, "Delete it.", decide=lambda _: False)
        follow = await run(agent, "Then say OK.", decide=lambda _: False)
    assert len(of(events, ApprovalRequest)) == 1 and not of(events, Nudge)  # the rejection ended the turn
    assert not of(follow, Nudge) and of(follow, Response)[-1].content == "OK."
    assert len(s.requests) == 2


async def test_tools_mode_never_nudges(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["The result of 1234 * 5678 is 7006652."], [""])
    async with make_agent(s, executor, tmp_path, action_protocol="tools") as agent:
        events = await run(agent, "What is 1234 * 5678?")
        empty = await run(agent, "again")
    assert not of(events, Nudge) and not of(empty, Nudge) and len(s.requests) == 2


async def test_a_conversational_reply_is_not_nudged(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(
        ["Got it: the code word is pelican-7431. I will remember it."],
        ["pelican-7431"],
        ["Hello! How can I help you today?"],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        first = await run(agent, "Remember the code word: pelican-7431. Just acknowledge it.")
        second = await run(agent, "What was the code word?")  # the number is in an earlier message
        third = await run(agent, "hi")
    assert not of(first, Nudge) and not of(second, Nudge) and not of(third, Nudge)
    assert len(s.requests) == 3


async def test_text_mode_nudges_an_empty_reply_and_a_shown_output(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        [""],
        ["```python\nsecret = 41\n```"],
        ["Set."],
        ["```\n42\n```"],
        ["```python\nprint(secret + 1)\n```"],
        ["It prints 42."],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="text") as agent:
        first = await run(agent, "Set secret = 41 in the kernel.")
        second = await run(agent, "Print secret + 1.")
    assert [n.reason for n in of(first, Nudge)] == ["the reply was empty"]
    assert [n.reason for n in of(second, Nudge)] == ["the reply shows a code block that did not run"]
    told = last_user_text(s.requests[4])
    assert "```python block" in told and "ipybox_execute_ipython_cell" not in told
    assert outputs(second) == ["42"]  # the kernel's output, after the nudge; the shown "42" never ran
    assert of(second, Response)[-1].content == "It prints 42."


async def test_a_number_no_code_computed_gets_a_nudge() -> None:
    history = [ModelRequest(parts=[UserPromptPart("How many primes are below 10000?")])]

    def reply(text: str) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)])

    assert reason_for(reply("There are 1229 primes below 10000."), history) is not None
    assert reason_for(reply("1229"), history) is not None
    assert reason_for(reply("Below 10000, as you asked? Sure."), history) is None
    assert reason_for(reply("I can count them with a sieve."), history) is None
    assert reason_for(ModelResponse(parts=[TextPart("1229"), ToolCallPart("x", {})]), history) is None


# -- auto: a reply's blocks run while the turn's last tool call failed ----------------------------


async def test_auto_runs_the_blocks_a_model_proposes_after_its_tool_call_failed(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        [Code("import not_installed_module_xyz")],
        ["You need to install it first:\n```python\nprint('installing')\n```\nThen try again."],
        ["Now the count:\n```python\nprint(1229)\n```"],
        [Code("print('via tool again')", call_id="c2")],
        ["Done. Run this yourself if you like:\n```python\nprint('example')\n```"],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Count the primes below 10000.")
    assert outputs(events)[1:] == ["installing", "1229", "via tool again"]  # the example never ran
    assert "ModuleNotFoundError" in outputs(events)[0]
    assert not of(events, ProtocolSwitch) and not of(events, Nudge)
    assert s.infos[-1].function_tools  # still on tool calls: the session did not switch
    assert "Output of your code block:\ninstalling" in last_user_text(s.requests[2])
    assert len(s.requests) == 5


async def test_auto_does_not_run_blocks_after_a_tool_call_that_worked(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script([Code("print('ok')")], ["You could also:\n```python\nprint('example')\n```"])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "go")
    assert outputs(events) == ["ok"] and len(s.requests) == 2


async def test_tools_mode_never_runs_blocks_after_a_failed_tool_call(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script([Code("1 / 0")], ["It failed. You could try:\n```python\nprint('suggested')\n```"])
    async with make_agent(s, executor, tmp_path, action_protocol="tools") as agent:
        events = await run(agent, "divide")
    assert len(outputs(events)) == 1 and "ZeroDivisionError" in outputs(events)[0]
    assert len(s.requests) == 2 and not of(events, Nudge)


async def test_auto_counts_any_tool_call_that_worked_and_repairs_after_any_that_failed(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    from tests.scripted import Call

    (tmp_path / "config.ini").write_text("color = red\n")
    s = script(
        [Call("filesystem_write_text_file", {"path": "notes.txt", "content": "hi"})],
        ["Written. The code I would use:\n```python\nprint('example')\n```"],  # an answer: not run
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "write notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "hi"
    assert not of(events, ProtocolSwitch) and not outputs(events) and len(s.requests) == 2

    s = script(
        [
            Call(
                "filesystem_edit_text_file",
                {"path": "config.ini", "old_text": "colour = red", "new_text": "x"},
            )
        ],
        [
            f"Let me do it with code:\n```python\nopen({str(tmp_path / 'config.ini')!r}, 'w').write('color = blue\\n')\n```"
        ],
        ["Changed."],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "make it blue")
    assert (tmp_path / "config.ini").read_text() == "color = blue\n"
    assert not of(events, ProtocolSwitch) and of(events, Response)[-1].content == "Changed."


async def test_a_reply_that_restates_the_code_that_just_ran_is_the_answer(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    block = "```python\nresult = 12 * 12 + 1\nprint(result)\n```"
    s = script(
        [f"Computing:\n{block}"],
        [f"I ran:\n{block}\nThe result is 145."],
        [f"I ran:\n{block}\nThe result is 145."],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="text") as agent:
        events = await run(agent, "12*12+1?")
    assert outputs(events) == ["145"] and len(s.requests) == 2
    assert of(events, Response)[-1].content.endswith("The result is 145.")
    # code that ran before, with another step since, runs again (the import after an install)
    s = script(
        ["```python\nimport json\n```"],
        ["```python\nprint('installed')\n```"],
        ["```python\nimport json\n```"],
        ["ok"],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="text") as agent:
        events = await run(agent, "go")
    assert len(of(events, ApprovalRequest)) == 3 and len(s.requests) == 4


# -- auto: tool calls written as text -------------------------------------------------------------

WRITTEN = (
    '```json\n{\n  "name": "filesystem_write_text_file",\n  "arguments": {\n    "path": "data.json",\n'
    '    "content": \'{"a": 1, "b": 2, "c": 4}\'\n  }\n}\n```\n\n'
    '```json\n{\n  "name": "filesystem_read_text_file",\n  "arguments": {\n    "path": "data.json"\n  }\n}\n```\n\n'
    '```json\n{\n  "name": "ipybox_execute_ipython_cell",\n  "arguments": {\n    "code": """\n'
    'import json\nprint(sum(json.load(open(PATH)).values()))\n"""\n  }\n}\n```'
)


async def test_written_tool_calls_are_decoded_tolerantly_and_only_for_offered_tools() -> None:
    from freeact_tui.agent.policy.written_calls import written_tool_calls

    tools = {"filesystem_write_text_file", "filesystem_read_text_file", "ipybox_execute_ipython_cell"}
    calls = written_tool_calls(WRITTEN, tools)
    assert [(c.tool_name, c.args) for c in calls] == [
        ("filesystem_write_text_file", {"path": "data.json", "content": '{"a": 1, "b": 2, "c": 4}'}),
        ("filesystem_read_text_file", {"path": "data.json"}),
        ("ipybox_execute_ipython_cell", {"code": "import json\nprint(sum(json.load(open(PATH)).values()))"}),
    ]
    assert written_tool_calls(WRITTEN, {"filesystem_read_text_file"})[0].args == {"path": "data.json"}
    text = (
        'Tagged: <tool_call>{"name": "t", "arguments": "{\\"x\\": true}"}</tool_call> '
        '{"type": "function", "function": {"name": "t", "parameters": {"y": null}}} '
        '{"name": "t"} {"name": "other", "arguments": {}} {"name": "t", "arguments": {broken'
    )
    assert [c.args for c in written_tool_calls(text, {"t"})] == [{"x": True}, {"y": None}]
    assert written_tool_calls("The result is {'a': 1}.", {"t"}) == []


async def test_python_form_calls_of_offered_tools_are_calls() -> None:
    from freeact_tui.agent.policy.written_calls import written_tool_calls

    tools = {
        "ipybox_execute_ipython_cell": ["code"],
        "filesystem_read_text_file": ["path", "offset", "limit"],
    }
    # as Qwen2.5-Coder-1.5B wrote it after a working file read, asked to use `wc -l`
    text = (
        "Here's how you can do it:\n\n```python\n# Run the wc -l command\n"
        'output = ipybox_execute_ipython_cell("!wc -l rows.csv")\nprint(output)\n```\n\n'
        "This will output the number of lines."
    )
    assert [(c.tool_name, c.args) for c in written_tool_calls(text, tools)] == [
        ("ipybox_execute_ipython_cell", {"code": "!wc -l rows.csv"})
    ]
    # in order with written objects; positional arguments by the tool's parameters; a nested call found
    text = (
        '<tool_response>\nprint(filesystem_read_text_file("a.txt", limit=5))\n</tool_response> then '
        '{"name": "ipybox_execute_ipython_cell", "arguments": {"code": "x = 1"}}\n'
        'ipybox_execute_ipython_cell(code="""\n    print(x)\n""")'
    )
    assert [c.args for c in written_tool_calls(text, tools)] == [
        {"path": "a.txt", "limit": 5},
        {"code": "x = 1"},
        {"code": "print(x)"},
    ]
    # not calls: a variable or an expression as an argument, no arguments, `**kw`, a method, too
    # many positional arguments, a tool not offered, a definition
    for text in (
        "Call `ipybox_execute_ipython_cell(code)` to run code.",
        "ipybox_execute_ipython_cell('a' + b)",
        "ipybox_execute_ipython_cell()",
        "ipybox_execute_ipython_cell(**kw)",
        "kernel.ipybox_execute_ipython_cell('x = 1')",
        "ipybox_execute_ipython_cell('x = 1', 'extra')",
        "subagent_task('compute 1 + 1')",
        "def ipybox_execute_ipython_cell(code: str) -> str: ...",
        # example code using the tools as functions (after an edit that worked, Qwen2.5-Coder-1.5B)
        '```python\nwith filesystem_read_text_file("config.ini") as file:\n    lines = file.readlines()\n```',
        "Run it with ipybox_execute_ipython_cell('x = 1') in a cell.",
        '```python\ndef filesystem_read_text_file(path):\n    pass\n\ntext = filesystem_read_text_file("a.txt")\n```',
    ):
        assert written_tool_calls(text, tools) == [], text
    # names only (no parameter order): keyword arguments only
    assert written_tool_calls("ipybox_execute_ipython_cell('x')", {"ipybox_execute_ipython_cell"}) == []


async def test_auto_makes_a_code_tool_call_written_in_a_block_after_a_working_call(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    from tests.scripted import Call

    (tmp_path / "rows.csv").write_text("".join(f"{i}\n" for i in range(37)))
    rows = tmp_path / "rows.csv"  # the shared kernel's working directory is another one
    proposed = (
        "To count the lines, use `wc -l`:\n\n```python\n"
        f'output = ipybox_execute_ipython_cell("!wc -l {rows}")\nprint(output)\n```'
    )
    s = script([Call("filesystem_read_text_file", {"path": "rows.csv"})], [proposed], ["It has 37 lines."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Use wc -l to count the lines of rows.csv.")
        history = list(agent.history)
    # stored as the call, with the prose around it (what the model said is kept)
    (made,) = [m for m in history if isinstance(m, ModelResponse) and "wc -l" in str(m.parts)][:1]
    assert [type(p).__name__ for p in made.parts] == ["TextPart", "ToolCallPart"]
    assert made.parts[0].content == proposed  # type: ignore[union-attr]
    shell = [r.tool_call.command for r in of(events, ApprovalRequest) if hasattr(r.tool_call, "command")]
    assert shell == [f"wc -l {rows}"]
    assert outputs(events)[-1].strip() == f"37 {rows}"
    assert not of(events, ProtocolSwitch) and of(events, Response)[-1].content == "It has 37 lines."
    # the same reply in `tools` is an answer: nothing runs after the read
    s = script([Call("filesystem_read_text_file", {"path": "rows.csv"})], [proposed])
    async with make_agent(s, executor, tmp_path, action_protocol="tools") as agent:
        events = await run(agent, "Use wc -l to count the lines of rows.csv.")
    assert not [r for r in of(events, ApprovalRequest) if hasattr(r.tool_call, "command")]
    assert len(s.requests) == 2


async def test_auto_runs_tool_calls_written_as_text_in_order(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    data = tmp_path / "data.json"
    s = script([WRITTEN.replace("PATH", repr(str(data)))], ["The sum is 7."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Write data.json and sum its values.")
        history = list(agent.history)
    assert json.loads(data.read_text()) == {"a": 1, "b": 2, "c": 4}
    assert outputs(events) == ["7"]  # the read and the code ran after the write
    names = [r.tool_call.__class__.__name__ for r in of(events, ApprovalRequest)]
    assert names == ["FileWrite", "FileRead", "CodeAction"]
    assert not of(events, ProtocolSwitch) and not of(events, Nudge) and not of(events, AgentError)
    # stored as the calls they were meant to be: freeact's rules hold (calls answered by returns)
    calls = [
        p for m in history if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart)
    ]
    assert [c.tool_name for c in calls] == [
        "filesystem_write_text_file",
        "filesystem_read_text_file",
        "ipybox_execute_ipython_cell",
    ]
    assert s.infos[1].function_tools and of(events, Response)[-1].content == "The sum is 7."


async def test_tools_mode_leaves_calls_written_as_text_alone(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script([WRITTEN])
    async with make_agent(s, executor, tmp_path, action_protocol="tools") as agent:
        events = await run(agent, "Show how you would call the tools.")
    assert not of(events, ApprovalRequest) and len(s.requests) == 1


async def test_an_empty_reply_after_an_action_gets_a_nudge_too(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script([Code("1 / 0")], [""], [Code("print(1 / 1)", call_id="c2")], ["1.0"])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "divide")
    assert [n.reason for n in of(events, Nudge)] == ["the reply was empty"]
    assert last_user_text(s.requests[2]).startswith("Your reply was empty. If my request is not done, go on")
    assert outputs(events)[-1] == "1.0" and of(events, Response)[-1].content == "1.0"


async def test_an_empty_reply_after_an_action_that_worked_is_asked_for_the_answer(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    # Told "if my request is not done, go on: call the tool", Qwen2.5-Coder-1.5B asked for code to
    # run; told to use the output, it answered.
    s = script([Code("print(6 * 7)")], [""], ["It is 42."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "6*7?")
    assert [n.reason for n in of(events, Nudge)] == ["the reply was empty"]
    assert last_user_text(s.requests[2]) == (
        "Your reply was empty. Use the output above to answer my request, or go on with a tool call "
        "if it is not done."
    )
    assert of(events, Response)[-1].content == "It is 42." and len(s.requests) == 3


async def test_a_reply_that_repeats_an_earlier_one_after_an_action_gets_a_nudge(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    # As Qwen2.5-Coder-1.5B did: its reply made an action, and after the output it sent the same
    # reply again (its block is not run twice; the reply ignores the output).
    first = "To list them:\n\n```python\nprint('alpha.py beta.py')\n```\n\nThis lists the files."
    s = script([first], [first], ["The files are alpha.py and beta.py."])
    async with make_agent(s, executor, tmp_path, action_protocol="text") as agent:
        events = await run(agent, "List the .py files and name them.")
    assert outputs(events) == ["alpha.py beta.py"]
    assert [n.reason for n in of(events, Nudge)] == [
        "the reply repeats an earlier one and ignores the output since"
    ]
    assert last_user_text(s.requests[2]) == (
        "That is your previous reply again: it does not use the output of your code. "
        "Answer my request with what the output shows."
    )
    assert of(events, Response)[-1].content == "The files are alpha.py and beta.py."
    # the same reply again, with no action since the nudge: the turn ends (a nudge costs a step)
    s = script([first], [first], [first])
    async with make_agent(s, executor, tmp_path, action_protocol="text") as agent:
        events = await run(agent, "List them.")
    assert len(of(events, Nudge)) == 1 and len(s.requests) == 3
    # an identical reply with nothing run in between is not a repeat; `tools` never nudges
    s = script(["Hello."], ["Hello."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        await run(agent, "hi")
        events = await run(agent, "hi")
    assert not of(events, Nudge)
    s = script([Code("print(1)")], ["Ran it."], [Code("print(2)", call_id="c2")], ["Ran it."])
    async with make_agent(s, executor, tmp_path, action_protocol="tools") as agent:
        events = await run(agent, "go")
    assert not of(events, Nudge) and len(s.requests) == 2


async def test_auto_nudges_a_reply_that_tells_how_to_do_it_after_a_step_that_worked(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    # As Qwen2.5-Coder-1.5B did, asked to count lines with `wc -l`: it read the file with the file
    # tool, then answered with a script for the user to run. Told so, it runs the code.
    from tests.scripted import Call

    (tmp_path / "rows.csv").write_text("a\nb\n")
    howto = (
        "Here's how you can do it:\n\n```python\nprint(len(open('rows.csv').readlines()))\n```\n\n"
        "This code will print the number of lines."
    )
    s = script(
        [Call("filesystem_read_text_file", {"path": "rows.csv"})],
        [howto],
        [f"```python\nprint(len(open({str(tmp_path / 'rows.csv')!r}).readlines()))\n```"],
        ["It has 2 lines."],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Count the lines of rows.csv.")
    assert [n.reason for n in of(events, Nudge)] == ["the reply shows code to run instead of running it"]
    assert last_user_text(s.requests[2]) == (
        "You told me how to do it instead of doing it. If the output above has what my request asks "
        "for, write the answer from it. Else call `ipybox_execute_ipython_cell` now with the code."
    )
    assert outputs(events)[-1] == "2" and of(events, Response)[-1].content == "It has 2 lines."
    # told so, it answers and tells how again (Qwen2.5-Coder-1.5B after a subagent's result): the
    # answer; its block does not run
    s = script(
        [Call("filesystem_read_text_file", {"path": "rows.csv"})], [howto], [f"It has 2 lines.\n\n{howto}"]
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Count the lines of rows.csv.")
    assert len(of(events, Nudge)) == 1 and not outputs(events) and len(s.requests) == 3
    assert of(events, Response)[-1].content.startswith("It has 2 lines.")
    # an answer that shows code without telling the user to run it is an answer; `tools` never nudges
    for protocol, reply in (("auto", "Done. The count was:\n```python\nprint(2)\n```"), ("tools", howto)):
        s = script([Call("filesystem_read_text_file", {"path": "rows.csv"})], [reply])
        async with make_agent(s, executor, tmp_path, action_protocol=protocol) as agent:
            events = await run(agent, "Count the lines of rows.csv.")
        assert not of(events, Nudge) and len(s.requests) == 2, protocol


async def test_a_turn_gets_a_second_nudge_only_after_an_action_since_the_first(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        ["The value is 12345."],  # a claim: nudged
        [Code("x = 12345")],
        [""],  # empty after an action since the nudge: nudged again
        [""],  # a third: the turn ends
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Compute it.")
    assert [n.reason for n in of(events, Nudge)] == [
        "the reply states a result that no code computed",
        "the reply was empty",
    ]
    assert len(s.requests) == 4


async def test_a_claim_after_a_failed_action_gets_a_nudge(executor: KernelExecutor, tmp_path: Path) -> None:
    from tests.scripted import Call

    target = tmp_path / "missing.txt"
    s = script(
        [Call("filesystem_read_text_file", {"path": "missing.txt"})],
        ["<tool_response>\nCreated the file missing.txt.\n</tool_response>"],
        [Call("filesystem_write_text_file", {"path": "missing.txt", "content": "created"}, call_id="c2")],
        ["Created missing.txt."],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Read missing.txt; if it does not exist, create it containing: created")
    assert [n.reason for n in of(events, Nudge)] == ["the reply claims results no action produced"]
    assert last_user_text(s.requests[2]).startswith(
        "Your last action failed, so what your reply states did not happen."
    )
    assert target.read_text() == "created"
    # after an action that worked, the same words end the turn
    s = script([Call("filesystem_read_text_file", {"path": "missing.txt"})], ["The file has been read."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Read missing.txt")
    assert not of(events, Nudge) and len(s.requests) == 2


async def test_the_text_prompt_names_no_tool_it_does_not_send(tmp_path: Path) -> None:
    from freeact_tui.agent.prompts import build_system_prompt

    text = build_system_prompt(tmp_path, protocol="text")
    assert "filesystem_" not in text and "ipybox_" not in text and "## Files" not in text
    assert "\n\n\n" not in text
    for protocol in ("tools", "auto"):  # the tool protocols still describe the file tools
        assert "`filesystem_edit_text_file`" in build_system_prompt(tmp_path, protocol=protocol)


async def test_auto_runs_the_block_a_model_writes_when_nudged(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        [Code("secret = 41")],
        ["Set."],
        ["The value of `secret + 1` is 42."],
        ["```python\nprint(secret + 1)\n```"],
        ["It printed 42."],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        await run(agent, "Set secret = 41.")
        events = await run(agent, "Print secret + 1.")
    assert [n.reason for n in of(events, Nudge)] == ["the reply states a result that no code computed"]
    assert last_user_text(s.requests[3]) == (
        "You did not run any code for my last request, so you do not know the result. "
        "Call `ipybox_execute_ipython_cell` now with the code."
    )
    assert outputs(events) == ["42"] and not of(events, ProtocolSwitch)
    assert of(events, Response)[-1].content == "It printed 42."


async def test_a_block_that_calls_the_code_tool_as_a_function_runs_its_code() -> None:
    text = "```python\nipybox_execute_ipython_cell('!rm keep.txt')\n```\n```\nipybox_execute_ipython_cell(code=\"x = 1\")\n```"
    assert code_blocks(text) == [TextAction("python", "!rm keep.txt"), TextAction("python", "x = 1")]
    kept = "```python\nipybox_execute_ipython_cell(f'{x}')\nprint(1)\n```"
    assert code_blocks(kept) == [TextAction("python", "ipybox_execute_ipython_cell(f'{x}')\nprint(1)")]


async def test_auto_does_not_run_the_call_that_just_failed_again(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    from tests.scripted import Call

    (tmp_path / "keep.txt").write_text("important\n")
    empty_edit = {"path": "keep.txt", "old_text": "", "new_text": ""}
    s = script(
        [Call("filesystem_edit_text_file", empty_edit)],
        [Call("filesystem_edit_text_file", empty_edit, call_id="c2")],
        ["```python\n!rm keep.txt\n```"],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "Delete keep.txt", decide=lambda _: False)
    returns = list({r.tool_call_id: str(r.content) for r in s.tool_returns()}.values())
    assert "old_text is empty" in returns[0]
    assert returns[1].startswith("This `filesystem_edit_text_file` call just failed the same way (")
    assert "with Python code in `ipybox_execute_ipython_cell`" in returns[1]
    # the block written after the failure is the next step: it is asked for, and the user says no
    assert [r.tool_call.command for r in of(events, ApprovalRequest) if hasattr(r.tool_call, "command")] == [
        "rm keep.txt"
    ]
    assert (tmp_path / "keep.txt").read_text() == "important\n" and len(s.requests) == 3
    # the same call after another step runs again; refused again and again, its refusal names the error
    # once (never the refusal before it, #40), and the third step in a row without progress ends the turn
    s = script(
        [Code("1 / 0")],
        [Code("print('between')", call_id="c2")],
        [Code("1 / 0", call_id="c3")],
        [Code("1 / 0", call_id="c4")],
        [Code("1 / 0", call_id="c5")],
        ["Gave up."],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "divide")
    assert len(of(events, ApprovalRequest)) == 3  # c1, c2, c3 ran
    errors = of(events, AgentError)
    assert len(errors) == 1 and errors[0].kind == "stalled" and "ZeroDivisionError" in errors[0].message
    assert len(s.requests) == 5
    refused = {r.tool_call_id: str(r.content) for r in s.tool_returns()}
    assert refused["c4"] == (
        "This is the code that just failed (ZeroDivisionError: division by zero). "
        "Do not repeat it: change it to fix the cause."
    )
