"""Sessions written by this app's real agent load in REAL freeact 0.11, and freeact's load here.

freeact 0.11 needs Python 3.13, so it runs in a subprocess: ``FREEACT_PYTHON`` names a Python with
freeact 0.11 importable (``.ci/run`` makes one in ``.venv-freeact`` when a Python 3.13 exists).
Without it these tests skip. The sessions are written by the real agent (real ipybox kernel, one
kernel for the module; the subagent and the rewind start one more each); the model is scripted.
Every kind of record the store writes is in them: code actions with output, shell parts, a
rejected action, an image from code (sent as ``BinaryContent``), file-tool writes and edits with
diffs, a user shell command, an output moved to ``tool-results/``, a subagent task
(``sub-*.jsonl``), a compaction record, a rewind (archive + rewritten ``main.jsonl``), and the
text action protocol with its results and switch records.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.context.compaction import SUMMARY_INSTRUCTION
from freeact_tui.agent.policy.text_protocol import RESULTS_KEY, SWITCH_KEY
from freeact_tui.agent.rewind import rewind
from freeact_tui.events import AgentError, AgentEvent, ApprovalRequest, Cancelled, CodeExecutionOutputChunk
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.store.compaction import compaction_info
from freeact_tui.store.sessions import SessionStore
from freeact_tui.toolcalls import CODE_TOOL, EDIT_TEXT_TOOL, WRITE_TEXT_TOOL, CodeAction, ShellAction
from tests.freeact_peer import find_freeact
from tests.freeact_probe import normalize
from tests.scripted import Code, Script, Think, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

PROBE = Path(__file__).parents[1] / "freeact_probe.py"
PLOT = (
    "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
    "import matplotlib.pyplot as plt\nplt.figure(figsize=(1, 1)); plt.plot([0, 1]); plt.show()"
)
INLINE_MAX = 2000  # outputs larger than this go to tool-results/


def our_agent(model: Any, root: Path, working_dir: Path, executor: KernelExecutor, **kw: Any) -> Agent:
    """Our agent on the shared kernel, every action allowed (the tests decide nothing)."""
    return Agent(
        model,
        sessions_dir=root,
        working_dir=working_dir,
        executor=executor,
        permissions=PermissionRules(None, defaults=False),
        **kw,
    )


@pytest.fixture(scope="module")
def freeact_python() -> str:
    python, why = find_freeact()
    if python is None:
        pytest.skip(why)
    return python


def freeact(python: str, *args: str | Path) -> Any:
    """Run the probe with real freeact; its JSON answer (a failure shows freeact's traceback)."""
    done = subprocess.run([python, str(PROBE), *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"real freeact failed:\n{done.stderr}"
    return json.loads(done.stdout)


def freeact_load(python: str, root: Path, session_id: str, *agents: str) -> dict[str, list[dict[str, Any]]]:
    result: dict[str, list[dict[str, Any]]] = freeact(python, "load", root, session_id, *agents)
    assert result.pop("resumed main") == (result["main"] if "main" in agents else [])  # freeact's resume
    return result


def prompt_of(message: ModelMessage) -> str | None:
    """The text of the last user prompt part of a request (a note may come before it)."""
    if isinstance(message, ModelRequest):
        for part in reversed(message.parts):
            if isinstance(part, UserPromptPart):
                return part.content if isinstance(part.content, str) else str(part.content[0])
    return None


def routed(steps: dict[str, list[list[Any]]]) -> FunctionModel:
    """A scripted model: the reply to a conversation is picked by its latest known user prompt and
    how many replies came since (so the main agent, the subagent and the summariser share it)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        first = messages[0].parts[0] if isinstance(messages[0], ModelRequest) else None
        if first is not None and first.part_kind == "system-prompt" and first.content == SUMMARY_INSTRUCTION:
            yield "Summary: the user computed x = 42 with a code action."
            return
        for index in range(len(messages) - 1, -1, -1):
            prompt = prompt_of(messages[index])
            key = next((k for k in steps if prompt is not None and prompt.rstrip().endswith(k)), None)
            if key is not None:
                replies = sum(isinstance(m, ModelResponse) for m in messages[index:])
                step = steps[key][replies] if replies < len(steps[key]) else ["(done)"]
                for i, item in enumerate(step):
                    if isinstance(item, str):
                        yield item
                    elif isinstance(item, Think):
                        yield {i: DeltaThinkingPart(content=item.text)}
                    else:  # a tool call; args given as a string are sent as they are (broken JSON)
                        tool, args, call_id = item
                        raw = args if isinstance(args, str) else json.dumps(args)
                        yield {i: DeltaToolCall(name=tool, json_args=raw, tool_call_id=call_id)}
                return
        yield "(no script for this prompt)"

    return FunctionModel(stream_function=stream, model_name="routed")


def code(source: str, call_id: str) -> tuple[str, dict[str, Any], str]:
    return (CODE_TOOL, {"code": source}, call_id)


STEPS: dict[str, list[list[Any]]] = {
    "compute": [
        # U+2028 in the output: freeact splits lines with str.splitlines, so it must stay escaped
        [
            "Computing.",
            code("x = 6 * 7\nprint(x, 'naïve 😀\\u2028after')\n!echo shell-part-$((6*7))", "c-compute"),
        ],
        ["x is 42"],
    ],
    "reject this": [[code("print('REJECT me')", "c-reject")], ["Not run, then."]],
    "plot": [[code(PLOT, "c-plot")], ["A line."]],
    "files": [
        [(WRITE_TEXT_TOOL, {"path": "notes.txt", "content": "alpha\nbeta\n"}, "c-write")],
        [(EDIT_TEXT_TOOL, {"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}, "c-edit")],
        ["notes.txt now says alpha, gamma."],
    ],
    "big output": [[code("print('y' * 5000)", "c-big")], ["Lots of y."]],
    "broken calls": [
        [
            Think("The tool names are hard to remember."),
            ("no_such_tool", {"x": 1}, "c-unknown"),
            (CODE_TOOL, '{"code": "print(1)"', "c-badjson"),
        ],
        ["Sorry about that."],
    ],
    "slow": [[code("import time\nprint('started', flush=True)\ntime.sleep(60)", "c-slow")], ["(cancelled)"]],
    "delegate": [
        [("subagent_task", {"prompt": "sub: count", "max_turns": 3}, "c-task")],
        ["The subagent counted 3."],
    ],
    "sub: count": [[code("print(len('abc'))", "s-code")], ["3"]],
    "after compaction": [[code("print(x + 1)", "c-after")], ["43"]],
    "withdrawn": [[code("print('withdrawn')", "c-withdrawn")], ["gone soon"]],
    "after rewind": [["Fresh start after the rewind."]],
}


def decide(event: ApprovalRequest) -> bool:
    return not (isinstance(event.tool_call, CodeAction) and "REJECT" in event.tool_call.code)


async def run(agent: Agent, prompt: str) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    async for event in agent.stream(prompt):
        events.append(event)
        if isinstance(event, ApprovalRequest) and not event.decided:
            event.approve(decide(event))
        if isinstance(event, CodeExecutionOutputChunk) and "started" in event.text:
            agent.cancel()  # the user presses Esc while the action runs
    return events


@dataclass
class Written:
    root: Path
    session_id: str
    events: list[AgentEvent]

    @property
    def dir(self) -> Path:
        return self.root / self.session_id


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(
    freeact_python: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelExecutor]:
    work = tmp_path_factory.mktemp("work")
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    yield ex
    await ex.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tools_session(executor: KernelExecutor) -> Written:
    """One session with every record of the tool-calling protocol, a compaction and a rewind."""
    work = executor.working_dir
    root = work.parent / "sessions"
    events: list[AgentEvent] = []
    async with our_agent(
        routed(STEPS),
        root,
        work,
        executor,
        subagent_pool_size=0,
        tool_result_inline_max_bytes=INLINE_MAX,
        context_window=200_000,
    ) as agent:
        for prompt in ("compute", "reject this", "plot", "files", "big output", "broken calls", "slow"):
            events += await run(agent, prompt)
        events += [e async for e in agent.run_user_shell("echo user-shell-output")]
        events += await run(agent, "delegate")
        compacted = await agent.compact()
        assert compacted is not None and compacted.replaced > 0
        events += await run(agent, "after compaction")
        events += await run(agent, "withdrawn")
        turns = agent.checkpointing.turns()
        assert prompt_of(agent.history[turns[-1].msg_index]) == "withdrawn"
        plan = await agent.checkpointing.plan_rewind(turns[-1])
        await rewind(agent, plan, files=False, conversation=True)
        events += await run(agent, "after rewind")
        session_id = agent.session_id
    assert not [e for e in events if isinstance(e, AgentError)]
    return Written(root, session_id, events)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def text_session(executor: KernelExecutor) -> Written:
    """A session of the text action protocol: the model starts with a tool call but writes code
    blocks (the switch record), then python and bash blocks whose results go back as user text."""
    work = executor.working_dir
    root = work.parent / "text-sessions"
    s = script(
        ['<tools>{"name": "python"}</tools>\n```python\nprint(2 ** 10)\n```'],
        ["Both:\n```python\nprint('py-block')\n```\n```bash\necho bash-block\n```"],
        ["1024, then both blocks ran."],
    )
    async with our_agent(s.model(), root, work, executor, action_protocol="auto") as agent:
        events = await run(agent, "two to the tenth")
        session_id = agent.session_id
    assert not [e for e in events if isinstance(e, AgentError)]
    return Written(root, session_id, events)


def ours(root: Path, session_id: str, agent_id: str) -> list[dict[str, Any]]:
    loaded = SessionStore(root).session(session_id).load(agent_id)
    assert loaded.damage is None and not loaded.truncated_tail
    return normalize(loaded.messages)


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_the_tool_session_holds_every_kind_of_record(tools_session: Written) -> None:
    """The session below really has the records the interop test is about (else it proves little)."""
    d = tools_session.dir
    store = SessionStore(tools_session.root).session(tools_session.session_id)
    lines = raw_lines(d / "main.jsonl")
    messages = [line["message"] for line in lines]
    text = json.dumps(messages)
    approvals = [e.tool_call for e in tools_session.events if isinstance(e, ApprovalRequest)]
    assert [a for a in approvals if isinstance(a, ShellAction)], "a shell part was approved"
    assert "shell-part-42" in text and "user-shell-output" in text
    raw = (d / "main.jsonl").read_text(encoding="utf-8")
    outputs = [
        str(p.content) for m in store.load().messages for p in m.parts if isinstance(p, ToolReturnPart)
    ]
    assert "\u2028" not in raw and [o for o in outputs if "42 naïve 😀\u2028after" in o]
    assert '"outcome": "rejected"' in text
    assert '"media_type": "image/png"' in text  # the plot, as BinaryContent in the tool return
    assert "diff" in text and "+gamma" in text  # the edit's diff in the return's metadata
    assert any(p.suffix == ".txt" for p in (d / "tool-results").iterdir())  # the big output
    (sub,) = store.subagent_ids()
    assert (d / f"{sub}.jsonl").is_file()
    assert [m for m in messages if "freeact_tui_compaction" in json.dumps(m.get("metadata") or {})]
    assert [line for line in lines if "rewind" in line["meta"]]  # the marker, with a new turn after it
    assert (d / "rewound" / "main.1.jsonl").is_file()
    assert [e for e in tools_session.events if isinstance(e, Cancelled)]
    assert '"outcome": "interrupted"' in text and "thinking" in text and "no_such_tool" in text
    assert '{\\"code\\": \\"print(1)\\"' in text  # the broken JSON args, kept as sent
    assert str(prompt_of(store.load().messages[-2])).endswith("after rewind")


async def test_real_freeact_loads_the_tool_session_and_its_subagent_like_we_do(
    tools_session: Written, freeact_python: str
) -> None:
    root, sid = tools_session.root, tools_session.session_id
    (sub,) = SessionStore(root).session(sid).subagent_ids()
    by_freeact = freeact_load(freeact_python, root, sid, "main", sub, "rewound/main.1")

    # The sub-agent's history, and the archive of the rewind (the whole file before it), as we read them.
    assert by_freeact[sub] == ours(root, sid, sub) and len(by_freeact[sub]) >= 4
    archive = by_freeact["rewound/main.1"]
    # The main history: ours is the cut history plus the turn after the rewind; freeact's has the
    # marker (a user request saying what was withdrawn) where the cut is.
    main, loaded = by_freeact["main"], SessionStore(root).session(sid).load()
    (mark,) = loaded.rewinds
    expected = ours(root, sid, "main")
    assert main[: mark.at] == expected[: mark.at] == archive[: mark.at]
    marker = main[mark.at]
    assert marker["kind"] == "request" and marker["parts"][0]["content"] == mark.note
    assert main[mark.at + 1 :] == expected[mark.at :]
    assert len(main) == len(expected) + 1
    assert mark.withdrawn_messages == len(archive) - mark.at == 4  # the "withdrawn" turn
    # the compaction record is an ordinary user request for freeact, the summary in it
    records = [m for m in SessionStore(root).session(sid).load().messages if compaction_info(m)]
    assert len(records) == 1 and any(
        p["part_kind"] == "user-prompt" and str(p["content"]).startswith("[Context compacted]")
        for m in main
        for p in m["parts"]
    )
    # the image went through as the same bytes
    images = [c for m in main for p in m["parts"] if isinstance(p.get("content"), list) for c in p["content"]]
    assert [c for c in images if isinstance(c, dict) and c.get("binary") == "image/png"]


async def test_a_session_continued_in_real_freeact_resumes_here(
    tools_session: Written, executor: KernelExecutor, freeact_python: str
) -> None:
    """Our session, resumed in freeact (a turn appended after our rewind marker), then here again.

    It changes the tool session, so it comes after the tests that read it (pytest keeps file order)."""
    root, sid = tools_session.root, tools_session.session_id
    store = SessionStore(root)
    before = store.session(sid).load().messages
    listed = store.session(sid).info().message_count
    added = freeact(freeact_python, "continue", root, sid)
    after = store.session(sid).load()
    assert after.damage is None and normalize(after.messages) == normalize(before) + added
    assert store.session(sid).info().message_count == listed + 2  # the listing sees freeact's lines
    async with our_agent(
        routed({"next": [["Back here."]]}),
        root,
        executor.working_dir,
        executor,
        session_id=sid,
        checkpoints=False,
    ) as agent:
        assert normalize(agent.history[-2:]) == added
        events = await run(agent, "next")
    assert not [e for e in events if isinstance(e, AgentError)]
    by_freeact = freeact_load(freeact_python, root, sid, "main")["main"]
    assert by_freeact[-4:-2] == added and by_freeact[-1]["parts"][0]["content"] == "Back here."


async def test_real_freeact_loads_the_text_protocol_session_like_we_do(
    text_session: Written, freeact_python: str
) -> None:
    root, sid = text_session.root, text_session.session_id
    by_freeact = freeact_load(freeact_python, root, sid, "main")["main"]
    assert by_freeact == ours(root, sid, "main")
    raw = raw_lines(root / sid / "main.jsonl")
    metadata = [json.dumps(line["message"].get("metadata") or {}) for line in raw]
    assert any(SWITCH_KEY in m for m in metadata) and any(RESULTS_KEY in m for m in metadata)
    assert "bash-block" in json.dumps(by_freeact) and "1024" in json.dumps(by_freeact)


async def test_a_session_written_by_real_freeact_loads_and_resumes_here(
    executor: KernelExecutor, freeact_python: str
) -> None:
    root = executor.working_dir.parent / "freeact-written"
    sid = "5b0c4e1a-7f3d-4c2b-9a8e-1d2f3a4b5c6d"
    written = freeact(freeact_python, "write", root, sid)
    loaded = SessionStore(root).session(sid).load()
    assert loaded.damage is None and normalize(loaded.messages) == written
    returned = loaded.messages[2].parts[0]
    assert isinstance(returned, ToolReturnPart) and isinstance(returned.content, list)
    assert isinstance(returned.content[1], BinaryContent) and returned.content[1].data.startswith(b"\x89PNG")

    s: Script = script(
        ["Resuming.", Code("print('resumed here')", "c-resume")],
        ["It printed: resumed here."],
    )
    async with our_agent(
        s.model(), root, executor.working_dir, executor, session_id=sid, checkpoints=False
    ) as agent:
        assert normalize(agent.history) == written
        events = await run(agent, "and again")
    assert not [e for e in events if isinstance(e, AgentError)]
    sent = s.requests[0]
    assert normalize(sent[:4]) == written  # freeact's history went to the model, image included
    after = SessionStore(root).session(sid).load().messages
    assert len(after) == 8 and isinstance(after[-1].parts[-1], TextPart)
    # and freeact still loads it, now with our turn appended
    assert freeact_load(freeact_python, root, sid, "main")["main"] == normalize(after)
