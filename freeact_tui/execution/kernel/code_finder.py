"""The kernel's importer of generated code: a module of the generated root loads only as the app checked it.

The generated root (``mcptools/`` and ``gentools/``: a trusted freeact project's ``.freeact/generated``, or
the app's own data dir) is never on any ``PYTHONPATH`` or ``sys.path``: nothing of it loads while the
gateway or the kernel start (a ``sitecustomize.py`` there is never run). The kernel's start-up code (the
app's, run by ``init_code``, never the project's) installs ``GeneratedFinder`` instead. Every module it
loads from the root is read once, on an open descriptor, and its bytes are checked against the manifest
the app keeps in its data dir (``project.code_manifest``: the marks of the bytes the trust check read or
the app wrote itself, by real path); then those very bytes are compiled. A file changed, added or swapped
for a link since is refused with ``GeneratedCodeChanged`` (an ``ImportError`` of one line). No ``.pyc`` is
ever read or written for them (a planted ``__pycache__`` is never consulted), and ``importlib.reload``
finds the module again through the same check. The manifest is read again whenever it changes (the app's
own regenerate step rewrites it).

This module is the source of that start-up code: it imports only the standard library and defines
nothing else (``init_code`` runs the whole text in a scratch namespace, then ``install``).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import stat
import sys
from collections.abc import Sequence
from types import CodeType, ModuleType

MANIFEST_VERSION = 1
# Bytes a generated module may hold (a generated API is a few kB; more is refused, never read).
MAX_MODULE_BYTES = 8 * 1024 * 1024


class GeneratedCodeChanged(ImportError):  # noqa: N818 (an ImportError, named as what happened)
    """A generated module whose bytes are not the ones the app checked or wrote."""


def stat_mark(info: os.stat_result) -> str:
    return f"stat:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


class Manifest:
    """The manifest file as last read (read again when its stat changes)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.key: tuple[int, int, int] | None = None
        self.checked = True
        self.files: dict[str, str] = {}
        self.error: str | None = "not read yet"

    def current(self) -> Manifest:
        try:
            info = os.stat(self.path)
        except OSError as exc:
            self.key, self.error = None, f"the app's list of checked code is missing ({exc.strerror})"
            return self
        key = (info.st_ino, info.st_mtime_ns, info.st_size)
        if key == self.key:
            return self
        try:
            with open(self.path, encoding="utf-8") as f:
                raw = json.load(f)
            files = raw["files"]
            if raw.get("version") != MANIFEST_VERSION or not isinstance(files, dict):
                raise ValueError("unknown format")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.key, self.error = None, f"the app's list of checked code cannot be read ({exc})"
            return self
        self.key, self.error = key, None
        self.checked = raw.get("checked") is not False
        self.files = {str(k): str(v) for k, v in files.items()}
        return self


class VerifiedLoader(importlib.abc.InspectLoader):
    """Loads one file of the root from the bytes it checked (compiled here: no bytecode cache)."""

    def __init__(self, fullname: str, path: str, package: bool, finder: GeneratedFinder) -> None:
        self.name = fullname
        self.path = path
        self.package = package
        self.finder = finder

    def get_filename(self, fullname: str) -> str:
        return self.path

    def is_package(self, fullname: str) -> bool:
        return self.package

    def get_data(self, path: str) -> bytes:
        return self.finder.checked_bytes(path)

    def get_source(self, fullname: str) -> str:
        return importlib.util.decode_source(self.finder.checked_bytes(self.path))

    def get_code(self, fullname: str) -> CodeType:
        data = self.finder.checked_bytes(self.path)
        return compile(data, self.path, "exec", dont_inherit=True)


class GeneratedFinder(importlib.abc.MetaPathFinder):
    """Finds modules under the root; see the module docstring."""

    def __init__(self, root: str, manifest: str) -> None:
        self.root = os.path.abspath(root)
        self.freeact_generated_root = self.root  # how ``install`` finds an earlier one
        self.manifest = Manifest(manifest)

    def label(self, path: str) -> str:
        parent = os.path.dirname(os.path.dirname(self.root))
        return os.path.relpath(path, parent) if path.startswith(parent + os.sep) else path

    def refuse(self, path: str, why: str) -> GeneratedCodeChanged:
        return GeneratedCodeChanged(
            f"{self.label(path)} {why}; not imported (start freeact-tui again to review it)", path=path
        )

    def read(self, path: str) -> tuple[bytes, str, os.stat_result]:
        """The bytes of the regular file at ``path``, its real path and stat (on one descriptor)."""
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            raise self.refuse(path, f"cannot be read ({exc.strerror})") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise self.refuse(path, "is not a regular file")
            if info.st_size > MAX_MODULE_BYTES:
                raise self.refuse(path, f"holds more than {MAX_MODULE_BYTES:,} bytes")
            chunks, total = [], 0
            while total <= MAX_MODULE_BYTES and (chunk := os.read(fd, 1 << 20)):
                chunks.append(chunk)
                total += len(chunk)
            try:
                real = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                real = os.path.realpath(path)
            return b"".join(chunks), real, os.fstat(fd)
        finally:
            os.close(fd)

    def checked_bytes(self, path: str) -> bytes:
        """The bytes of ``path`` when they are the ones the manifest names (else the refusal)."""
        data, real, info = self.read(path)
        manifest = self.manifest.current()
        if manifest.error is not None:
            raise self.refuse(path, f"is not imported: {manifest.error}")
        if not manifest.checked:
            return data
        mark = manifest.files.get(real)
        if mark is None:
            raise self.refuse(path, "appeared since the folder was trusted")
        seen = stat_mark(info) if mark.startswith("stat:") else "sha256:" + hashlib.sha256(data).hexdigest()
        if seen != mark:
            raise self.refuse(path, "changed since the folder was trusted")
        return data

    def under(self, directory: str) -> bool:
        path = os.path.abspath(directory)
        return path == self.root or path.startswith(self.root + os.sep)

    def spec_in(self, fullname: str, dirs: list[str]) -> importlib.machinery.ModuleSpec | None:
        """The spec of ``fullname`` in ``dirs`` as the path finder orders them: a package or a module in
        the first directory that has one, else a namespace package of every directory of that name."""
        tail = fullname.rpartition(".")[2]
        portions: list[str] = []
        for directory in dirs:
            base = os.path.join(directory, tail)
            init = os.path.join(base, "__init__.py")
            if os.path.isdir(base) and os.path.lexists(init):
                loader = VerifiedLoader(fullname, init, True, self)
                spec = importlib.util.spec_from_file_location(
                    fullname, init, loader=loader, submodule_search_locations=[base]
                )
            elif os.path.lexists(base + ".py"):
                loader = VerifiedLoader(fullname, base + ".py", False, self)
                spec = importlib.util.spec_from_file_location(fullname, base + ".py", loader=loader)
            else:
                if os.path.isdir(base):
                    portions.append(base)
                continue
            if spec is not None:
                spec.cached = None  # never a bytecode cache
            return spec
        if portions:
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = portions
            return spec
        return None

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is None:
            return None  # a top-level name: ``TopLevel`` asks, after the installed modules
        entries = [str(p) for p in path]
        ours = [p for p in entries if self.under(p)]
        if not ours:
            return None
        spec = self.spec_in(fullname, ours)
        if spec is not None:
            return spec
        others = [p for p in entries if not self.under(p)]
        if others:
            return importlib.machinery.PathFinder.find_spec(fullname, others, target)
        # The path finder would look in these directories too (and load a .pyc or an extension): no.
        raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


class TopLevel(importlib.abc.MetaPathFinder):
    """The app's own top-level packages of the root (``packages``: ``mcptools``, ``gentools``), after every
    installed module; any other top-level name there (``json.py``, ``requests/``) is never served."""

    def __init__(self, finder: GeneratedFinder, packages: Sequence[str]) -> None:
        self.finder = finder
        self.packages = frozenset(packages)
        self.freeact_generated_root = finder.root

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is not None or fullname not in self.packages:
            return None
        return self.finder.spec_in(fullname, [self.finder.root])


def install(root: str, manifest: str, packages: Sequence[str]) -> GeneratedFinder:
    """Install the finder of ``root`` (checked against the manifest file ``manifest``) in this interpreter.

    Returns the finder (an earlier one of the same root is replaced). Modules of packages under ``root``
    are found by it first; a top-level name comes from ``root`` only when it is one of ``packages`` (the
    app's generated layout, ``project.generated_layout.APP_PACKAGES``), and only after the installed ones.
    """
    for entry in list(sys.meta_path):  # one finder per root: a second start-up replaces the first
        if getattr(entry, "freeact_generated_root", None) == os.path.abspath(root):
            sys.meta_path.remove(entry)
    finder = GeneratedFinder(root, manifest)
    sys.meta_path.insert(0, finder)
    sys.meta_path.append(TopLevel(finder, packages))
    sys.path[:] = [p for p in sys.path if not p or not finder.under(p)]
    return finder
