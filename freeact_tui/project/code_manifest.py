"""The manifest of generated code: what the kernel may import from a generated root, kept by the app.

The kernel imports a generated root's modules (``mcptools``, ``gentools``) only through its finder
(``execution.kernel.code_finder``), which checks every file against this manifest: the marks (by real path)
of the bytes the trust check read, and of the app's own writes since (a regenerated API), as ``trusted``
registers them. The manifest lives in the app's data dir, never in the project, and is written again
whenever those marks change (``trusted.watch``), so the app's own regenerate step is accepted and anything
else that changed a file since is refused at import.

A root no trust check covers (the app's own data dir, the SDK used without a check) is written as
``checked: false``: its files load as they are (still compiled from their source, never from a ``.pyc``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path

from freeact_tui.project import paths, trusted

MANIFEST_VERSION = 1
MANIFESTS_DIR = "code-manifests"


class CodeManifest:
    """The manifest file of one generated root, written at ``open()``, kept current, removed at ``close()``.

    Args:
        root: The generated root the kernel imports from.
        directory: Where the manifest goes (default: ``code-manifests`` in the user data dir).
    """

    def __init__(self, root: Path, directory: Path | None = None) -> None:
        self.root = Path(os.path.abspath(root))
        where = directory or paths.data_dir() / MANIFESTS_DIR
        self.path = where / f"{os.getpid()}-{secrets.token_hex(6)}.json"
        self._open = False

    def contents(self) -> dict[str, object]:
        """What the manifest says now (see the module docstring)."""
        marks = trusted.trusted_marks(self.root)
        return {
            "version": MANIFEST_VERSION,
            "root": str(self.root),
            "checked": marks is not None,
            "files": dict(sorted((marks or {}).items())),
        }

    def write(self, changed: Path | None = None) -> None:
        """Write the manifest as it is now (a failure leaves the last one: the kernel refuses what it lacks);
        ``changed``: only one file changed (the app's own write), which need not be under the root."""
        if changed is not None and not self._concerns(changed):
            return  # a session appended to, a rule added: nothing the kernel imports
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            paths.atomic_write_text(self.path, json.dumps(self.contents(), indent=0), mode=0o600)

    def _concerns(self, path: Path) -> bool:
        """Whether ``path`` may be a file of the root (by its path, or by its real path: a link in the root
        leads elsewhere)."""
        real_root = Path(os.path.realpath(self.root))
        lexical, real = Path(os.path.abspath(path)), Path(os.path.realpath(path))
        return any(
            p.is_relative_to(r) for p in (lexical, real) for r in (self.root, real_root)
        ) or not real.is_relative_to(real_root.parent.parent)

    def open(self) -> Path:
        """Write it and keep it current; its path (for the kernel's start-up code)."""
        if not self._open:
            self._open = True
            trusted.watch(self.write)
        self.write()
        return self.path

    def close(self) -> None:
        """Stop keeping it and remove it."""
        if self._open:
            self._open = False
            trusted.unwatch(self.write)
        with contextlib.suppress(OSError):
            self.path.unlink()


__all__ = ["MANIFESTS_DIR", "MANIFEST_VERSION", "CodeManifest"]
