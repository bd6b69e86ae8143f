"""Model names to pydantic-ai models, and what a user must set before a model can be used.

Public interface:

- ``missing_setup(model, base_url=None, api_key_env=None, project_keys=EMPTY) -> str | None``: ``None`` when the model can be
  used as configured, else a short message naming exactly what to set (shown by the first-run screen).
- ``resolve_model(model, *, base_url=None, api_key_env=None, project_keys=EMPTY) -> Model``: ``"test"`` → ``TestModel``;
  ``"demo"`` → the offline demo model (``freeact_tui/demo``);
  with ``base_url`` → an OpenAI-compatible chat model on that server (``ollama:NAME`` → pydantic-ai's
  Ollama model); otherwise ``pydantic_ai.models.infer_model``. Raises ``ModelSetupError``.
- ``provider_env_vars(provider) -> tuple[str, ...]``: the environment variables a provider reads its key from.
- ``keys_found(project_keys=EMPTY) -> list[tuple[str, str]]``: the (provider, variable) pairs set in the
  environment.
- ``choose_protocol(configured, model, base_url=None) -> "tools" | "text" | "auto"``: the action
  protocol for ``action_protocol = "default"``: ``tools`` where the model's tool calling is known to
  be reliable, ``auto`` elsewhere; any other configured value is kept.

Both functions only look at the environment, and at ``project_keys``: the provider keys a trusted
project's ``.env`` brings (``Config.provider_keys``), which are never in ``os.environ`` (the process's own
variable wins); nothing here talks to the network.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model, known_model_names
from pydantic_ai.providers import Provider, infer_provider, infer_provider_class

from freeact_tui.agent.sdk_body import without_sdk_walk
from freeact_tui.demo.model import DEMO_MODEL
from freeact_tui.project.config import ActionProtocolName, ActionProtocolSetting
from freeact_tui.project.project_env import EMPTY

TEST_MODEL = "test"
OFFLINE_MODELS = (TEST_MODEL, DEMO_MODEL)
"""Built-in models that need no key, server or network."""

# Provider names freeact (pydantic-ai 1.x) used that pydantic-ai 2.x renamed.
PROVIDER_ALIASES: dict[str, str] = {"google-gla": "google", "google-vertex": "google-cloud"}

# Environment variables each provider reads (any one of a group suffices), as pydantic-ai's providers do.
_KEY_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "cohere": ("CO_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "moonshotai": ("MOONSHOTAI_API_KEY",),
    "nebius": ("NEBIUS_API_KEY",),
    "ovhcloud": ("OVHCLOUD_API_KEY",),
    "sambanova": ("SAMBANOVA_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "heroku": ("HEROKU_INFERENCE_KEY",),
    "github": ("GITHUB_API_KEY",),
    "meta": ("META_API_KEY",),
    "alibaba": ("ALIBABA_API_KEY", "DASHSCOPE_API_KEY"),
    "vercel": ("VERCEL_AI_GATEWAY_API_KEY", "VERCEL_OIDC_TOKEN"),
    "crusoe": ("CRUSOE_API_KEY",),
    "ollama": ("OLLAMA_BASE_URL",),
    "vllm": ("VLLM_BASE_URL",),
    "gateway": ("PYDANTIC_AI_GATEWAY_API_KEY", "PAIG_API_KEY"),
}

# Model-name prefixes that select an API flavour of a provider above.
_FLAVOURS: dict[str, str] = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "openai-decisions": "openai",
    "google-decisions": "google",
}

_OLLAMA_DEFAULT_URL = "http://localhost:11434/v1"


class ModelSetupError(Exception):
    """A model cannot be constructed; ``str(error)`` is a message meant for the user."""


def _canonical_provider(provider: str) -> str:
    return PROVIDER_ALIASES.get(provider, provider)


def provider_env_vars(provider: str) -> tuple[str, ...]:
    """The environment variables a provider reads its credentials from (any one suffices).

    Args:
        provider: A provider prefix as in ``provider:model`` (aliases such as ``google-gla`` accepted).

    Returns:
        The variable names, or ``()`` when the provider needs none we know of.
    """
    name = _canonical_provider(provider)
    if name.startswith("gateway/"):
        name = "gateway"
    return _KEY_VARS.get(_FLAVOURS.get(name, name), ())


def key_value(var: str, project_keys: Mapping[str, str] = EMPTY) -> str | None:
    """The value of ``var`` for the model: the process's own variable, else the project's key (``None``:
    neither is set to something other than blanks)."""
    for source in (os.environ, project_keys):
        value = source.get(var)
        if value is not None and value.strip():
            return value
    return None


def _is_set(var: str, project_keys: Mapping[str, str] = EMPTY) -> bool:
    return key_value(var, project_keys) is not None


def keys_found(project_keys: Mapping[str, str] = EMPTY) -> list[tuple[str, str]]:
    """Providers whose key (or server address) is set in the environment or brought by the project
    (``project_keys``), as (provider, variable)."""
    return [
        (provider, var)
        for provider, names in _KEY_VARS.items()
        for var in names
        if _is_set(var, project_keys)
    ]


def _known_provider(provider: str) -> bool:
    # Names we know need no lookup; pydantic-ai's lookup imports the provider's SDK (seconds).
    if provider in _KEY_VARS or provider in _FLAVOURS or provider == "google-cloud":
        return True
    try:
        infer_provider_class(provider)
    except ValueError:
        return False
    except ImportError:
        return True  # known, but its package is not installed (resolve_model says so)
    return True


def _google_cloud_ready(project_keys: Mapping[str, str]) -> bool:
    # Vertex AI also works with gcloud's application-default credentials file.
    adc = Path.home() / ".config" / "gcloud" / "application_default_credentials.json"
    names = ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_API_KEY", "GEMINI_API_KEY")
    return any(_is_set(v, project_keys) for v in names) or adc.is_file()


# Model families whose provider is unambiguous, to suggest the full "provider:name".
_FAMILIES: tuple[tuple[str, str], ...] = (
    ("claude", "anthropic"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("gemini", "google"),
    ("mistral", "mistral"),
    ("codestral", "mistral"),
    ("grok", "xai"),
    ("deepseek", "deepseek"),
    ("command", "cohere"),
)


def _suggest(model: str) -> str | None:
    for family, provider in _FAMILIES:
        if model.lower().startswith(family):
            return f"{provider}:{model}"
    matches = [m for m in known_model_names() if m.split(":", 1)[-1] == model]
    return matches[0] if matches else None


def _either(names: tuple[str, ...]) -> str:
    return " or ".join(names)


def missing_setup(
    model: str | None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    project_keys: Mapping[str, str] = EMPTY,
) -> str | None:
    """Tell what is missing before ``model`` can be used, without contacting anyone.

    Args:
        model: The configured model (``provider:name``, ``test``, ``demo``), or ``None`` if none is configured.
        base_url: An OpenAI-compatible server; a model served there needs no provider key.
        api_key_env: The variable holding the key for ``base_url``, if that server needs one.
        project_keys: The provider keys a trusted project's ``.env`` brings (``Config.provider_keys``).

    Returns:
        ``None`` when the model can be used; else one or two sentences naming exactly what to set.
    """
    if not model or not model.strip():
        return (
            'No model is configured. Set `model = "provider:name"` in the config file '
            '(e.g. "anthropic:claude-sonnet-4-5") or start with `--model`; `--model demo` runs an offline demo.'
        )
    model = model.strip()
    if model in OFFLINE_MODELS:
        return None
    if base_url:
        if api_key_env and not _is_set(api_key_env, project_keys):
            return f"The server at {base_url} expects its key in `{api_key_env}` (api_key_env), which is not set."
        return None
    if ":" not in model:
        hint = _suggest(model)
        example = f'"{hint}"' if hint else '"openai:gpt-4o"'
        return (
            f'Model "{model}" has no provider: write it as "provider:name", e.g. {example}, '
            "or set `base_url` to use a model served by an OpenAI-compatible server."
        )
    raw_provider = model.split(":", 1)[0]
    provider = _canonical_provider(raw_provider)
    if not provider.startswith("gateway/") and not _known_provider(provider):
        return (
            f'Unknown model provider "{raw_provider}" in "{model}". Use e.g. anthropic, openai, google, '
            "groq, mistral, ollama, openrouter, or set `base_url` for an OpenAI-compatible server."
        )
    return _credentials_missing(provider, model, project_keys)


def _credentials_missing(provider: str, model: str, project_keys: Mapping[str, str]) -> str | None:
    """What a known ``provider`` still needs (its key, its server's address), or ``None``."""
    if provider == "google-cloud":
        if _google_cloud_ready(project_keys):
            return None
        return (
            f'"{model}" (Vertex AI) needs Google Cloud credentials: set GOOGLE_CLOUD_PROJECT with '
            "`gcloud auth application-default login`, or GOOGLE_APPLICATION_CREDENTIALS."
        )
    if provider == "openai" and _is_set("OPENAI_BASE_URL"):
        return None
    names = provider_env_vars(provider)
    if not names or any(_is_set(v, project_keys) for v in names):
        return None
    if provider == "ollama":
        return (
            f'"{model}" needs the Ollama server address: set OLLAMA_BASE_URL '
            f'(e.g. {_OLLAMA_DEFAULT_URL}) or `base_url = "{_OLLAMA_DEFAULT_URL}"` in the config file.'
        )
    if provider == "vllm":
        return f'"{model}" needs the vLLM server address: set VLLM_BASE_URL or `base_url` in the config file.'
    return f'"{model}" needs an API key: set the environment variable {_either(names)}.'


def _served_name(model: str) -> tuple[str | None, str]:
    """Split ``provider:name`` for a ``base_url`` server; ``llama3.1:8b`` keeps its tag."""
    if ":" in model:
        prefix, rest = model.split(":", 1)
        canonical = _canonical_provider(prefix)
        if canonical.startswith("gateway/") or _known_provider(canonical):
            return canonical, rest
    return None, model


def _checked_client() -> Any:
    """The OpenAI client's usual HTTP client, with every reply checked for being the protocol at all (an
    HTML login page or a wrong path gives one clear line naming the URL: ``reply_shape.py``)."""
    from openai import DefaultAsyncHttpxClient

    from freeact_tui.agent.reply_shape import check_reply

    return DefaultAsyncHttpxClient(event_hooks={"response": [check_reply]})


def _server_model(
    model: str, base_url: str, api_key_env: str | None, project_keys: Mapping[str, str]
) -> Model:
    provider, name = _served_name(model)
    api_key = key_value(api_key_env, project_keys) if api_key_env else None
    if api_key_env and not api_key:
        raise ModelSetupError(
            f"The server at {base_url} expects its key in `{api_key_env}`, which is not set."
        )
    if provider == "ollama":
        from pydantic_ai.models.ollama import OllamaModel
        from pydantic_ai.providers.ollama import OllamaProvider

        return OllamaModel(
            name, provider=OllamaProvider(base_url=base_url, api_key=api_key, http_client=_checked_client())
        )
    # Local servers often need no key, but the OpenAI client insists on a non-empty one. A stream that
    # ends without a finish reason was cut off: an error, never a complete answer.
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.profiles.openai import OpenAIModelProfile
    from pydantic_ai.providers.openai import OpenAIProvider

    # The agent retries transient errors itself, visibly and a bounded number of times: no hidden
    # retries of the OpenAI client on top of them.
    client = AsyncOpenAI(
        base_url=base_url, api_key=api_key or "not-needed", max_retries=0, http_client=_checked_client()
    )
    return OpenAIChatModel(
        name,
        provider=OpenAIProvider(openai_client=client),
        profile=OpenAIModelProfile(openai_chat_streaming_requires_finish_reason=True),
    )


# First-party APIs that serve only their own models, all of which call tools reliably.
_RELIABLE_PROVIDERS = frozenset(
    {"anthropic", "google", "google-cloud", "mistral", "xai", "cohere", "deepseek"}
)
# OpenAI's own model families; anything else under openai: is a server behind OPENAI_BASE_URL.
_OPENAI_OWN = re.compile(r"(gpt-(?!oss)|o\d|chatgpt-|codex-|computer-use)", re.IGNORECASE)


def choose_protocol(
    configured: ActionProtocolSetting, model: str | Model, base_url: str | None = None
) -> ActionProtocolName:
    """The action protocol to use: ``configured`` unless it is ``default``, else chosen by the model.

    ``tools`` for the major providers (anthropic:, google-gla:/google-vertex:, mistral:, …), OpenAI's
    own model families and any model pydantic-ai knows by name, and for a ready ``Model`` and the
    built-in offline models; ``auto`` where tool calling is not known to be reliable: any
    ``base_url`` server, ollama:, vllm:, and names nobody vouches for.
    """
    if configured != "default":
        return configured
    if isinstance(model, Model):
        return "tools"  # built in code: the caller knows it and passes action_protocol if it is weak
    name = model.strip()
    if name in OFFLINE_MODELS:
        return "tools"
    if base_url or ":" not in name:
        return "auto"
    prefix, rest = name.split(":", 1)
    canonical = _canonical_provider(prefix.removeprefix("gateway/"))
    flavour = _FLAVOURS.get(canonical, canonical)
    if flavour in _RELIABLE_PROVIDERS:
        return "tools"
    if flavour == "openai" and _OPENAI_OWN.match(rest):
        return "tools"
    known = set(known_model_names())
    if f"{canonical}:{rest}" in known or f"{prefix}:{rest}" in known:
        return "tools"
    return "auto"


def _provider_factory(project_keys: Mapping[str, str]) -> Callable[[str], Provider[Any]]:
    """How ``infer_model`` makes a provider: pydantic-ai's own way, which reads the process's environment,
    unless the key is only the project's (``project_keys``): then the provider gets it as ``api_key``."""

    def make(name: str) -> Provider[Any]:
        for var in provider_env_vars(name):
            if key_value(var) is None and (key := key_value(var, project_keys)) is not None:
                try:
                    provider: Provider[Any] = infer_provider_class(name)(api_key=key)  # type: ignore[call-arg]
                except TypeError:
                    break  # a provider that takes no key as an argument reads only the process's own
                return provider
        return infer_provider(name)

    return make


def resolve_model(
    model: str | Model,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    project_keys: Mapping[str, str] = EMPTY,
) -> Model:
    """Build the pydantic-ai model for a configured name.

    Args:
        model: ``provider:name``, ``test``, ``demo``, a bare name served at ``base_url``, or a ready ``Model``.
        base_url: An OpenAI-compatible chat-completions server (local models: Ollama, vLLM, llama.cpp …).
        api_key_env: The environment variable holding the key for ``base_url``.
        project_keys: The provider keys a trusted project's ``.env`` brings (``Config.provider_keys``).

    Returns:
        The model, constructed but not contacted.

    Raises:
        ModelSetupError: no or an unknown model/provider, a missing key, or the provider's package is missing.
    """
    if isinstance(model, Model):
        return model
    if model == TEST_MODEL:
        from pydantic_ai.models.test import TestModel

        return TestModel()
    if model.strip() == DEMO_MODEL:
        from freeact_tui.demo.model import demo_model

        return demo_model()
    problem = missing_setup(model, base_url=base_url, api_key_env=api_key_env, project_keys=project_keys)
    if problem:
        raise ModelSetupError(problem)
    model = model.strip()
    try:
        if base_url:
            return without_sdk_walk(_server_model(model, base_url, api_key_env, project_keys))
        provider, name = model.split(":", 1)
        factory = _provider_factory(project_keys)
        return without_sdk_walk(
            infer_model(f"{_canonical_provider(provider)}:{name}", provider_factory=factory)
        )
    except ImportError as exc:
        raise ModelSetupError(f'Cannot use "{model}": {exc}') from exc
    except (UserError, ValueError) as exc:
        raise ModelSetupError(f'Cannot use "{model}": {exc}') from exc


__all__ = [
    "DEMO_MODEL",
    "ModelSetupError",
    "PROVIDER_ALIASES",
    "choose_protocol",
    "key_value",
    "keys_found",
    "missing_setup",
    "provider_env_vars",
    "resolve_model",
]
