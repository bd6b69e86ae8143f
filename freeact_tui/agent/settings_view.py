"""Read-only views of an agent's settings as its attributes (``agent.working_dir``, …).

A descriptor, not a base class: ``Agent`` names each view it offers, and each reads the agent's
``runtime`` (the one place its settings live), so nothing is copied that could drift.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class SettingView(Generic[T]):
    """``runtime.settings.<name>`` (or ``runtime.<name>`` with ``of_runtime``) of the owning agent.

    Args:
        name: The field of ``Settings`` (or of ``Runtime``) to read.
        of_runtime: Read the runtime's own field instead of one of its settings.
    """

    def __init__(self, name: str, *, of_runtime: bool = False) -> None:
        self.name = name
        self.of_runtime = of_runtime

    @overload
    def __get__(self, agent: None, owner: type[Any]) -> SettingView[T]: ...
    @overload
    def __get__(self, agent: object, owner: type[Any]) -> T: ...
    def __get__(self, agent: object | None, owner: type[Any]) -> SettingView[T] | T:
        if agent is None:
            return self
        runtime = agent.runtime  # type: ignore[attr-defined]
        value: T = getattr(runtime if self.of_runtime else runtime.settings, self.name)
        return value


__all__ = ["SettingView"]
