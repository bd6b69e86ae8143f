"""#30: ``auto`` is the default action protocol where the model's tool calling is not known to be
reliable (any ``--base-url`` server, Ollama, unknown names), ``tools`` for the major providers; an
explicit ``action_protocol`` always wins; the status bar and ``/model`` name the choice."""

from __future__ import annotations

import functools
import json
import tomllib
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from textual.widgets import Label

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.models import choose_protocol
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config, ConfigError, load_config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks.notice import NoticeBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import cli, fake_args

ROOT = Path(__file__).resolve().parents[2]

# (model, base_url) -> the protocol "default" chooses
TABLE: list[tuple[str, str | None, str]] = [
    ("anthropic:claude-sonnet-4-5", None, "tools"),
    ("google-gla:gemini-2.5-pro", None, "tools"),
    ("google-vertex:gemini-2.5-flash", None, "tools"),
    ("google:gemini-3.1-pro-preview", None, "tools"),
    ("gateway/anthropic:claude-sonnet-4-5", None, "tools"),
    ("mistral:mistral-large-latest", None, "tools"),
    ("openai:gpt-4.1", None, "tools"),
    ("openai:o3-mini", None, "tools"),
    ("openai-responses:gpt-5", None, "tools"),
    ("openai:gpt-oss-20b", None, "auto"),  # open weights, served anywhere
    ("openai:qwen2.5-coder", None, "auto"),  # a server behind OPENAI_BASE_URL
    ("ollama:qwen2.5-coder:1.5b", None, "auto"),
    ("ollama:llama3.1:8b", "http://localhost:11434/v1", "auto"),
    ("vllm:Qwen/Qwen2.5-7B", None, "auto"),
    ("openrouter:some/unknown-model", None, "auto"),
    ("groq:openai/gpt-oss-120b", None, "tools"),  # pydantic-ai knows it by name
    ("groq:some-new-model", None, "auto"),
    ("qwen2.5-coder:1.5b", "http://127.0.0.1:8080/v1", "auto"),
    ("anthropic:claude-sonnet-4-5", "http://127.0.0.1:8080/v1", "auto"),  # what the server is, counts
    ("test", None, "tools"),
    ("demo", None, "tools"),
]


@pytest.mark.parametrize(("model", "base_url", "expected"), TABLE)
def test_default_protocol_by_model(model: str, base_url: str | None, expected: str) -> None:
    assert choose_protocol("default", model, base_url) == expected


@pytest.mark.parametrize("explicit", ["tools", "text", "auto"])
@pytest.mark.parametrize(
    ("model", "base_url"),
    [("ollama:qwen", None), ("anthropic:claude-sonnet-4-5", None), ("m", "http://x/v1")],
)
def test_an_explicit_protocol_always_wins(explicit: str, model: str, base_url: str | None) -> None:
    assert choose_protocol(explicit, model, base_url) == explicit  # type: ignore[arg-type]


def _reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("ok")])


def test_a_ready_model_keeps_tools() -> None:
    assert choose_protocol("default", FunctionModel(_reply)) == "tools"


def test_config_default_is_chosen_by_model_and_old_values_keep_their_meaning(tmp_path: Path) -> None:
    assert Config().action_protocol == "default"
    for value in ("tools", "text", "auto", "default"):
        path = tmp_path / f"{value}.toml"
        path.write_text(f'action_protocol = "{value}"\n')
        assert load_config(path, cwd=tmp_path).action_protocol == value
    bad = tmp_path / "bad.toml"
    bad.write_text('action_protocol = "tool"\n')
    with pytest.raises(ConfigError) as err:
        load_config(bad, cwd=tmp_path)
    assert "action_protocol" in str(err.value)


def test_the_example_config_documents_default() -> None:
    text = (ROOT / "config.example.toml").read_text()
    assert '# action_protocol = "default"' in text
    line = next(li for li in text.splitlines() if li.startswith("# action_protocol"))
    assert tomllib.loads(line.lstrip("# "))["action_protocol"] == Config().action_protocol


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"model": "local-model", "base_url": "http://127.0.0.1:9/v1"}, "auto"),
        ({"model": "local-model", "base_url": "http://127.0.0.1:9/v1", "action_protocol": "tools"}, "tools"),
        ({"model": "anthropic:claude-sonnet-4-5"}, "tools"),
        ({"model": "anthropic:claude-sonnet-4-5", "action_protocol": "text"}, "text"),
    ],
)
def test_the_agent_resolves_default_once(
    config: dict[str, str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")  # built, never contacted
    agent = Agent.from_config(Config(working_dir=tmp_path, **config))  # type: ignore[arg-type]
    assert agent.action_protocol == expected
    assert agent.runtime.settings.action_protocol == expected  # the prompt and subagents see the choice
    assert (agent.policy.name == "auto") is (expected == "auto")


# -- the command line against a real OpenAI-compatible server (the fake one) -----------------------------


def _fenced_then_answer(server: FakeOpenAI) -> None:
    # A model weak at tool calls: it writes a code block instead of calling the tool.
    server.script(Reply("```python\nprint(6 * 7)\n```"), Reply("It is 42."))


@pytest.mark.kernel
def test_cli_with_base_url_defaults_to_auto(tmp_path: Path) -> None:
    """``freeact-tui run --base-url …`` with no protocol given: auto runs the code block the model wrote."""
    with FakeOpenAI() as server:
        _fenced_then_answer(server)
        done = cli("run", *fake_args(server), "--allow", "code:*", "-o", "json", "compute", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert [a["output"].strip() for a in result["actions"]] == ["42"]
        assert result["answer"] == "It is 42."
        assert server.requests[0].tool_names  # auto starts with tool calls offered


@pytest.mark.kernel
def test_cli_explicit_tools_wins_over_the_default(tmp_path: Path) -> None:
    """``--action-protocol tools`` with a ``--base-url`` server: the code block is only text, nothing runs."""
    with FakeOpenAI() as server:
        _fenced_then_answer(server)
        done = cli(
            "run", *fake_args(server), "--action-protocol", "tools", "--allow", "code:*", "-o", "json", "compute",
            cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["actions"] == [] and "print(6 * 7)" in result["answer"]
        assert len(server.requests) == 1


# -- the terminal: the status bar and /model --------------------------------------------------------------


# the kernel: conftest.py's module-scoped `executor`
until = functools.partial(helpers.until, limit=20.0)


def _protocol_label(app: FreeactApp) -> Label:
    return app.main_screen.query_one("#status-protocol", Label)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("explicit", "expected"), [(None, "auto"), ("tools", "tools")])
async def test_status_bar_names_the_protocol_for_a_base_url_server(
    executor: KernelExecutor, tmp_path: Path, explicit: str | None, expected: str
) -> None:
    with FakeOpenAI() as server:
        config = Config(
            sessions_dir=tmp_path / "sessions",
            working_dir=tmp_path,
            subagent_pool_size=0,
            base_url=server.url,
        )
        if explicit is not None:
            config.action_protocol = explicit  # type: ignore[assignment]
        app = FreeactApp(config, model="local-model", executor=executor)
        async with app.run_test(size=(160, 30)) as pilot:
            await until(pilot, lambda: app.agent_ready)
            label = _protocol_label(app)
            assert label.display and str(label.render()) == f"protocol: {expected}"
            assert app.agent is not None and app.agent.action_protocol == expected


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_model_switch_shows_the_protocol_chosen_for_the_new_model(
    executor: KernelExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")  # the models are built, never contacted
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:9/v1")
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model="anthropic:claude-sonnet-4-5", executor=executor)
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: app.agent_ready)
        assert str(_protocol_label(app).render()) == "protocol: tools"
        for model, expected in (
            ("ollama:qwen2.5-coder:1.5b", "auto"),
            ("anthropic:claude-sonnet-4-5", "tools"),
        ):
            prompt = app.main_screen.query_one(PromptInput)
            prompt.load_text(f"/model {model}")
            prompt.focus()
            await pilot.press("enter")
            await until(pilot, lambda m=model: app.agent is not None and app.agent.model_name in m)  # type: ignore[misc]
            await until(pilot, lambda: bool(app.main_screen.query(NoticeBlock)))
            assert str(_protocol_label(app).render()) == f"protocol: {expected}"
            notice = app.main_screen.query(NoticeBlock).last()
            assert f"action protocol: {expected} (chosen for this model" in notice.text
