"""The agent loop end to end: scripted model streams, a real ipybox kernel, real session files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolReturnPart, UserPromptPart

from freeact_tui.agent.agent import Agent
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Response,
    ResponseChunk,
    Thoughts,
    ThoughtsChunk,
    ToolOutput,
    UsageUpdate,
)
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.store.event_record import EVENT_KEY
from freeact_tui.toolcalls import CodeAction, ShellAction, ShellScript
from tests.helpers import make_agent, of, run
from tests.scripted import Code, Fail, Think, Wait, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]


def session_lines(tmp_path: Path, agent: Agent) -> list[dict[str, object]]:
    path = tmp_path / "sessions" / agent.session_id / "main.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_text_only_turn_streams_and_persists(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["Hello ", "world"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "hi")
    assert "".join(e.content for e in of(events, ResponseChunk)) == "Hello world"
    assert [e.content for e in of(events, Response)] == ["Hello world"]
    assert of(events, UsageUpdate)[-1].requests == 1
    lines = session_lines(tmp_path, agent)
    assert [line["message"]["kind"] for line in lines] == ["request", "response"]  # type: ignore[index]
    assert all(line["v"] == 1 and "agent_id" not in line["meta"] for line in lines)  # type: ignore[operator]


async def test_code_action_runs_in_real_kernel_and_result_reaches_model(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        [Think("I will compute."), Code("x = 6 * 7\nprint(x)")],
        ["The answer is 42."],
    )
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "what is 6*7?")
    assert "".join(e.content for e in of(events, ThoughtsChunk)) == "I will compute."
    assert of(events, Thoughts)[0].content == "I will compute."
    (request,) = of(events, ApprovalRequest)
    assert request.tool_call == CodeAction("x = 6 * 7\nprint(x)")
    assert request.corr_id == "call-1" and request.agent_id == "main"
    outputs = of(events, CodeExecutionOutput)
    assert outputs[0].text == "42" and not outputs[0].is_error
    assert s.last_tool_return() == "42"
    assert of(events, Response)[-1].content == "The answer is 42."
    # the kernel is stateful: x survives into the next turn
    s.steps += [[Code("print(x + 1)", call_id="call-2")], ["ok"]]
    async with make_agent(s, executor, tmp_path, session_id=agent.session_id) as again:
        events = await run(again, "and plus one?")
    assert of(events, CodeExecutionOutput)[0].text == "43"


async def test_rejection_ends_turn_and_next_turn_works(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("print('should not run')")], ["Fine, here is text."])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "do it", decide=lambda r: False)
        assert of(events, CodeExecutionOutput) == []
        assert len(s.requests) == 1  # the model is not called again after a rejection
        returns = [p for p in agent.history[-1].parts if isinstance(p, ToolReturnPart)]
        assert "rejected" in str(returns[0].content)
        assert returns[0].metadata == {  # the outcome and the decision, for a resumed UI
            "outcome": "rejected",
            "approvals": [{"call": {"kind": "code"}, "approved": False, "by": "user"}],
        }
        events = await run(agent, "just answer")
    assert of(events, Response)[-1].content == "Fine, here is text."
    # the model got a valid history: the rejected call has its return before the new prompt
    sent = s.requests[-1]
    assert isinstance(sent[-1], ModelRequest)
    kinds = [type(p).__name__ for p in sent[-1].parts]
    assert kinds == ["ToolReturnPart", "UserPromptPart"]


async def test_two_tool_calls_in_one_response(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("print('a')", call_id="c1"), Code("print('b')", call_id="c2")], ["done"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "two")
    outputs = {e.corr_id: e.text for e in of(events, CodeExecutionOutput)}
    assert outputs == {"c1": "a", "c2": "b"}
    returns = {p.tool_call_id: p.content for p in s.tool_returns()}
    assert returns == {"c1": "a", "c2": "b"}


async def test_each_part_of_a_composite_shell_command_is_approved(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script([Code("word = 'hi'\n!echo {word} && echo b | tr b c")], ["ok"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "shell")
    shells = [e.tool_call for e in of(events, ApprovalRequest) if isinstance(e.tool_call, ShellAction)]
    assert [c.command for c in shells] == ["echo hi", "echo b", "tr b c"]
    text = of(events, CodeExecutionOutput)[0].text
    assert "hi" in text and "c" in text


async def test_rejecting_one_shell_part_stops_the_command(executor: KernelExecutor, tmp_path: Path) -> None:
    target = tmp_path / "should_not_exist"
    s = script([Code(f"!echo one && touch {target}")], ["ok"])

    def decide(r: ApprovalRequest) -> bool:
        return not (isinstance(r.tool_call, ShellAction) and r.tool_call.command.startswith("touch"))

    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "shell", decide=decide)
    assert not target.exists()
    # No part runs unless all are approved; the rejection is one line, not a traceback (which used to
    # quote the cell, `echo one` included).
    assert (
        of(events, CodeExecutionOutput)[0].text == "rejected: the cell stopped here (ApprovalRejectedError)"
    )
    returns = [p for p in agent.history[-1].parts if isinstance(p, ToolReturnPart)]
    assert f"rejected `touch {target}`" in str(returns[0].content)
    assert len(s.requests) == 1


async def test_deny_rule_refuses_without_asking_and_tells_the_model(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    target = tmp_path / "denied"
    rules = PermissionRules(None, defaults=False)
    rules.add("code", "*", scope="session")
    rules.add("shell", "echo *", scope="session")
    rules.add("shell", "touch *", scope="session", effect="deny")
    s = script([Code(f"!echo one && touch {target}")], [Code("print('x')", call_id="c2")], ["ok"])

    def nobody(r: ApprovalRequest) -> bool:
        raise AssertionError(f"asked about {r.tool_call}")

    async with make_agent(s, executor, tmp_path, permissions=rules) as agent:
        events = await run(agent, "shell", decide=nobody)
        assert not target.exists()
        denied = [e for e in of(events, ApprovalRequest) if e.decision and not e.decision.approved]
        assert len(denied) == 1 and denied[0].pre_approved is True  # decided by a rule, not a person
        returns = [p for p in agent.history[-1].parts if isinstance(p, ToolReturnPart)]
        assert "denied by the permission rule `shell:touch *`" in str(returns[0].content)
        # "reject and remember" adds a deny rule (SDK): the next code action is refused by it
        rules = PermissionRules(None, defaults=False)
        agent.permissions = rules

        def reject_and_remember(r: ApprovalRequest) -> None:
            r.approve(False, remember="session", pattern="*")

        await run(agent, "again", decide=reject_and_remember)
    assert rules.check(CodeAction("anything")) == "deny"


async def test_bash_cell_is_one_script_approval(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("%%bash\necho from-bash\necho second")], ["ok"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "bash")
    scripts = [e.tool_call for e in of(events, ApprovalRequest) if isinstance(e.tool_call, ShellScript)]
    assert scripts == [ShellScript("echo from-bash\necho second")]
    assert "from-bash" in (of(events, CodeExecutionOutput)[0].text or "")


async def test_a_cell_of_only_shell_is_asked_once_per_part(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(
        [Code("# list\n!echo one && echo two\n\n!echo three")],
        [Code("%%bash\necho four", call_id="c2")],
        [Code("n = 5\n!echo five", call_id="c3")],  # Python too: the code is asked, then its shell part
        ["ok"],
    )
    asked: list[str] = []

    def decide(r: ApprovalRequest) -> bool:
        asked.append(f"{r.tool_call.kind}: {r.tool_call.display_text()}")
        return True

    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "shell", decide=decide)
    assert asked == [
        "shell: echo one",
        "shell: echo two",
        "shell: echo three",
        "script: echo four",
        "code: n = 5\n!echo five",
        "shell: echo five",
    ]
    codes = [e for e in of(events, ApprovalRequest) if isinstance(e.tool_call, CodeAction)]
    assert [(c.decision.approved, c.decision.per_part) for c in codes] == [
        (True, True),
        (True, True),
        (True, False),
    ]
    text = "".join(o.text or "" for o in of(events, CodeExecutionOutput))
    assert all(word in text for word in ("one", "two", "three", "four", "five"))


async def test_a_shell_only_cell_still_obeys_code_rules(executor: KernelExecutor, tmp_path: Path) -> None:
    target = tmp_path / "never"
    rules = PermissionRules(None, defaults=False)
    rules.add("code", "*", scope="session", effect="deny")
    s = script([Code(f"!touch {target}")], ["ok"])

    def nobody(r: ApprovalRequest) -> bool:
        raise AssertionError(f"asked about {r.tool_call}")

    async with make_agent(s, executor, tmp_path, permissions=rules) as agent:
        events = await run(agent, "touch", decide=nobody)
    (request,) = of(events, ApprovalRequest)
    assert request.decision is not None and request.decision.by_rule and not request.decision.approved
    assert not target.exists()


async def test_subprocess_is_refused(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("import subprocess\nsubprocess.run(['echo', 'sneaky'])")], ["ok"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "sneak")
    out = of(events, CodeExecutionOutput)[0]
    assert out.is_error and "not allowed" in (out.text or "")
    assert not [e for e in of(events, ApprovalRequest) if isinstance(e.tool_call, ShellAction)]


async def test_cancel_while_model_streams_keeps_partial_text(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    s = script(["partial answer", Wait(gate), " never"], ["next turn ok"])
    async with make_agent(s, executor, tmp_path) as agent:
        events: list[AgentEvent] = []
        async for event in agent.stream("go"):
            events.append(event)
            if isinstance(event, ResponseChunk):
                agent.cancel()
        assert of(events, Cancelled)[0].phase == "model"
        last = agent.history[-1]
        assert isinstance(last, ModelResponse) and last.parts == [TextPart("partial answer")]
        events = await run(agent, "again")
    assert of(events, Response)[-1].content == "next turn ok"


async def test_cancel_during_execution_interrupts_kernel(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("import time\nprint('started', flush=True)\ntime.sleep(30)")], ["after"])
    async with make_agent(s, executor, tmp_path) as agent:
        events: list[AgentEvent] = []
        started = asyncio.get_running_loop().time()
        async for event in agent.stream("sleep"):
            events.append(event)
            if isinstance(event, ApprovalRequest):
                event.approve(True)
            if isinstance(event, CodeExecutionOutputChunk):
                agent.cancel()
        assert asyncio.get_running_loop().time() - started < 10
        assert of(events, Cancelled)[0].phase == "execution"
        returns = [p for p in agent.history[-1].parts if isinstance(p, ToolReturnPart)]
        assert "Interrupted" in str(returns[0].content)
        events = await run(agent, "next")
    assert of(events, Response)[-1].content == "after"


async def test_cancel_during_approval_wait(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("print(1)")], ["after"])
    async with make_agent(s, executor, tmp_path) as agent:
        events: list[AgentEvent] = []
        async for event in agent.stream("wait"):
            events.append(event)
            if isinstance(event, ApprovalRequest):
                agent.cancel()
        assert of(events, Cancelled)[0].phase == "approval"
        assert of(events, CodeExecutionOutput) == []
        (request,) = of(events, ApprovalRequest)
        assert request.decision is not None and not request.decision.approved  # no dialog left waiting


async def test_max_turns_stops_the_loop(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("print(1)")], [Code("print(2)", call_id="c2")], ["never reached"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "loop", max_turns=1)
    assert of(events, AgentError)[0].kind == "limit"
    assert len(s.requests) == 1


async def test_execution_timeout_excludes_approval_wait(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("!echo slow-approval")], [Code("import time; time.sleep(5)", call_id="c2")], ["end"])

    async def slow_decide(events: list[AgentEvent], agent: Agent) -> None:
        async for event in agent.stream("timeouts"):
            events.append(event)
            if isinstance(event, ApprovalRequest) and not event.decided:
                if isinstance(event.tool_call, ShellAction):
                    await asyncio.sleep(2.0)  # longer than the timeout, but not counted
                event.approve(True)

    async with make_agent(s, executor, tmp_path, execution_timeout=1.5) as agent:
        events: list[AgentEvent] = []
        await slow_decide(events, agent)
    first, second = of(events, CodeExecutionOutput)
    assert "slow-approval" in (first.text or "") and not first.is_error
    assert second.is_error and "timed out after 1.5s" in (second.text or "")


async def test_model_error_rolls_back_turn(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["first answer"], [Fail(ModelHTTPError(401, "scripted", body={"error": "bad key"}))])
    async with make_agent(s, executor, tmp_path) as agent:
        await run(agent, "one")
        before = len(agent.history)
        events = await run(agent, "two")
        err = of(events, AgentError)[0]
        assert err.kind == "model" and "401" in err.message
        assert len(agent.history) == before
        *kept, record = session_lines(tmp_path, agent)  # the turn's lines went; the error's record came
        assert len(kept) == before
        assert record["message"]["metadata"][EVENT_KEY]["message"] == err.message  # type: ignore[index]


async def test_kernel_death_is_reported_and_recovered(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("import os\nos._exit(1)")], [Code("print('alive')", call_id="c2")], ["ok"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "die")
        assert of(events, AgentError)[0].kind == "kernel"
        events = await run(agent, "again")
    assert of(events, CodeExecutionOutput)[0].text == "alive"


async def test_plot_comes_back_as_png(executor: KernelExecutor, tmp_path: Path) -> None:
    code = "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"
    s = script([Code(code)], ["plotted"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "plot")
    images = of(events, CodeExecutionOutput)[0].images
    assert len(images) == 1 and images[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(images[0]) in s.last_tool_return()


async def test_oversized_result_moves_to_file(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("print('A' * 5000 + 'MIDDLE' + 'Z' * 5000)")], ["big"])
    async with make_agent(
        s, executor, tmp_path, tool_result_inline_max_bytes=1024, tool_result_preview_chars=200
    ) as agent:
        events = await run(agent, "big output")
    seen = s.last_tool_return()
    assert len(seen) < 1000 and "MIDDLE" not in seen
    saved = list((tmp_path / "sessions" / agent.session_id / "tool-results").iterdir())
    assert len(saved) == 1 and "MIDDLE" in saved[0].read_text() and str(saved[0]) in seen
    output = of(events, CodeExecutionOutput)[0]
    assert output.truncated and output.result_path == saved[0]  # the log links the full result


async def test_each_parallel_call_has_its_own_phase(executor: KernelExecutor, tmp_path: Path) -> None:
    """Action A runs in the kernel while call B waits its turn: the turn is executing, not approving. B is
    read and asked only once A has finished (#42, F1): cancelled during A, it was never asked."""
    slow = "import time\nprint('started', flush=True)\ntime.sleep(30)"
    s = script([Code(slow, call_id="a"), Code("print('b')", call_id="b")], ["after"])
    async with make_agent(s, executor, tmp_path) as agent:
        events: list[AgentEvent] = []
        phases: list[str] = []
        async for event in agent.stream("two calls"):
            events.append(event)
            if isinstance(event, ApprovalRequest) and event.corr_id == "a":
                event.approve(True)  # b stays open
            if isinstance(event, CodeExecutionOutputChunk):
                phases.append(agent.phase)
                agent.cancel()
        assert phases == ["execution"]
        assert of(events, Cancelled)[0].phase == "execution"
        assert [e.corr_id for e in of(events, ApprovalRequest)] == ["a"]  # b waited for a; never asked
    assert agent.phase == "idle"


async def test_usage_is_reported_once_per_request(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("print(1)")], ["done"])
    heard: list[AgentEvent] = []
    async with make_agent(s, executor, tmp_path) as agent:
        agent.subscribe(heard.append)
        events = await run(agent, "count")
    usage = of(events, UsageUpdate)
    assert [u.requests for u in usage] == [1, 2]  # in the turn's stream, once per model request
    assert not [e for e in heard if isinstance(e, UsageUpdate)]  # and not a second time to listeners


async def test_session_rule_pre_approves_next_matching_action(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script([Code("!echo first")], [Code("!echo second", call_id="c2")], ["ok"])
    asked: list[str] = []

    def decide(r: ApprovalRequest) -> bool:
        asked.append(r.tool_call.display_text())
        if isinstance(r.tool_call, ShellAction):
            r.approve(True, remember="session", pattern="echo *")
        return True

    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "echo twice", decide=decide)
    shells = [e for e in of(events, ApprovalRequest) if isinstance(e.tool_call, ShellAction)]
    assert [e.pre_approved for e in shells] == [False, True]
    assert "echo second" not in asked


async def test_resume_gives_model_the_history(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(["remembered"], ["yes I remember"])
    async with make_agent(s, executor, tmp_path) as agent:
        await run(agent, "remember the word banana")
    async with make_agent(s, executor, tmp_path, session_id=agent.session_id) as resumed:
        assert len(resumed.history) == 2
        await run(resumed, "what was the word?")
    prompts = [
        p.content
        for m in s.requests[-1]
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]
    assert prompts == ["remember the word banana", "what was the word?"]


async def test_approval_timeout_rejects(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Code("print('never')")], ["after"])
    async with make_agent(s, executor, tmp_path, approval_timeout=0.3) as agent:
        events = await run(agent, "nobody answers", decide=lambda r: None)
    assert of(events, CodeExecutionOutput) == []
    assert "No decision within 0.3 s" in of(events, ToolOutput)[0].content
    assert len(s.requests) == 1


async def test_transient_model_error_is_retried(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script([Fail(ModelHTTPError(503, "scripted", body={"error": "overloaded"}))], ["recovered"])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "flaky")
    assert of(events, AgentError) == []
    assert of(events, Response)[-1].content == "recovered"
    assert len(s.requests) == 2


async def test_unreachable_model_ends_turn_with_clear_message(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    # The agent's own retries are what is tested; the SDK's retries (backoff 0.5-8 s) only add time.
    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0)
    model = OpenAIChatModel("local", provider=OpenAIProvider(openai_client=client))
    agent = Agent(model, sessions_dir=tmp_path / "s", working_dir=tmp_path, executor=executor)
    agent.permissions = PermissionRules(None, defaults=False)
    async with agent:
        events = await run(agent, "hello?")
        assert agent.history == []  # rolled back
    (error,) = of(events, AgentError)
    assert error.kind == "model" and "rolled back" in error.message


async def test_unwritable_session_file_ends_turn_with_clear_message(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(["first answer"], ["never shown"])
    async with make_agent(s, executor, tmp_path) as agent:
        await run(agent, "first turn writes the file")
        history = tmp_path / "sessions" / agent.session_id / "main.jsonl"
        history.unlink()
        history.mkdir()  # writing now fails, even for root
        events = await run(agent, "second")
    (error,) = of(events, AgentError)
    assert "could not be saved" in error.message and "Traceback" not in error.message
    assert len(s.requests) == 1  # the turn stopped before asking the model
