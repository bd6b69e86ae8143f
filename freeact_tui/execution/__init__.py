"""Executors: where code actions run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freeact_tui.execution.base import Executor, ExecutorError


def create_executor(
    mode: str,
    *,
    working_dir: Path,
    images_dir: Path | None = None,
    kernel_env: dict[str, str] | None = None,
    extra_pythonpath: list[Path] | None = None,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
    log_dir: Path | None = None,
) -> Executor:
    """Build the executor for an execution mode.

    Args:
        mode: ``local`` (a kernel on this machine) or ``sandbox`` (the same inside bubblewrap:
            writes only to ``working_dir``, no network; Linux, needs ``bwrap`` and ``socat``).
        working_dir: The kernel's working directory.
        images_dir: Where PNG output is saved.
        kernel_env: Extra environment variables of the kernel.
        extra_pythonpath: Directories put on the kernel's ``PYTHONPATH`` (generated MCP APIs).
        mcp_servers: The MCP servers code may call (package name -> connection parameters, each
            optionally with ``timeout``); anything else is refused. See ``KernelExecutor``.
        log_dir: Where MCP servers' stderr goes (default: ``logs`` in the user data dir).

    Raises:
        ExecutorError: the mode is not available in this version (a missing sandbox tool is
            reported by ``start()``).
        ValueError: a malformed ``mcp_servers`` entry.
    """
    if mode in ("local", "sandbox"):
        from freeact_tui.execution.kernel import KernelExecutor
        from freeact_tui.execution.sandbox import SandboxExecutor

        kind = KernelExecutor if mode == "local" else SandboxExecutor
        return kind(
            working_dir=working_dir,
            images_dir=images_dir,
            kernel_env=kernel_env,
            extra_pythonpath=extra_pythonpath,
            mcp_servers=mcp_servers,
            log_dir=log_dir,
        )
    raise ExecutorError(
        f"Execution mode {mode!r} is not available in this version; use --execution local or sandbox."
    )


__all__ = ["Executor", "ExecutorError", "create_executor"]
