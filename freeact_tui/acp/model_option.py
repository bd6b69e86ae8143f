"""The model as a session config option (``session/set_config_option`` with ``configId: "model"``, and
``session/set_model`` for older clients): the same list the app's ``/model`` offers
(``agent.model_choices``), a ``--base-url`` server's own ``/models`` included."""

from __future__ import annotations

import logging

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from freeact_tui.agent.model_choices import ModelChoice, ModelListError, offline_choices, server_models
from freeact_tui.project.config import Config

logger = logging.getLogger(__name__)

MODEL_OPTION = "model"
"""The config option id clients look for (codex-acp, claude-agent-acp and acpx use the same)."""


async def model_choices(config: Config, current: str | None) -> list[ModelChoice]:
    """The models to offer: offline ones, then the ``base_url`` server's list (a failure is logged)."""
    choices = offline_choices(config.model, config.base_url, current, config.provider_keys)
    if config.base_url:
        try:
            names = await server_models(
                config.base_url, config.api_key_env, project_keys=config.provider_keys
            )
        except ModelListError as exc:
            logger.info("no model list from the server: %s", exc)
            names = []
        known = {c.name for c in choices}
        choices += [ModelChoice(n, f"served at {config.base_url}") for n in names if n not in known]
    return choices


def model_option(choices: list[ModelChoice], current: str) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        type="select",
        id=MODEL_OPTION,
        name="Model",
        description="The model the next prompt talks to (the app's /model).",
        category="model",
        current_value=current,
        options=[
            SessionConfigSelectOption(value=c.name, name=c.name, description=c.detail or None)
            for c in choices
        ],
    )


__all__ = ["MODEL_OPTION", "model_choices", "model_option"]
