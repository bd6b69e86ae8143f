"""The private pydantic-ai names ``agent/pydantic_private.py`` uses: where it expects them, with the
parameters it passes. A pydantic-ai upgrade that moves or changes one fails here by name (#27)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import freeact_tui

PRIVATE = {
    ("pydantic_ai._special_tokens", "break_special_tokens_in_messages"): [
        "messages",
        "profile",
        "accepts_stateless_artifacts",
    ],
    ("pydantic_ai.direct", "_prepare_model"): ["model", "instrument"],
    ("pydantic_ai.models._batch_model", "check_resumable"): ["model", "messages"],
    ("pydantic_ai.models._request_timeout", "open_request_stream"): [
        "model",
        "messages",
        "model_settings",
        "model_request_parameters",
    ],
}


@pytest.mark.parametrize(("where", "parameters"), PRIVATE.items(), ids=[f"{m}.{n}" for m, n in PRIVATE])
def test_each_private_name_is_where_we_expect_it(where: tuple[str, str], parameters: list[str]) -> None:
    module, name = where
    found = getattr(importlib.import_module(module), name, None)
    assert found is not None, (
        f"pydantic-ai moved {module}.{name}: update freeact_tui/agent/pydantic_private.py"
    )
    assert list(inspect.signature(found).parameters) == parameters, f"{module}.{name} changed its parameters"


def test_the_fast_route_is_taken() -> None:
    from freeact_tui.agent import model_stream, pydantic_private

    assert model_stream.FAST_PATH
    assert pydantic_private.prepare_model is importlib.import_module("pydantic_ai.direct")._prepare_model


def test_no_other_module_imports_a_private_pydantic_ai_name() -> None:
    root = Path(freeact_tui.__file__).parent
    offenders: list[str] = []
    for path in root.rglob("*.py"):
        if path.name == "pydantic_private.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pydantic_ai"):
                private = any(p.startswith("_") for p in node.module.split(".")) or any(
                    a.name.startswith("_") for a in node.names
                )
                if private:
                    offenders.append(f"{path.relative_to(root)}: from {node.module} import …")
    assert offenders == []
