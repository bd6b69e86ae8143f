"""A trusted project's ``.env``: a frozen mapping read once, never written into the app's own process.

The app's ``os.environ`` is never written from a project file: every variable a table would miss would
otherwise change the app and every child it starts. The places that legitimately use the project's
values read them explicitly, through this mapping:

- ``${VAR}`` in the config (MCP servers' env and headers, ``kernel_env``): ``lookup(project)``, where the
  user's own environment wins;
- the model's provider keys: ``provider_keys(project)``, only the names ``env_policy.allowance`` calls a
  provider's key itself (a project may bring a key, never redirect where keys go).

Names ``env_policy.refusal`` refuses never enter the mapping; each is named in a notice.
"""

from __future__ import annotations

import os
from collections import ChainMap
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from freeact_tui.project.env_policy import allowance
from freeact_tui.project.policy import project_env

EMPTY: Mapping[str, str] = MappingProxyType({})


def read_project_env(path: Path, notices: list[str]) -> Mapping[str, str]:
    """The variables of a trusted project's ``.env`` that no ``env_policy`` rule refuses and that read
    nothing of the user's environment (``policy.project_env``: ``${NAME}`` only among the file's own
    names), frozen, read as the trust check read the file; ``notices`` gets each refused name and why."""
    return MappingProxyType({name: value for name, value in project_env(path, notices).items() if value is not None})


def lookup(project: Mapping[str, str]) -> Mapping[str, str]:
    """The environment ``${VAR}`` reads: the process's own, then the ``project``'s for names it lacks."""
    return ChainMap(os.environ, dict(project))


def provider_keys(project: Mapping[str, str]) -> Mapping[str, str]:
    """The ``project``'s variables that are a model provider's key itself (``env_policy.allowance``)."""
    return MappingProxyType({name: value for name, value in project.items() if allowance(name) is not None})


__all__ = ["EMPTY", "lookup", "provider_keys", "read_project_env"]
