"""A prompt typed while the app is still starting goes to the model at once: typed before the agent is
open it is queued and sent the moment it is (the real CLI, against the fake OpenAI server); the model
is asked while the kernel is still starting; only the approved action waits for the kernel, and the
status bar says so instead of "running"."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from freeact_tui.tui.screens.event_router import WAITING_FOR_KERNEL
from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import SIZE, TimelineApp, main, make_app, texts, until
from tests.scripted import CODE_TOOL, Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]


async def test_the_model_is_asked_while_the_kernel_starts_and_the_bar_says_what_the_action_waits_for(
    tmp_path: Path,
) -> None:
    s = script([Code("print(6 * 7)")], ["six times seven is 42"])
    # A kernel slower to start than the scripted model is to answer, whatever the machine's load: the
    # gateway and the kernel each take 3 s more (their interpreters load this at start).
    slow = tmp_path / "slow-start"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text("import time\ntime.sleep(3)\n")
    config = {"skip_permissions": True, "kernel_env": {"PYTHONPATH": str(slow)}}
    app = make_app(s, tmp_path / "sessions", tmp_path, config=config)
    seen: dict[str, object] = {}
    async with app.run_test(size=SIZE) as pilot:
        screen = main(app)
        prompt = screen.query_one(PromptInput)
        prompt.load_text("what is 6 times 7?")
        prompt.focus()
        await pilot.press("enter")
        assert prompt.text == "", "the prompt was refused, not taken"

        await until(pilot, lambda: len(s.requests) >= 1, limit=30)
        assert app.agent is not None
        seen["kernel_at_model_call"] = app.agent.kernel_state
        await until(pilot, lambda: screen.status_bar.activity == WAITING_FOR_KERNEL, limit=30, step=0.01)
        seen["kernel_while_waiting"] = app.agent.kernel_state

        await until(pilot, lambda: len(s.requests) >= 2, limit=90)
        await app.workers.wait_for_complete()
        await pilot.pause()
        outputs = texts(app, ExecutionOutputBlock)
        activity = screen.status_bar.activity
        kernel_state = app.agent.kernel_state
    assert seen["kernel_at_model_call"] == "starting", "the model was asked only after the kernel was up"
    assert seen["kernel_while_waiting"] == "starting"
    assert any("42" in text for text in outputs), outputs
    assert "42" in s.last_tool_return()
    assert activity == "" and kernel_state == "ready"


def test_a_prompt_typed_before_the_agent_is_open_is_sent_as_soon_as_it_is(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": "print(6 * 7)"})]),
        Reply("six times seven is 42"),
    )
    # The kernel starts before the agent opens: its interpreter waits (at most a minute) for a file this
    # test writes once the model has been asked, so it is still starting then, whatever the machine's load.
    slow = tmp_path / "slow-start"
    slow.mkdir()
    asked_flag = tmp_path / "model-asked"
    (slow / "sitecustomize.py").write_text(
        f"import os, time\nfor _ in range(1200):\n    if os.path.exists({str(asked_flag)!r}):\n"
        "        break\n    time.sleep(0.05)\n"
    )
    (tmp_path / "work").mkdir()
    # The user's own config (a project may not set the kernel's PYTHONPATH: env_policy)
    (tmp_path / "user.toml").write_text(f"kernel_env = {{ PYTHONPATH = {str(slow)!r} }}\n")
    argv = ["--model", "openai:fake-model", "--base-url", fake_openai.url, "--skip-permissions",
            "--config", str(tmp_path / "user.toml")]  # fmt: skip
    with TimelineApp(tmp_path, argv, {"OPENAI_API_KEY": "fake"}) as app:
        deadline = time.monotonic() + 90
        app.wait_for("app:mount:end", deadline)  # the prompt takes keys
        app.type(b"what is 6 times 7?")
        time.sleep(0.2)  # the text lands in the prompt before Enter
        typed_at = time.monotonic()
        app.type(b"\r")
        while fake_openai.count < 1:
            assert app.process.poll() is None and time.monotonic() < deadline, "the model was not asked"
            time.sleep(0.05)
        asked_flag.write_text("")
        while fake_openai.count < 2:
            assert app.process.poll() is None and time.monotonic() < deadline, f"{fake_openai.count} requests"
            time.sleep(0.05)
        stages = app.stages()
    assert typed_at < stages["agent_open:end"], "typed after the agent was open: the queue was not used"
    asked = fake_openai.requests[0].at
    assert "what is 6 times 7?" in fake_openai.requests[0].last_user_text()
    assert asked < stages["kernel:ready"], "the model was asked only once the kernel was ready"
    assert "42" in " ".join(fake_openai.requests[1].tool_results())
