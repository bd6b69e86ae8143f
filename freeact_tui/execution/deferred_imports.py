"""Imports that nothing needs at start-up, deferred to their first use.

Two packages are put in ``sys.modules`` as their own module object (``importlib.util.module_from_spec``:
its ``__spec__``, ``__file__`` and ``__path__`` are the real ones, so ``find_spec``, ``inspect`` and
submodule imports work) with only a module ``__getattr__`` and ``__dir__``: the first name asked of it
that it lacks (or ``dir()``) runs the real code. A failed load re-raises, and the next use tries again.

- ``rfc3987_syntax``: jsonschema (imported by mcp, nbformat and so the kernel gateway) takes
  ``is_valid_syntax`` from it at import for its "iri" format check; importing it builds a Lark grammar
  (0.5 s quiet, 1.6 s and more under load), more than the rest of the tool server or of the gateway.
  The stand-in's ``is_valid_syntax`` loads the real module on its first call.
- ``mcpygen``: its ``__init__`` imports the API generator (datamodel-code-generator, ~0.3 s CPU);
  the tool server and the approval client import its submodules, which need no ``__init__``.

The app and the kernel gateway (``GATEWAY_SOURCE``) defer them; a kernel's warm-up defers ``mcpygen``'s
``__init__`` the same way (``DEFER_SOURCE``), so code the user runs there sees the whole package.
This module imports only the standard library: the command line calls it before anything else loads.
"""

from __future__ import annotations

# One source for the app (``exec`` below) and the gateway process (``python -P -c``: it cannot import
# this package, which may be on no path of its own), so both behave alike.
_SOURCE = r"""
def _freeact_defer(name, attribute=None):
    import importlib.util, sys, threading
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None or spec.loader is None:
        return  # not installed: its importers skip it as before
    module = importlib.util.module_from_spec(spec)
    lock = threading.RLock()

    def load():
        with lock:
            if "__getattr__" in module.__dict__:
                del module.__dict__["__getattr__"], module.__dict__["__dir__"]
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    hooks()  # tried again (and failing again) on the next use
                    raise
        return module

    def __getattr__(attr):
        return getattr(load(), attr)

    def __dir__():
        return sorted(load().__dict__)

    def hooks():
        module.__getattr__, module.__dir__ = __getattr__, __dir__

    hooks()
    if attribute is not None:  # taken by name at import (``from x import f``): loads on its first call
        def forward(*args, **kwargs):
            return getattr(load(), attribute)(*args, **kwargs)
        forward.__name__ = forward.__qualname__ = attribute
        module.__dict__[attribute] = forward
    sys.modules[name] = module
"""

# Defines ``_freeact_defer(name, attribute=None)`` where it runs (a kernel's warm-up defers mcpygen with it).
DEFER_SOURCE = _SOURCE

# The gateway defers only what it imports and never uses (nbformat's jsonschema "iri" check).
GATEWAY_SOURCE = _SOURCE + '_freeact_defer("rfc3987_syntax", "is_valid_syntax")\ndel _freeact_defer\n'

_namespace: dict[str, object] = {}
exec(compile(_SOURCE, __file__, "exec"), _namespace)  # noqa: S102 - our own source, shared with the gateway

RFC3987_SYNTAX = "rfc3987_syntax"
MCPYGEN = "mcpygen"


def defer(name: str, attribute: str | None = None) -> None:
    """Put ``name`` in ``sys.modules`` unexecuted; its code runs on the first name asked of it.

    Idempotent; nothing when it is loaded already or not installed.

    Args:
        name: A top-level module or package.
        attribute: A function importers take by name at import: it loads the module on its first call.
    """
    _namespace["_freeact_defer"](name, attribute)  # type: ignore[operator]


def defer_rfc3987_syntax() -> None:
    """Defer ``rfc3987_syntax`` (its ``is_valid_syntax`` loads it when first called)."""
    defer(RFC3987_SYNTAX, "is_valid_syntax")


def defer_mcpygen_init() -> None:
    """Let mcpygen's submodules import without the package's ``__init__`` (idempotent).

    The ``__init__`` runs on the first name asked of the package itself (``from mcpygen import …``).
    """
    defer(MCPYGEN)


__all__ = [
    "DEFER_SOURCE",
    "GATEWAY_SOURCE",
    "defer",
    "MCPYGEN",
    "RFC3987_SYNTAX",
    "defer_mcpygen_init",
    "defer_rfc3987_syntax",
]
