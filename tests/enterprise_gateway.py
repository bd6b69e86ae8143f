"""A stock Jupyter Enterprise Gateway for the tests, in an environment of its own.

Enterprise Gateway 3.3.0 pins ``jupyter_client<7``, ``jupyter_server<2`` and ``pyzmq<25``, while the
app's kernels need ipykernel 7 (``jupyter_client>=8``): the two cannot share one environment, so it
cannot be in the ``test`` extra. The first test that needs it makes a virtual environment under
``~/.cache/freeact-tui-tests/`` (of the real home) and installs ``jupyter_enterprise_gateway==3.3.0`` from the package
index there (once; later runs reuse it). ``FREEACT_TEST_EG_PYTHON`` names an interpreter that already
has it instead. Without the package index (and outside CI) the tests that need it skip, saying why.

EG's kernel launchers (``launch_ipykernel.py``, ``launch_docker.py``, ``bootstrap-kernel.sh``) are not in
its wheel, only in its source distribution: ``launchers()`` downloads and unpacks that (once).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

EG_VERSION = "3.3.0"
LOCAL_KERNEL = "freeact_python"
REFUSED_USER = "mallory"  # the test gateways' unauthorized_users


def cache_dir() -> Path:
    """``~/.cache/freeact-tui-tests`` of the real home (the tests' own HOME is temporary)."""
    from tests.user_dirs import REAL_HOME

    path = REAL_HOME / ".cache" / "freeact-tui-tests"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def _locked(name: str) -> Iterator[None]:
    """One process at a time makes a cached environment (xdist workers, a bench next to the tests)."""
    with (cache_dir() / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _unavailable(what: str, output: str) -> None:
    message = f"{what} failed (it needs the package index):\n{output[-3000:]}"
    if os.environ.get("CI"):
        raise RuntimeError(message)
    pytest.skip(message)


def enterprise_gateway_python() -> Path:
    """An interpreter with ``jupyter_enterprise_gateway`` (made on first use, see the module doc)."""
    named = os.environ.get("FREEACT_TEST_EG_PYTHON")
    if named:
        return Path(named)
    venv = cache_dir() / f"enterprise-gateway-{EG_VERSION}"
    python = venv / "bin" / "python"
    marker = venv / ".installed"
    with _locked(venv.name):
        if not marker.exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            done = subprocess.run(
                [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 f"jupyter_enterprise_gateway=={EG_VERSION}"],
                capture_output=True, text=True, timeout=900,
            )  # fmt: skip
            if done.returncode != 0:
                _unavailable(
                    f"installing jupyter_enterprise_gateway=={EG_VERSION}", done.stdout + done.stderr
                )
            marker.write_text(EG_VERSION)
    return python


def launchers() -> Path:
    """EG's ``etc/kernel-launchers`` directory from its source distribution (downloaded once)."""
    root = cache_dir() / f"enterprise-gateway-{EG_VERSION}-sdist"
    unpacked = root / f"jupyter_enterprise_gateway-{EG_VERSION}"
    with _locked(root.name):
        if not (unpacked / ".unpacked").exists():
            root.mkdir(exist_ok=True)
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                 "--no-binary", ":all:", "-d", str(root), f"jupyter_enterprise_gateway=={EG_VERSION}"],
                capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            if done.returncode != 0:
                _unavailable("downloading EG's source distribution", done.stdout + done.stderr)
            with tarfile.open(root / f"jupyter_enterprise_gateway-{EG_VERSION}.tar.gz") as tar:
                tar.extractall(root, filter="data")
            (unpacked / ".unpacked").write_text(EG_VERSION)
    return unpacked / "etc" / "kernel-launchers"


def write_kernelspec(directory: Path, name: str, spec: dict[str, object]) -> None:
    kernel_dir = directory / "jupyter" / "kernels" / name
    kernel_dir.mkdir(parents=True, exist_ok=True)
    (kernel_dir / "kernel.json").write_text(json.dumps(spec, indent=2))


def gateway_env(directory: Path) -> dict[str, str]:
    """EG's environment: kernel specs from ``directory/jupyter`` only, its runtime files in ``directory``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_", "KG_", "EG_"))}
    env.pop("PYTHONPATH", None)
    env["JUPYTER_PATH"] = str(directory / "jupyter")
    env["JUPYTER_DATA_DIR"] = str(directory / "jupyter-data")
    env["JUPYTER_RUNTIME_DIR"] = str(directory / "jupyter-runtime")
    env["JUPYTER_CONFIG_DIR"] = str(directory / "jupyter-config")
    return env


def local_kernel_env(directory: Path) -> dict[str, str]:
    """EG's environment with one kernel spec: the kernel image's environment as a local process.

    That is EG's ``LocalProcessProxy`` (no ``process_proxy`` in the spec): what EG runs for a plain
    kernel spec, with its own REST API, websocket, token and TLS handling in front. The kernel's
    environment is the one the kernel image gets (``tests/eg_kernel_image.py``: ipykernel 6, as EG's
    images pin it; mcpygen).
    """
    from tests.eg_kernel_image import kernel_venv

    python = kernel_venv() / "bin" / "python"
    write_kernelspec(
        directory,
        LOCAL_KERNEL,
        {
            "display_name": "freeact (local process)",
            "language": "python",
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        },
    )
    return gateway_env(directory)
