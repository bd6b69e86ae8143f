"""Model setup checks and model construction (no network: models are built, never called)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.ollama import OllamaModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel

from freeact_tui.agent import models
from freeact_tui.agent.models import ModelSetupError, missing_setup, provider_env_vars, resolve_model

_ALL_VARS = sorted(
    {v for names in models._KEY_VARS.values() for v in names}
    | {"OPENAI_BASE_URL", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "MY_SERVER_KEY"}
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in _ALL_VARS:
        monkeypatch.delenv(var, raising=False)
    # No gcloud credentials file from the real home may make Vertex look configured.
    monkeypatch.setenv("HOME", str(tmp_path))


def test_no_model_names_the_setting() -> None:
    for value in (None, "", "   "):
        message = missing_setup(value)
        assert message is not None
        assert 'model = "provider:name"' in message and "--model" in message


def test_test_model_needs_nothing() -> None:
    assert missing_setup("test") is None
    assert isinstance(resolve_model("test"), TestModel)


@pytest.mark.parametrize(
    ("model", "variables"),
    [
        ("anthropic:claude-sonnet-4-5", ["ANTHROPIC_API_KEY"]),
        ("openai:gpt-4o", ["OPENAI_API_KEY"]),
        ("openai-chat:gpt-4o", ["OPENAI_API_KEY"]),
        ("google-gla:gemini-2.5-flash", ["GEMINI_API_KEY", "GOOGLE_API_KEY"]),
        ("google:gemini-2.5-flash", ["GEMINI_API_KEY", "GOOGLE_API_KEY"]),
        ("groq:llama-3.3-70b-versatile", ["GROQ_API_KEY"]),
        ("mistral:mistral-large-latest", ["MISTRAL_API_KEY"]),
        ("cohere:command-r", ["CO_API_KEY"]),
        ("deepseek:deepseek-chat", ["DEEPSEEK_API_KEY"]),
        ("openrouter:anthropic/claude-sonnet-4.5", ["OPENROUTER_API_KEY"]),
        ("xai:grok-4", ["XAI_API_KEY"]),
    ],
)
def test_missing_key_names_exactly_the_variables(
    model: str, variables: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    message = missing_setup(model)
    assert message is not None
    assert model in message
    for var in variables:
        assert var in message
    others = {v for v in _ALL_VARS if v.endswith("_API_KEY")} - set(variables)
    assert not any(f" {v}" in message for v in others), message
    # Any one of the variables is enough.
    monkeypatch.setenv(variables[-1], "sk-test")
    assert missing_setup(model) is None


def test_blank_key_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")
    assert missing_setup("anthropic:claude-sonnet-4-5") is not None


def test_vertex_needs_cloud_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    message = missing_setup("google-vertex:gemini-2.5-pro")
    assert message is not None and "GOOGLE_CLOUD_PROJECT" in message
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    assert missing_setup("google-vertex:gemini-2.5-pro") is None


def test_ollama_needs_its_server_address(monkeypatch: pytest.MonkeyPatch) -> None:
    message = missing_setup("ollama:llama3.1")
    assert message is not None
    assert "OLLAMA_BASE_URL" in message and "http://localhost:11434/v1" in message
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://localhost:11434/v1")
    assert missing_setup("ollama:llama3.1") is None
    assert isinstance(resolve_model("ollama:llama3.1"), OllamaModel)


def test_base_url_model_needs_no_provider_key() -> None:
    assert missing_setup("openai:gpt-4o", base_url="http://localhost:8000/v1") is None
    assert missing_setup("llama3.1:8b", base_url="http://localhost:8000/v1") is None


def test_base_url_with_api_key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    message = missing_setup("llama3.1", base_url="http://gpu:8000/v1", api_key_env="MY_SERVER_KEY")
    assert message is not None and "MY_SERVER_KEY" in message
    with pytest.raises(ModelSetupError, match="MY_SERVER_KEY"):
        resolve_model("llama3.1", base_url="http://gpu:8000/v1", api_key_env="MY_SERVER_KEY")
    monkeypatch.setenv("MY_SERVER_KEY", "secret")
    model = resolve_model("llama3.1", base_url="http://gpu:8000/v1", api_key_env="MY_SERVER_KEY")
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url.rstrip("/") == "http://gpu:8000/v1"


def test_base_url_keeps_model_tags_and_strips_known_prefixes() -> None:
    tagged = resolve_model("llama3.1:8b", base_url="http://localhost:11434/v1")
    assert isinstance(tagged, OpenAIChatModel) and tagged.model_name == "llama3.1:8b"
    prefixed = resolve_model("openai:qwen2.5-coder", base_url="http://localhost:8000/v1")
    assert isinstance(prefixed, OpenAIChatModel) and prefixed.model_name == "qwen2.5-coder"
    ollama = resolve_model("ollama:llama3.1:8b", base_url="http://localhost:11434/v1")
    assert isinstance(ollama, OllamaModel) and ollama.model_name == "llama3.1:8b"
    assert ollama.base_url.rstrip("/") == "http://localhost:11434/v1"


def test_model_without_provider_suggests_one() -> None:
    message = missing_setup("claude-sonnet-4-5")
    assert message is not None and '"anthropic:claude-sonnet-4-5"' in message
    message = missing_setup("gemini-2.5-flash")
    assert message is not None and '"google:gemini-2.5-flash"' in message
    with pytest.raises(ModelSetupError, match="has no provider"):
        resolve_model("gpt-4o")


def test_unknown_provider_is_a_clear_error() -> None:
    message = missing_setup("foo:bar")
    assert message is not None and 'Unknown model provider "foo"' in message
    with pytest.raises(ModelSetupError, match='Unknown model provider "foo"'):
        resolve_model("foo:bar")


def test_known_providers_build_models_with_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("GEMINI_API_KEY", "gm-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    anthropic = resolve_model("anthropic:claude-sonnet-4-5")
    assert isinstance(anthropic, AnthropicModel) and anthropic.model_name == "claude-sonnet-4-5"
    # freeact's (pydantic-ai 1.x) provider name still works.
    google = resolve_model("google-gla:gemini-2.5-flash")
    assert isinstance(google, GoogleModel) and google.model_name == "gemini-2.5-flash"
    assert resolve_model("openai-chat:gpt-4o").model_name == "gpt-4o"


def test_missing_provider_package_is_a_setup_error(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("groq") is not None:
        pytest.skip("groq is installed here")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
    with pytest.raises(ModelSetupError, match=r"pydantic-ai-slim\[groq\]"):
        resolve_model("groq:llama-3.3-70b-versatile")


def test_a_ready_model_is_passed_through() -> None:
    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("hi")])

    model = FunctionModel(reply)
    assert resolve_model(model) is model


def test_provider_env_vars() -> None:
    assert provider_env_vars("google-gla") == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    assert provider_env_vars("openai-responses") == ("OPENAI_API_KEY",)
    assert provider_env_vars("gateway/openai") == ("PYDANTIC_AI_GATEWAY_API_KEY", "PAIG_API_KEY")
    assert provider_env_vars("bedrock") == ()
