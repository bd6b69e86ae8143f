"""The models a front end offers to choose from (the app's ``/model`` picker, the ACP ``model`` option):
the one in use, the configured one, the offline demo, and the models pydantic-ai knows of every provider
whose key is set; with a ``base_url`` server (where every name goes to that server) its ``GET /models``
list instead of the providers'. One list, so that every front end offers the same models."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from freeact_tui.project.project_env import EMPTY

SERVER_TIMEOUT = 3.0
"""Seconds a server's model list may take."""


@dataclass(frozen=True)
class ModelChoice:
    name: str
    """What ``--model`` / ``/model`` take (``provider:name``, or a name the ``base_url`` server serves)."""
    detail: str = ""
    """Why it is offered (``from the config``, ``OPENAI_API_KEY is set``, ``served at …``)."""


class ModelListError(Exception):
    """A server's model list could not be fetched; ``str(error)`` says why in one line."""


def offline_choices(
    config_model: str | None,
    base_url: str | None,
    current: str | None,
    project_keys: Mapping[str, str] = EMPTY,
) -> list[ModelChoice]:
    """The models usable now, found without the network: in use, configured, offline, and by key found
    (in the environment or among the trusted project's keys, ``project_keys``)."""
    from pydantic_ai.models import known_model_names

    from freeact_tui.agent.models import DEMO_MODEL, keys_found

    items: dict[str, ModelChoice] = {}

    def add(name: str | None, detail: str) -> None:
        if name and name not in items:
            items[name] = ModelChoice(name, detail)

    add(current, "")
    add(config_model, "from the config")
    add(DEMO_MODEL, "offline demo, no key")
    if base_url:  # a provider:name would be sent to that server too: its own list is fetched
        return list(items.values())
    known = known_model_names()
    for provider, variable in keys_found(project_keys):
        for name in known:
            if name.startswith(f"{provider}:"):
                add(name, f"{variable} is set")
    return list(items.values())


async def server_models(
    base_url: str,
    api_key_env: str | None,
    seconds: float = SERVER_TIMEOUT,
    project_keys: Mapping[str, str] = EMPTY,
) -> list[str]:
    """The model ids an OpenAI-compatible server lists at ``GET {base_url}/models``.

    Raises:
        ModelListError: The server did not answer in ``seconds``, answered with an error, or
            with something that is not a model list (the message says which).
    """
    import httpx

    from freeact_tui.agent.models import key_value

    url = base_url.rstrip("/") + "/models"
    key = key_value(api_key_env, project_keys) if api_key_env else None
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with httpx.AsyncClient(timeout=seconds) as client:
            response = await client.get(url, headers=headers)
    except httpx.TimeoutException:
        raise ModelListError(f"{url} did not answer within {seconds:g} s.") from None
    except httpx.HTTPError as exc:
        raise ModelListError(f"Cannot reach {url}: {exc or type(exc).__name__}") from None
    if response.status_code != 200:
        raise ModelListError(f"{url} answered HTTP {response.status_code}.")
    try:
        data = response.json()["data"]
        names = [str(entry["id"]) for entry in data]
    except (ValueError, KeyError, TypeError):
        raise ModelListError(f"{url} did not send a model list.") from None
    return sorted(names)


__all__ = ["SERVER_TIMEOUT", "ModelChoice", "ModelListError", "offline_choices", "server_models"]
