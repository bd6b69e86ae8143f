"""The agent's settings as properties of the agent (``agent.working_dir``, ``agent.execution_timeout``, …).

``Agent`` inherits them; each reads the agent's ``Runtime``, the one place its settings live.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from freeact_tui.agent.runtime import Runtime


class SettingsView:
    """Read-only views of an agent's settings (``runtime.settings``) and its parent's correlation id."""

    runtime: Runtime

    @property
    def model_settings(self) -> Any:
        return self.runtime.settings.model_settings

    @property
    def working_dir(self) -> Path:
        return self.runtime.settings.working_dir

    @property
    def sessions_dir(self) -> Path | None:
        return self.runtime.settings.sessions_dir

    @property
    def execution_mode(self) -> str:
        return self.runtime.settings.execution

    @property
    def execution_timeout(self) -> float:
        return self.runtime.settings.execution_timeout

    @property
    def approval_timeout(self) -> float | None:
        return self.runtime.settings.approval_timeout

    @property
    def skip_permissions(self) -> bool:
        return self.runtime.settings.skip_permissions

    @property
    def parent_corr_id(self) -> str | None:
        return self.runtime.parent_corr_id
