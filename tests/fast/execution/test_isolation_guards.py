"""Every isolation backend carries the planted-name guard (issue #39, F5).

The class: an isolated backend whose code writes the folder unwatched (the sandbox, Docker) lets that code
plant a nested ``.git/config``, an ``.envrc`` or a ``.pth`` for the host to run later, unless
``planted.PlantGuard`` undoes it after each action. Docker lacked it. Every executor class the isolation
package defines must say it is guarded (``guards_planted_names``), so the next backend cannot forget.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import freeact_tui.execution.isolation as isolation
from freeact_tui.execution.kernel.executor import KernelExecutor


def _isolated_executors() -> list[type[KernelExecutor]]:
    found: list[type[KernelExecutor]] = []
    for info in pkgutil.iter_modules(isolation.__path__, isolation.__name__ + "."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, KernelExecutor) and cls.__module__ == module.__name__:
                found.append(cls)
    return found


def test_every_isolated_executor_guards_planted_names() -> None:
    executors = _isolated_executors()
    assert {cls.__name__ for cls in executors} >= {"SandboxExecutor", "DockerExecutor"}
    unguarded = [cls.__name__ for cls in executors if not cls.guards_planted_names]
    assert not unguarded, f"isolated executors without the planted-name guard: {unguarded}"
    assert KernelExecutor.guards_planted_names is False  # a local kernel's effects are approved one by one
