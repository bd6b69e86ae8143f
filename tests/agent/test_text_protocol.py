"""The text action protocol: code blocks in the reply are actions, run in a real kernel like tool calls."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.policy.text_protocol import (
    RESULTS_KEY,
    SWITCH_KEY,
    TextAction,
    code_blocks,
    text_actions,
)
from freeact_tui.events import (
    AgentError,
    ApprovalRequest,
    CodeExecutionOutput,
    ProtocolSwitch,
    Response,
    UsageUpdate,
)
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.store import transcript as tr
from freeact_tui.toolcalls import CODE_TOOL, CodeAction, ShellAction, ShellScript
from tests import helpers
from tests.helpers import freeact_load, of, run
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

# Every agent here speaks the text protocol unless a test says otherwise.
make_agent = partial(helpers.make_agent, action_protocol="text")


def user_texts(messages: list[object]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


async def test_code_blocks_are_the_closed_python_and_shell_fences_in_order() -> None:
    text = (
        "Plan:\n\n```python\nx = 1\n```\n\n```json\n{}\n```\n\n  ```bash\n  echo hi\n  ```\n"
        "````py\nprint('```')\n````\n~~~sh\nls\n~~~\n```python\nunclosed = True\n"
    )
    assert code_blocks(text) == [
        TextAction("python", "x = 1"),
        TextAction("bash", "echo hi"),
        TextAction("python", "print('```')"),
        TextAction("bash", "ls"),
    ]
    assert TextAction("bash", "echo hi").code == "%%bash\necho hi"
    assert code_blocks("no code here, `inline` only") == []


async def test_tool_calls_written_as_text_are_actions_when_there_is_no_code_block() -> None:
    text = (
        'Calling: <tool_call>{"name": "python", "arguments": {"code": "print(1)"}}</tool_call> and '
        '<tools>{"name": "x", "arguments": "{\\"code\\": \\"print(2)\\"}"}</tools> <tools>{broken</tools>'
    )
    assert text_actions(text) == [TextAction("python", "print(1)"), TextAction("python", "print(2)")]
    assert text_actions(text + "\n```python\nprint(3)\n```") == [TextAction("python", "print(3)")]


async def test_blocks_are_approved_run_and_fed_back_until_a_reply_without_one(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        ["I'll compute it.\n\n```python\nanswer = 6 * 7\nprint(answer)\n```\n"],
        ["Two steps:\n```python\nprint(answer + 1)\n```\nthen\n```python\nprint(answer + 2)\n```"],
        ["The answer is **42**."],
    )
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "what is 6*7?")
        history = list(agent.history)
    requests = of(events, ApprovalRequest)
    assert [r.tool_call for r in requests] == [
        CodeAction("answer = 6 * 7\nprint(answer)"),
        CodeAction("print(answer + 1)"),
        CodeAction("print(answer + 2)"),
    ]
    outputs = [(o.text or "").strip() for o in of(events, CodeExecutionOutput)]
    assert outputs == ["42", "43", "44"]  # one kernel, state kept between blocks and replies
    assert of(events, Response)[-1].content == "The answer is **42**."
    assert not of(events, AgentError)
    # no tool schemas are sent; the outputs go back as the next user message
    assert all(not info.function_tools for info in s.infos)
    second, third = user_texts(s.requests[1]), user_texts(s.requests[2])
    assert "42" in second[-1]
    assert "Output of code block 1:\n43" in third[-1] and "Output of code block 2:\n44" in third[-1]
    # the system prompt states the convention
    system = s.requests[0][0].parts[0]
    assert "```python" in str(system.content) and CODE_TOOL not in str(system.content)
    # stored as plain user/assistant messages: no tool calls anywhere
    assert not [p for m in history for p in m.parts if isinstance(p, ToolCallPart)]
    results = [m for m in history if isinstance(m, ModelRequest) and m.metadata and RESULTS_KEY in m.metadata]
    assert [[a["outcome"] for a in m.metadata[RESULTS_KEY]] for m in results] == [["ok"], ["ok", "ok"]]


async def test_shell_parts_in_a_python_block_and_a_bash_block_are_approved_like_tool_actions(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    target = tmp_path / "should_not_exist"
    s = script(
        ["```python\n!echo one && echo two | tr t T\n```\n\n```bash\necho from-bash\necho $((6 * 7))\n```"],
        [f"```python\n!echo three && touch {target}\n```"],
        ["done"],
    )

    def decide(r: ApprovalRequest) -> bool:
        return not (isinstance(r.tool_call, ShellAction) and r.tool_call.command.startswith("touch"))

    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "shell", decide=decide)
        history = list(agent.history)
    calls = [r.tool_call for r in of(events, ApprovalRequest)]
    shells = [c.command for c in calls if isinstance(c, ShellAction)]
    assert shells == ["echo one", "echo two", "tr t T", "echo three", f"touch {target}"]
    assert ShellScript("echo from-bash\necho $((6 * 7))") in calls
    assert CodeAction("%%bash\necho from-bash\necho $((6 * 7))") in calls
    texts = [o.text or "" for o in of(events, CodeExecutionOutput)]
    assert "one" in texts[0] and "Two" in texts[0] and "from-bash" in texts[1] and "42" in texts[1]
    # the rejected part stopped the turn; the model is told in the stored results message
    assert not target.exists()
    assert len(s.requests) == 2
    last = history[-1]
    assert isinstance(last, ModelRequest) and last.metadata is not None
    assert last.metadata[RESULTS_KEY][0]["outcome"] == "rejected"
    assert f"rejected `touch {target}`" in user_texts([last])[0]


async def test_an_error_stops_the_later_blocks_and_the_model_is_told(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        ["```python\n1 / 0\n```\n```python\nprint('never')\n```"],
        ["It failed: division by zero."],
    )
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "divide")
    assert len(of(events, ApprovalRequest)) == 1
    told = user_texts(s.requests[1])[-1]
    assert (
        "ZeroDivisionError" in told and "(error)" in told and "1 code block(s) after it did not run" in told
    )


async def test_auto_switches_when_the_model_writes_code_instead_of_calling_the_tool(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        ['<tools>{"name": "python"}</tools>\n```python\nprint(2 ** 10)\n```'],
        ["```python\nprint('again')\n```"],
        ["1024"],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "2**10?")
        history = list(agent.history)
    switches = of(events, ProtocolSwitch)
    assert len(switches) == 1 and switches[0].protocol == "text" and "code block" in switches[0].reason
    assert [(o.text or "").strip() for o in of(events, CodeExecutionOutput)] == ["1024", "again"]
    assert s.infos[0].function_tools and not s.infos[1].function_tools  # tools until the switch
    assert "Tool calls are off" in user_texts(s.requests[1])[-1]
    assert any(isinstance(m, ModelRequest) and m.metadata and SWITCH_KEY in m.metadata for m in history)


async def test_auto_does_not_switch_a_model_that_calls_tools(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script([Code("print('via tool')")], ["Here is how:\n```python\nprint('example')\n```"])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "show me")
    assert not of(events, ProtocolSwitch)
    assert [(o.text or "").strip() for o in of(events, CodeExecutionOutput)] == ["via tool"]
    assert len(s.requests) == 2


async def test_auto_switches_after_broken_tool_calls(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(
        [Code("print(1)", tool="python")],
        [Code("print(1)", tool="run_code", call_id="c2")],
        ["```python\nprint('text now')\n```"],
        ["ok"],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        events = await run(agent, "go")
    assert (
        len(of(events, ProtocolSwitch)) == 1
        and "broken tool calls 2 times" in of(events, ProtocolSwitch)[0].reason
    )
    assert [(o.text or "").strip() for o in of(events, CodeExecutionOutput)] == ["text now"]
    assert not of(events, AgentError)
    assert "tool calls are off" in user_texts(s.requests[2])[-1]


async def test_tools_mode_never_runs_code_blocks(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["Like this:\n```python\nprint('no')\n```"])
    async with make_agent(s, executor, tmp_path, action_protocol="tools") as agent:
        events = await run(agent, "show")
    assert not of(events, ApprovalRequest) and len(s.requests) == 1


async def test_a_text_session_loads_in_freeact_and_resumes_here(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(["```python\nsaved = 'kept'\nprint(saved)\n```"], ["Stored."])
    async with make_agent(s, executor, tmp_path, action_protocol="auto") as agent:
        await run(agent, "store a value")
        session_id = agent.session_id
    path = tmp_path / "sessions" / session_id / "main.jsonl"
    loaded = freeact_load(path)
    assert [type(m) for m in loaded] == [ModelRequest, ModelResponse, ModelRequest, ModelResponse]
    assert not [p for m in loaded for p in m.parts if isinstance(p, ToolCallPart)]
    for line in path.read_text().splitlines():  # plain user/assistant messages
        kinds = {p["part_kind"] for p in json.loads(line)["message"]["parts"]}
        assert kinds <= {"system-prompt", "user-prompt", "text"}
    # the transcript shows the block as an action with its result
    entries = list(tr.walk(loaded))
    calls = [e for e in entries if isinstance(e, tr.CallEntry)]
    results = [e for e in entries if isinstance(e, tr.ResultEntry)]
    assert [c.call for c in calls] == [CodeAction("saved = 'kept'\nprint(saved)")]
    assert results[0].text.strip() == "kept" and results[0].outcome == "ok"
    assert not [e for e in entries if isinstance(e, tr.PromptEntry) and "Output of" in e.text]
    # resumed (auto): still text, the kernel state is there, no tools sent
    s2 = script(["```python\nprint(saved.upper())\n```"], ["KEPT"])
    async with make_agent(s2, executor, tmp_path, action_protocol="auto", session_id=session_id) as agent:
        events = await run(agent, "shout it")
    assert not of(events, ProtocolSwitch)
    assert [(o.text or "").strip() for o in of(events, CodeExecutionOutput)] == ["KEPT"]
    assert not s2.infos[0].function_tools
    assert len(s2.requests[0]) == 5  # the stored history went to the model


async def test_usage_is_estimated_where_the_model_reports_none(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def silent(messages: list[object], info: AgentInfo) -> AsyncIterator[str]:
        yield "x" * 400

    model = FunctionModel(stream_function=silent, model_name="silent")  # type: ignore[arg-type]
    agent = Agent(model, working_dir=tmp_path, executor=executor, permissions=PermissionRules(None))
    from freeact_tui.agent.usage import UsageMeter

    meter = UsageMeter("main")
    zero = ModelResponse(parts=[TextPart("y" * 40)])
    update = meter.of_response(zero, 250)
    assert (update.input_tokens, update.output_tokens, update.estimated) == (250, 10, True)
    async with agent:
        events = [e async for e in agent.stream("hi")]
    usage = of(events, UsageUpdate)[-1]
    assert usage.output_tokens > 0 and not usage.estimated  # FunctionModel reports usage of its own


@pytest.mark.parametrize("protocol", ["tools", "text", "auto"])
async def test_system_prompt_and_tool_schemas_fit_the_budget(protocol: str) -> None:
    from bench.prompt_budget import BUDGET, prompt_parts
    from freeact_tui.agent.usage import estimate_tokens

    system, schemas = prompt_parts(protocol)
    assert estimate_tokens(system) + estimate_tokens(schemas) <= BUDGET
    assert ("```python" in system) == (protocol != "tools")
    assert (schemas == "") == (protocol == "text")


async def test_cancel_while_a_block_runs_keeps_a_valid_history(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    from freeact_tui.events import Cancelled, CodeExecutionOutputChunk

    s = script(
        [
            "```python\nprint('first')\n```\n```python\nimport time\nprint('started', flush=True)\ntime.sleep(60)\n```"
        ],
        ["Fine."],
    )
    async with make_agent(s, executor, tmp_path) as agent:
        events = []
        async for event in agent.stream("slow"):
            events.append(event)
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(True)
            if isinstance(event, CodeExecutionOutputChunk) and "started" in event.text:
                agent.cancel()
        assert of(events, Cancelled)
        last = agent.history[-1]
        assert isinstance(last, ModelRequest) and last.metadata is not None
        assert [a["outcome"] for a in last.metadata[RESULTS_KEY]] == ["ok", "interrupted"]
        assert "interrupted by the user" in user_texts([last])[0]
        after = await run(agent, "go on")
    assert of(after, Response)[-1].content == "Fine."


async def test_the_auto_rule_counts_only_tool_calls_that_ran() -> None:
    from pydantic_ai.messages import ToolReturnPart

    from freeact_tui.agent.policy.reply import reply_policy
    from freeact_tui.agent.policy.text_protocol import text_actions

    def history(metadata: dict[str, object] | None) -> list[ModelRequest]:
        part = ToolReturnPart(CODE_TOOL, "out", tool_call_id="c1", metadata=metadata)
        return [ModelRequest(parts=[part])]

    blocks = text_actions("```python\nprint(1)\n```")
    protocol = reply_policy("auto")
    for meta in (
        {"outcome": "interrupted"},
        {"outcome": "rejected"},
        {"outcome": "error", "malformed": True},
    ):
        assert protocol.switch_reason(blocks, history(meta)) is not None, meta
    for meta in ({"outcome": "ok"}, {"outcome": "error"}, None):  # None: a freeact session stores no outcome
        assert protocol.switch_reason(blocks, history(meta)) is None, meta
    assert reply_policy("tools").switch_reason(blocks, []) is None
