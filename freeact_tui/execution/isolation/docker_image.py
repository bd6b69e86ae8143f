"""A minimal local Docker image for the docker execution mode, made from this machine's own files.

Images cannot be pulled everywhere (no registry access), and the kernel's Python comes from the
host anyway (bind-mounted read-only), so the image only needs a shell, a few common commands and
the shared libraries that they and the host interpreter's extension modules link to. It is
streamed as a tar archive into ``docker import``.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable
from pathlib import Path

from freeact_tui.execution.base import ExecutorError

DEFAULT_IMAGE = "freeact-tui-kernel:latest"

# Commands `!cmd` lines commonly use; those missing on the host are left out.
COMMANDS = (
    "sh", "bash", "dash", "env", "cat", "echo", "ls", "sleep", "true", "false", "pwd", "mkdir",
    "rm", "rmdir", "cp", "mv", "ln", "head", "tail", "grep", "sed", "awk", "wc", "sort", "uniq",
    "tr", "cut", "date", "id", "uname", "printf", "test", "find", "xargs", "tee", "touch",
    "chmod", "basename", "dirname", "readlink", "realpath", "ps", "kill", "which", "diff",
    "tar", "gzip", "stat", "du", "df", "seq", "nproc", "whoami", "hostname", "expr", "md5sum",
    "sha256sum", "timeout", "nice", "stty", "tty",
)  # fmt: skip

_ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/nsswitch.conf", "/etc/localtime")


def python_roots() -> list[Path]:
    """The directories of this Python that the container gets bind-mounted (prefixes, ``sys.path``)."""
    names = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    # sys.path[0] is the script's directory (or the current one): not part of the environment.
    names += [os.path.dirname(os.path.realpath(sys.executable)), *sys.path[1:]]
    return outermost(Path(n) for n in names if n)


# Never bound over the container's own (a PYTHONPATH entry could name one).
SYSTEM_DIRS = frozenset(
    Path(p) for p in ("/", "/tmp", "/proc", "/dev", "/sys", "/etc", "/run", "/var", "/usr")
)


def outermost(paths: Iterable[Path]) -> list[Path]:
    """Existing directories among ``paths`` (files stand for their directory), none inside another.

    The container's system directories (``SYSTEM_DIRS``) are left out.
    """
    found: set[Path] = set()
    for path in paths:
        path = path.resolve()
        if path.is_file():
            path = path.parent
        if path.is_dir() and path not in SYSTEM_DIRS:
            found.add(path)
    return sorted(p for p in found if not any(p != q and p.is_relative_to(q) for q in found))


def _elf_files(roots: Iterable[Path]) -> list[str]:
    files: list[str] = []
    for root in roots:
        for dirpath, _, names in os.walk(root):
            files += [os.path.join(dirpath, n) for n in names if ".so" in n]
    return files


def shared_libraries(files: list[str]) -> set[str]:
    """Absolute paths of the shared libraries ``files`` load (by ``ldd``), the loader included."""
    libs: set[str] = set()
    for start in range(0, len(files), 200):
        done = subprocess.run(
            ["ldd", *files[start : start + 200]], capture_output=True, text=True, check=False
        )
        for line in done.stdout.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) > parts.index("=>") + 1:
                target = parts[parts.index("=>") + 1]
            elif parts and parts[0].startswith("/"):
                target = parts[0]
            else:
                continue
            if target.startswith("/") and not target.endswith(":"):
                libs.add(target)
    return libs


def rootfs_members(extra_roots: Iterable[Path] = ()) -> list[str]:
    """Host paths that make the image: commands, their libraries and the Python roots' libraries.

    Args:
        extra_roots: More directories whose extension modules' libraries the image must hold.
    """
    commands = [p for p in (shutil.which(c) for c in COMMANDS) if p is not None]
    roots = outermost([*python_roots(), *extra_roots])
    libs = shared_libraries([*commands, *_elf_files(roots)])
    # Libraries inside the mounted Python roots come with the mounts.
    libs = {lib for lib in libs if not any(Path(lib).is_relative_to(r) for r in roots)}
    return sorted({*commands, *libs, *(f for f in _ETC_FILES if os.path.exists(f))})


def _add_path(tar: tarfile.TarFile, name: str, seen: set[str]) -> None:
    """Add ``name`` with its parent directories and, for a symbolic link, what it points to."""
    if name in seen or name == "/":
        return
    seen.add(name)
    _add_path(tar, os.path.dirname(name), seen)
    info = tar.gettarinfo(name, arcname=name.lstrip("/"))
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if info.issym():
        tar.addfile(info)
        _add_path(tar, os.path.normpath(os.path.join(os.path.dirname(name), os.readlink(name))), seen)
    elif info.isfile():
        with open(name, "rb") as f:
            tar.addfile(info, f)
    else:
        tar.addfile(info)


def _add_text(tar: tarfile.TarFile, name: str, text: str) -> None:
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def write_rootfs(out: io.BufferedIOBase | io.RawIOBase, members: list[str]) -> None:
    """Write the root file system as an uncompressed tar stream to ``out``."""
    with tarfile.open(fileobj=out, mode="w|") as tar:
        seen: set[str] = set()
        for name in ("/bin", "/lib", "/lib64", "/sbin"):
            if os.path.islink(name):
                _add_path(tar, name, seen)
        for name in members:
            _add_path(tar, name, seen)
        for name in ("tmp", "proc", "dev", "sys", "root", "etc"):
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if name == "tmp" else 0o755
            if f"/{name}" not in seen:
                tar.addfile(info)
        _add_text(
            tar,
            "etc/passwd",
            f"root:x:0:0:root:/root:/bin/sh\nuser:x:{os.getuid()}:{os.getgid()}::/tmp:/bin/sh\n",
        )
        _add_text(tar, "etc/group", f"root:x:0:\nuser:x:{os.getgid()}:\n")
        _add_text(tar, "etc/hosts", "127.0.0.1 localhost\n::1 localhost\n")


async def build_image(tag: str = DEFAULT_IMAGE, docker: str = "docker") -> None:
    """Build ``tag`` with ``docker import`` from a root file system made of this machine's files.

    Raises:
        ExecutorError: ``docker import`` failed (the message has its output).
    """
    members = await asyncio.to_thread(rootfs_members)
    process = await asyncio.create_subprocess_exec(
        docker,
        "import",
        "--change",
        'CMD ["/bin/sh"]',
        "-",
        tag,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert process.stdin is not None
    buffer = io.BytesIO()
    await asyncio.to_thread(write_rootfs, buffer, members)
    output, _ = await process.communicate(buffer.getvalue())
    if process.returncode != 0:
        raise ExecutorError(f"docker import failed: {output.decode(errors='replace').strip()}")
