"""Executors: where code actions run.

Backends only: local (ipybox), sandbox (bubblewrap), docker, remote gateway. Imports nothing above
it: only the shared modules (``events``, ``config``, ``paths``). This module itself imports nothing of
them at import time: the command line takes ``spare_gateway`` from here before anything else loads.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from freeact_tui.execution.base import Executor, ExecutorError


def __getattr__(name: str) -> Any:
    if name in ("Executor", "ExecutorError"):
        from freeact_tui.execution import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_BACKENDS = {
    "local": ("freeact_tui.execution.kernel.executor",),
    "sandbox": ("freeact_tui.execution.isolation.sandbox",),
    "docker": ("freeact_tui.execution.isolation.docker", "freeact_tui.execution.isolation.docker_image"),
    "remote": ("freeact_tui.execution.gateway.remote",),
}


def preload_backend(mode: str) -> None:
    """Import the modules of an execution mode (ipybox, mcpygen and the mcp stack: ~1-2 s).

    Blocking; an app calls it in a thread (``asyncio.to_thread``) so its event loop keeps drawing
    the screen and taking keys while the kernel's code loads. Unknown modes do nothing here
    (``create_executor`` reports them).
    """
    for module in _BACKENDS.get(mode, ()):
        importlib.import_module(module)


def create_executor(
    mode: str,
    *,
    working_dir: Path,
    images_dir: Path | None = None,
    kernel_env: dict[str, str] | None = None,
    extra_pythonpath: list[Path] | None = None,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
    log_dir: Path | None = None,
    docker_image: str | None = None,
    remote_url: str | None = None,
    remote_insecure: bool = False,
    import_working_dir: bool = True,
    generated_root: Path | None = None,
) -> Executor:
    """Build the executor for an execution mode.

    Args:
        mode: ``local`` (a kernel on this machine), ``sandbox`` (the same inside bubblewrap:
            writes only to ``working_dir``, no network; Linux, needs ``bwrap`` and ``socat``),
            ``docker`` (the same in a Docker container, see ``DockerExecutor``) or ``remote`` (a
            kernel in a running Jupyter Kernel Gateway at ``remote_url``, see ``RemoteExecutor``).
        working_dir: The kernel's working directory.
        images_dir: Where PNG output is saved.
        kernel_env: Extra environment variables of the kernel.
        extra_pythonpath: Directories put on the kernel's ``PYTHONPATH`` (generated MCP APIs).
        mcp_servers: The MCP servers code may call (package name -> connection parameters, each
            optionally with ``timeout``); anything else is refused. See ``KernelExecutor``.
        log_dir: Where MCP servers' stderr goes (default: ``logs`` in the user data dir).
        docker_image: The image of the ``docker`` mode (default: ``freeact-tui-kernel:latest``).
        remote_url: The gateway of the ``remote`` mode (``http(s)://host[:port][/prefix/]``; None:
            ``JUPYTER_GATEWAY_URL``). Token and CA bundle come from the environment (see
            ``gateway_endpoint``).
        remote_insecure: Do not verify the remote gateway's TLS certificate.
        import_working_dir: Whether code in the kernel imports the working dir's modules (off before the
            folder is trusted).
        generated_root: The generated root (``mcptools``, ``gentools``) code imports from, only as the app
            checked or wrote it (see ``KernelExecutor``); a ``remote`` kernel gets it on its path (by name).

    Raises:
        ExecutorError: the mode is unknown, or ``remote`` without a valid gateway URL (a
            missing sandbox tool, Docker daemon or image is reported by ``start()``).
        ValueError: a malformed ``mcp_servers`` entry.
    """
    common: dict[str, Any] = {
        "working_dir": working_dir,
        "images_dir": images_dir,
        "kernel_env": kernel_env,
        "extra_pythonpath": extra_pythonpath,
        "mcp_servers": mcp_servers,
        "log_dir": log_dir,
        "import_working_dir": import_working_dir,
    }
    local = {**common, "generated_root": generated_root}
    if mode == "local":
        from freeact_tui.execution.kernel.executor import KernelExecutor

        return KernelExecutor(**local)
    if mode == "sandbox":
        from freeact_tui.execution.isolation.sandbox import SandboxExecutor

        return SandboxExecutor(**local)
    if mode == "docker":
        from freeact_tui.execution.isolation.docker import DockerExecutor
        from freeact_tui.execution.isolation.docker_image import DEFAULT_IMAGE

        return DockerExecutor(image=docker_image or DEFAULT_IMAGE, **local)
    if mode == "remote":
        from freeact_tui.execution.gateway.remote import RemoteExecutor

        # A remote kernel cannot read the app's manifest: the root goes by path, as the user's remote setup
        # provides it (docs/remote.md), checked by nothing here.
        remote = {**common, "extra_pythonpath": [*(extra_pythonpath or []), *filter(None, [generated_root])]}
        return RemoteExecutor(remote_url=remote_url, remote_insecure=remote_insecure, **remote)
    from freeact_tui.execution.base import ExecutorError

    raise ExecutorError(f"Unknown execution mode {mode!r}; use local, sandbox, docker or remote.")


__all__ = ["Executor", "ExecutorError", "create_executor", "preload_backend"]
