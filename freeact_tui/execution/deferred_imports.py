"""Imports of the kernel's tool server that nothing needs at start-up, deferred to their first use.

This module imports only the standard library: the command line calls it before anything else loads.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

# jsonschema (imported by mcp, and so by the tool server) takes ``is_valid_syntax`` from this package at
# import, for its "iri" format check; importing it builds a Lark grammar: 0.5 s on a quiet machine, 2.5 s
# on a loaded one, more than the rest of the tool server. Only a format checker asked for "iri" calls it.
RFC3987_SYNTAX = "rfc3987_syntax"


def defer_rfc3987_syntax() -> None:
    """Stand in a module for ``rfc3987_syntax`` that imports the real one when first used (idempotent).

    Does nothing when it is imported already or not installed (jsonschema then skips the check).
    """
    if RFC3987_SYNTAX in sys.modules or importlib.util.find_spec(RFC3987_SYNTAX) is None:
        return
    stub = types.ModuleType(RFC3987_SYNTAX, "Stands in for rfc3987_syntax until it is used.")
    lock = threading.Lock()

    def real() -> types.ModuleType:
        with lock:
            if sys.modules.get(RFC3987_SYNTAX) is stub:
                del sys.modules[RFC3987_SYNTAX]
            return importlib.import_module(RFC3987_SYNTAX)

    def is_valid_syntax(*args: Any, **kwargs: Any) -> Any:
        return real().is_valid_syntax(*args, **kwargs)

    def __getattr__(name: str) -> Any:  # noqa: N807 - a module's attribute hook
        if name.startswith("__"):
            raise AttributeError(name)  # introspection (copy, pickle, inspect) must not load it
        return getattr(real(), name)

    stub.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    stub.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[RFC3987_SYNTAX] = stub


def defer_mcpygen_init() -> None:
    """Let mcpygen's submodules (the tool server, the approval client) import without the package's
    ``__init__``, which imports its API generator (datamodel-code-generator: ~0.5 s, more under load);
    it runs on the first name asked of the package itself (``from mcpygen import …``). Idempotent.

    The kernel's warm-up does the same in the kernel (``kernel_init.WARM_UP_CODE``).
    """
    if MCPYGEN in sys.modules:
        return
    spec = importlib.util.find_spec(MCPYGEN)
    if spec is None or spec.loader is None:
        return
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)
    lock = threading.Lock()

    def __getattr__(name: str) -> Any:  # noqa: N807 - a module's attribute hook
        if name.startswith("__"):
            raise AttributeError(name)
        with lock:
            if "__getattr__" in package.__dict__:
                del package.__dict__["__getattr__"]
                loader.exec_module(package)
        return getattr(package, name)

    package.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[MCPYGEN] = package


MCPYGEN = "mcpygen"


__all__ = ["MCPYGEN", "RFC3987_SYNTAX", "defer_mcpygen_init", "defer_rfc3987_syntax"]
