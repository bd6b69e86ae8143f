"""Executors: where code actions run."""

from __future__ import annotations

from pathlib import Path

from freeact_tui.execution.base import Executor, ExecutorError


def create_executor(
    mode: str,
    *,
    working_dir: Path,
    images_dir: Path | None = None,
    kernel_env: dict[str, str] | None = None,
    extra_pythonpath: list[Path] | None = None,
) -> Executor:
    """Build the executor for an execution mode.

    Raises:
        ExecutorError: the mode is not available here.
    """
    if mode == "local":
        from freeact_tui.execution.kernel import KernelExecutor

        return KernelExecutor(
            working_dir=working_dir,
            images_dir=images_dir,
            kernel_env=kernel_env,
            extra_pythonpath=extra_pythonpath,
        )
    raise ExecutorError(f"Execution mode {mode!r} is not available in this version; use --execution local.")


__all__ = ["Executor", "ExecutorError", "create_executor"]
