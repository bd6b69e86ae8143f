"""A kernel image for Enterprise Gateway's ``DockerProcessProxy``, built here without pulling anything.

It holds what docs/remote.md's Kubernetes kernel image holds, made from this machine's files and
streamed into ``docker import`` (no registry is needed):

- Python (this machine's interpreter and its standard library, at the same path);
- a virtual environment with the kernel side of the agent: ipykernel 6 (as EG's images), mcpygen (the approval and
  tool-call client that ipybox's init code imports) with ``mcp<2``, and pycryptodomex (EG's launcher
  encrypts the connection info it sends back to EG with it); made once under
  ``~/.cache/freeact-tui-tests/``;
- EG's launcher ``kernel-launchers/python/scripts/launch_ipykernel.py`` and ``bootstrap-kernel.sh``
  (from EG's source distribution) as the image's command, as in EG's own ``kernel-py`` image;
- a shell and common commands for ``!cmd``, their shared libraries, and a non-root user (uid 1000,
  EG's default ``KERNEL_UID``) with a home directory.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from freeact_tui.execution.isolation.docker_image import COMMANDS, _add_text, _elf_files, shared_libraries
from tests.enterprise_gateway import _locked, _unavailable, cache_dir, launchers

if TYPE_CHECKING:
    from tests.tls_gateway import Gateway

# mcpygen 0.1.4 asks for mcp>=1.26 but fails to import with mcp 2: pinned as in pyproject.toml.
# ipykernel<7: EG's own kernel images pin it ("ipykernel 7.x rewrote the asyncio integration in a way
# that prevents kernels from transitioning to the idle state under Enterprise Gateway's process-proxy
# model", etc/docker/kernel-py/README.md).
KERNEL_PACKAGES = ("ipykernel>=6.29,<7", "mcpygen>=0.1.4", "mcp>=1.26,<2", "pycryptodomex")
LAUNCHERS_DIR = "/usr/local/bin/kernel-launchers"
HOME = "/home/jovyan"
UID, GID = 1000, 100
# Not needed by a kernel: left out of the image's standard library.
_SKIP_STDLIB = {"site-packages", "test", "idlelib", "tkinter", "ensurepip", "turtledemo", "lib2to3"}


def kernel_venv() -> Path:
    """A virtual environment of this machine's Python with ``KERNEL_PACKAGES`` (made once)."""
    venv = cache_dir() / f"eg-kernel-venv-py{sys.version_info.major}{sys.version_info.minor}"
    with _locked(venv.name):
        marker = venv / ".installed"
        if not marker.exists() or marker.read_text() != " ".join(KERNEL_PACKAGES):
            base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
            subprocess.run([str(base), "-m", "venv", "--clear", str(venv)], check=True)
            done = subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 *KERNEL_PACKAGES],
                capture_output=True, text=True, timeout=900,
            )  # fmt: skip
            if done.returncode != 0:
                _unavailable("installing the kernel image's packages", done.stdout + done.stderr)
            marker.write_text(" ".join(KERNEL_PACKAGES))
    return venv


def _stdlib_files(base: Path) -> list[Path]:
    """The interpreter, its shared library and its standard library (without ``_SKIP_STDLIB``)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    files = [base / "bin" / version, *sorted((base / "lib").glob(f"libpython{sys.version_info.major}*.so*"))]
    stdlib = base / "lib" / version
    for dirpath, dirnames, names in os.walk(stdlib):
        if Path(dirpath) == stdlib:
            dirnames[:] = [d for d in dirnames if d not in _SKIP_STDLIB and not d.startswith("config-")]
        files += [Path(dirpath) / n for n in names]
    return files


def _tree(root: Path) -> list[Path]:
    files = []
    for dirpath, _, names in os.walk(root):
        files += [Path(dirpath) / n for n in names]
    return files


class _Rootfs:
    def __init__(self, tar: tarfile.TarFile) -> None:
        self.tar = tar
        self.seen: set[str] = set()

    def add(self, path: Path | str, arcname: str | None = None, *, owner: int = 0) -> None:
        """Add ``path`` (with its parents; a link with its target), readable by everyone."""
        name = os.path.normpath(str(path))
        arc = (arcname or name).lstrip("/")
        if arc in self.seen or not arc:
            return
        self.seen.add(arc)
        self.add(os.path.dirname(name), os.path.dirname("/" + arc) if arcname else None)
        info = self.tar.gettarinfo(name, arcname=arc)
        info.uid = info.gid = owner
        info.uname = info.gname = ""
        if info.isdir():
            info.mode |= 0o755
        elif info.isfile():
            info.mode |= 0o444 | (0o111 if info.mode & 0o100 else 0)
        if info.issym():
            self.tar.addfile(info)
            if arcname is None:
                self.add(os.path.normpath(os.path.join(os.path.dirname(name), os.readlink(name))))
        elif info.isfile():
            with open(name, "rb") as f:
                self.tar.addfile(info, f)
        else:
            self.tar.addfile(info)

    def directory(self, name: str, mode: int = 0o755, owner: int = 0) -> None:
        if name.lstrip("/") in self.seen:
            return
        self.seen.add(name.lstrip("/"))
        info = tarfile.TarInfo(name.lstrip("/"))
        info.type = tarfile.DIRTYPE
        info.mode = mode
        info.uid = owner
        info.gid = GID if owner else 0
        self.tar.addfile(info)


def write_kernel_rootfs(out: IO[bytes]) -> None:
    venv, eg_launchers = kernel_venv(), launchers()
    base = Path(sys.base_prefix)
    python = _stdlib_files(base)
    packages = _tree(venv)
    commands = [Path(p) for p in (shutil.which(c) for c in COMMANDS) if p is not None]
    elfs = [str(p) for p in python if ".so" in p.name or p.name.startswith("python")]
    libs = shared_libraries([*map(str, commands), *elfs, *_elf_files([venv])])
    with tarfile.open(fileobj=out, mode="w|") as tar:
        fs = _Rootfs(tar)
        for name in ("/bin", "/lib", "/lib64", "/sbin"):
            if os.path.islink(name):
                fs.add(name)
        for name in ("tmp", "proc", "dev", "sys", "etc", "root", "usr/local/bin"):
            fs.directory(name, 0o1777 if name == "tmp" else 0o755)
        fs.directory(HOME, 0o755, owner=UID)
        for path in [*commands, *map(Path, sorted(libs)), *python, *packages]:
            fs.add(path)
        for path in _tree(eg_launchers / "python"):
            fs.add(path, f"{LAUNCHERS_DIR}/{path.relative_to(eg_launchers)}")
        fs.add(eg_launchers / "bootstrap" / "bootstrap-kernel.sh", "/usr/local/bin/bootstrap-kernel.sh")
        for name in ("/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/localtime"):
            if os.path.exists(name):
                fs.add(name)
        _add_text(tar, "etc/passwd", f"root:x:0:0:root:/root:/bin/sh\njovyan:x:{UID}:{GID}::{HOME}:/bin/sh\n")
        _add_text(tar, "etc/group", f"root:x:0:\nusers:x:{GID}:\n")
        _add_text(tar, "etc/hosts", "127.0.0.1 localhost\n")


def build_kernel_image(tag: str) -> None:
    """Build ``tag`` with ``docker import`` (see the module doc)."""
    venv = kernel_venv()
    changes = [
        f"ENV PATH={venv}/bin:/usr/local/bin:/usr/bin:/bin",
        "ENV KERNEL_LANGUAGE=python",
        f"ENV HOME={HOME}",
        f"ENV KERNEL_LAUNCHERS_DIR={LAUNCHERS_DIR}",
        f"USER {UID}",
        f"WORKDIR {HOME}",
        'CMD ["/usr/local/bin/bootstrap-kernel.sh"]',
    ]
    args = [a for change in changes for a in ("--change", change)]
    old = _image_id(tag)
    with tempfile.TemporaryFile() as rootfs:  # ~300 MB: on disk, not in memory
        write_kernel_rootfs(rootfs)
        rootfs.seek(0)
        done = subprocess.run(
            ["docker", "import", *args, "-", tag], stdin=rootfs, capture_output=True, timeout=600
        )
    if done.returncode != 0:
        raise RuntimeError(f"docker import failed: {(done.stdout + done.stderr).decode(errors='replace')}")
    if old and old != _image_id(tag):  # the previous build is left untagged: remove it (~300 MB)
        subprocess.run(["docker", "rmi", old], capture_output=True)


def _image_id(tag: str) -> str | None:
    done = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True, text=True
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


DOCKER_KERNEL = "freeact_docker"


def kernel_containers(gateway: Gateway) -> list[dict[str, str]]:
    """The containers of kernels that ``gateway`` launched (``docker ps`` rows as dicts).

    Only this gateway's: other EG instances (another test run, a bench) may be launching their own.
    EG's launcher labels each container with its kernel id; the gateway's log names the ids it launched.
    """
    launched = set(re.findall(r"KernelID: ([0-9a-f-]{36})", gateway.log.read_text(errors="replace")))
    done = subprocess.run(
        ["docker", "ps", "--all", "--filter", "label=app=enterprise-gateway",
         "--format", '{{json .}}\t{{.Label "kernel_id"}}'],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = [line.rsplit("\t", 1) for line in done.stdout.splitlines()]
    return [json.loads(row) for row, kernel_id in rows if kernel_id in launched]


def _bridge_gateway() -> str:
    """The host's address on Docker's default bridge: where kernels in containers reach EG."""
    done = subprocess.run(
        ["docker", "network", "inspect", "bridge", "--format", "{{json .IPAM.Config}}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    config = json.loads(done.stdout)[0]
    # Some Docker versions name no gateway in the bridge's IPAM config: the bridge's is the subnet's first host.
    return config.get("Gateway") or str(next(ipaddress.ip_network(config["Subnet"]).hosts()))


@contextmanager
def docker_enterprise_gateway(directory: Path, token: str, image: str) -> Iterator[Gateway]:
    """EG (TLS, ``token``, ``/eg/``) whose only kernel spec starts kernels as containers of ``image``.

    The kernel spec is EG's ``python_docker`` one with ``DockerProcessProxy`` (not swarm) and EG's own
    ``launch_docker.py``; ``image`` is built first (``build_kernel_image``). Containers still there
    when the caller is done are removed (only this EG's: see ``kernel_containers``).
    """
    from tests.enterprise_gateway import enterprise_gateway_python, gateway_env, write_kernelspec
    from tests.tls_gateway import tls_gateway

    build_kernel_image(image)
    write_kernelspec(
        directory,
        DOCKER_KERNEL,
        {
            "display_name": "freeact (Docker)",
            "language": "python",
            "metadata": {
                "process_proxy": {
                    "class_name": "enterprise_gateway.services.processproxies.docker_swarm.DockerProcessProxy",
                    "config": {"image_name": image},
                }
            },
            "env": {},
            "argv": [str(enterprise_gateway_python()), str(launchers() / "docker" / "scripts" / "launch_docker.py"),
                     "--RemoteProcessProxy.kernel-id", "{kernel_id}",
                     "--RemoteProcessProxy.port-range", "{port_range}",
                     "--RemoteProcessProxy.response-address", "{response_address}",
                     "--RemoteProcessProxy.public-key", "{public_key}"],
        },
    )  # fmt: skip
    env = gateway_env(directory)
    env.update(
        EG_DOCKER_NETWORK="bridge",
        EG_RESPONSE_IP=_bridge_gateway(),  # the container's way back to EG
        EG_KERNEL_LAUNCH_TIMEOUT="120",
        EG_INHERITED_ENVS="PATH",  # launch_docker.py needs it (EG's Helm chart sets the same)
    )
    with tls_gateway(directory, token, kind="enterprise-gateway", env=env, kernel=DOCKER_KERNEL) as gw:
        try:
            yield gw
        finally:
            for container in kernel_containers(gw):
                subprocess.run(["docker", "rm", "-f", container["ID"]], capture_output=True)
