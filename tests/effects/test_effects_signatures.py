"""The binder's table (``effects.signatures``) is the real functions' parameter lists (#42, round 6).

Outside ``tests/fast``: importing ``matplotlib.pyplot`` probes fonts with a process."""

from __future__ import annotations

import importlib
import inspect
import pathlib

import pytest

from freeact_tui.effects.signatures import SIGNATURES


def _real(dotted: str) -> object | None:
    if dotted == "open":
        return open
    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None  # not installed here (pandas): the table is the kernel's word


@pytest.mark.parametrize("dotted", sorted(n for n in SIGNATURES if not n.startswith("pathlib.Path.")))
def test_every_signature_is_the_real_functions_parameter_list(dotted: str) -> None:
    function = _real(dotted)
    if function is None:
        pytest.skip(f"{dotted} does not import here")
    parameters = list(inspect.signature(function).parameters.values())  # type: ignore[arg-type]
    table = SIGNATURES[dotted]
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # a reader tabled as "the path first, the rest by keyword" (more by position: cannot tell); one tabled in
    # full (``read_pickle``) is checked in full below
    if dotted.startswith("pandas.read_") and table.keywords == "kwargs":
        assert list(table.positional) == positional[:1] and table.keywords == "kwargs", dotted
        return
    assert list(table.positional) == positional, dotted
    assert {p.name for p in parameters if p.kind == p.KEYWORD_ONLY} <= table.keyword_only, dotted
    assert table.rest == next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None), dotted
    assert table.keywords == next((p.name for p in parameters if p.kind == p.VAR_KEYWORD), None), dotted


@pytest.mark.parametrize("dotted", sorted(n for n in SIGNATURES if n.startswith("pathlib.Path.")))
def test_every_path_method_signature_holds_this_pythons_parameters(dotted: str) -> None:
    """The table is the newest Python's (``newline``, ``recurse_symlinks``): this one's is a prefix of it."""
    method = getattr(pathlib.Path, dotted.rpartition(".")[2])
    parameters = list(inspect.signature(method).parameters.values())[1:]  # the receiver aside
    table = SIGNATURES[dotted]
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert list(table.positional[: len(positional)]) == positional, dotted
    assert {p.name for p in parameters if p.kind == p.KEYWORD_ONLY} <= table.keyword_only, dotted
    assert not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters), dotted
