"""Every registration of a library the reading understands whole is in its table of later work (#42, F2).

A function that registers a callable or an object for a library to call later (``np.seterrcall``,
``plt.connect``) starts work that outlives its cell: ``known.LATER_NAMES``. This checks the table against
the libraries themselves (imported here: matplotlib starts ``fc-list``, so not under ``tests/fast``).
"""

from __future__ import annotations

import re

import pytest

from freeact_tui.effects.known import IO_NAMED, IO_NAMED_BUT_COMPUTES, LATER_NAMES, MODULES, name_in

_REGISTRATION = re.compile(r"set\w*call|regist|hook|handler|connect|atexit|finaliz|listen|subscri|callback")
_REGISTERS_NO_CODE = {
    "csv.register_dialect": "a dialect is formatting options (data); no code of the cell runs later",
    "csv.unregister_dialect": "removes a dialect",
    "numpy.geterrcall": "returns the registered callback; calling it is a call of a value, which cannot be told",
    "matplotlib.pyplot.disconnect": "removes a callback",
    "matplotlib.pyplot.uninstall_repl_displayhook": "removes a hook",
}


@pytest.mark.parametrize("module", sorted(m for m, rule in MODULES.items() if rule.every_public))
def test_every_registration_of_an_understood_library_is_in_the_table(module: str) -> None:
    """A public name of a library the reading understands whole that registers something by its name is
    listed as starting later work (``LATER_NAMES``) or is not pure."""
    imported = pytest.importorskip(module)
    rule = MODULES[module]
    for name in dir(imported):
        if name.startswith("_") or f"{module}.{name}" in _REGISTERS_NO_CODE:
            continue
        if _REGISTRATION.search(name.lower()):
            assert name in LATER_NAMES or name_in(module, rule, name) != "pure", f"{module}.{name}"


def test_every_io_named_name_that_computes_is_a_real_name_of_its_library() -> None:
    """``known.IO_NAMED_BUT_COMPUTES`` lists real names (no stale row lets a reader of a later version pass)."""
    for dotted in IO_NAMED_BUT_COMPUTES:
        module, _, name = dotted.rpartition(".")
        assert hasattr(pytest.importorskip(module), name), dotted
        assert name_in(module, MODULES[module], name) == "pure", dotted


@pytest.mark.parametrize("module", sorted(m for m, rule in MODULES.items() if rule.every_public))
def test_every_io_named_name_of_an_understood_library_is_tabled_or_not_pure(module: str) -> None:
    imported = pytest.importorskip(module)
    rule = MODULES[module]
    for name in dir(imported):
        if IO_NAMED.match(name) and name_in(module, rule, name) == "pure":
            assert f"{module}.{name}" in IO_NAMED_BUT_COMPUTES, f"{module}.{name}"
