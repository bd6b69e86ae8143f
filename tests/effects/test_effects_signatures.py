"""The binder's table (``effects.signatures``) is the real functions' parameter lists (#42, round 6).

Outside ``tests/fast``: importing ``matplotlib.pyplot`` probes fonts with a process."""

from __future__ import annotations

import importlib
import inspect

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


@pytest.mark.parametrize("dotted", sorted(n for n in SIGNATURES if n != "pathlib.Path.open"))
def test_every_signature_is_the_real_functions_parameter_list(dotted: str) -> None:
    function = _real(dotted)
    if function is None:
        pytest.skip(f"{dotted} does not import here")
    parameters = list(inspect.signature(function).parameters.values())  # type: ignore[arg-type]
    table = SIGNATURES[dotted]
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert list(table.positional) == positional, dotted
    assert {p.name for p in parameters if p.kind == p.KEYWORD_ONLY} <= table.keyword_only, dotted
    assert table.rest == next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None), dotted
    assert table.keywords == next((p.name for p in parameters if p.kind == p.VAR_KEYWORD), None), dotted
