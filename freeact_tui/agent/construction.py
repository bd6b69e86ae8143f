"""How ``Agent``'s arguments become a ``Runtime``: keywords split into settings and per-agent ones.

``Agent(model, settings, **overrides)`` and ``Agent.from_config(config, **overrides)`` take the same
keywords: fields of ``Settings`` by name, and what is per agent (``OWN_KEYWORDS``). This module
sorts them, decides the action protocol for ``"default"`` once, and fills in the defaults of what
the caller left out (a new session id, the permission rules); the agent composes itself from the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic_ai.models import Model

from freeact_tui.agent.models import choose_protocol, resolve_model
from freeact_tui.agent.runtime import Runtime
from freeact_tui.agent.settings import Settings
from freeact_tui.permissions import PermissionRules, rules_for
from freeact_tui.store.sessions import new_session_id

if TYPE_CHECKING:
    from freeact_tui.config import Config

OWN_KEYWORDS = (  # not settings
    "agent_id", "session_id", "permissions", "executor", "parent_corr_id", "eager_kernel", "file_access",
    "kernel_launch",
)  # fmt: skip


def take_own(overrides: dict[str, Any]) -> dict[str, Any]:
    """Remove the per-agent keywords from ``overrides`` and return them; what stays are settings."""
    return {k: overrides.pop(k) for k in OWN_KEYWORDS if k in overrides}


def resolve_runtime(
    model: str | Model, settings: Settings | None, overrides: dict[str, Any]
) -> tuple[Runtime, dict[str, Any]]:
    """The runtime ``Agent(model, settings, **overrides)`` runs with, and the per-agent keywords given.

    Raises:
        TypeError: a keyword is neither a ``Settings`` field nor one of the per-agent ones.
    """
    own = take_own(overrides)
    resolved = (settings or Settings()).with_overrides(**overrides)
    # "default" is decided once, here: the runtime, its subagents and the prompt see the choice.
    protocol = choose_protocol(resolved.action_protocol, model, resolved.base_url)
    resolved = resolved.with_overrides(action_protocol=protocol)
    permissions = own.get("permissions") or PermissionRules(
        None, skip_permissions=resolved.skip_permissions, working_dir=resolved.working_dir
    )
    permissions.sandboxed = resolved.execution == "sandbox"  # the sandboxed-auto mode is there
    runtime = Runtime(
        model=resolve_model(model, base_url=resolved.base_url, api_key_env=resolved.api_key_env),
        settings=resolved,
        session_id=own.get("session_id") or new_session_id(),
        permissions=permissions,
        agent_id=own.get("agent_id") or "main",
        executor=own.get("executor"),
        parent_corr_id=own.get("parent_corr_id"),
        file_access=own.get("file_access"),
        model_spec=model if isinstance(model, str) else None,
    )
    return runtime, own


def config_arguments(
    config: Config, overrides: dict[str, Any]
) -> tuple[str | Model, Settings, dict[str, Any]]:
    """``Agent``'s arguments for a validated ``Config``, keyword ``overrides`` winning.

    Returns the model, the settings and the per-agent keywords.

    Without ``permissions`` given, the rules are the working directory's (``rules_for``, as far as
    ``project_trusted`` lets the project's own rules count).

    Raises:
        ValueError: neither the config nor ``overrides`` names a model.
    """
    model = overrides.pop("model", config.model)
    if model is None:
        raise ValueError("no model configured")
    own = take_own(overrides)
    settings = Settings.from_config(config, **overrides)
    if own.get("permissions") is None:
        own["permissions"] = rules_for(
            settings.working_dir,
            skip_permissions=settings.skip_permissions,
            trusted=settings.project_trusted,
        )
    return model, settings, own


__all__ = ["OWN_KEYWORDS", "config_arguments", "resolve_runtime", "take_own"]
