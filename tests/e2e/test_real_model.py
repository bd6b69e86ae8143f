"""End to end against a real OpenAI-compatible server (a local model): opt-in, never in CI.

Set ``FREEACT_TUI_E2E_URL`` (e.g. ``http://127.0.0.1:8011/v1`` from ``../shared/local-llm/``) and,
if the server's model is not called ``local``, ``FREEACT_TUI_E2E_MODEL``. The tasks are those of
``bench/real_model.py``: each checks the working directory and the kernel's output, not the
model's claims. A small model on 2 cores takes minutes per task.
"""

from __future__ import annotations

import os

import pytest

from bench.real_model import run_task

URL = os.environ.get("FREEACT_TUI_E2E_URL", "")
MODEL = os.environ.get("FREEACT_TUI_E2E_MODEL", "local")

pytestmark = [
    pytest.mark.kernel,
    # One loop for the module: the OpenAI provider's HTTP client outlives a test, and closing it
    # from a later test's loop printed "RuntimeError: Event loop is closed" at teardown.
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(
        not URL, reason="FREEACT_TUI_E2E_URL is not set (end-to-end tests need a real model server)"
    ),
]


@pytest.mark.parametrize(
    ("task", "protocol"),
    [
        ("compute", "auto"),
        ("create_file", "auto"),
        ("shell_count", "text"),
        ("reject", "auto"),
        ("state", "text"),
        ("state", "auto"),  # a claim without code gets a nudge, then the code runs
        ("json_file", "auto"),  # tool calls written as JSON text become calls
        ("primes", "auto"),  # after a failed call, the block the model proposes runs
    ],
)
async def test_task_is_solved_with_a_real_model(task: str, protocol: str) -> None:
    result = await run_task(task, protocol, base_url=URL, model=MODEL, limit=600)
    assert result["solved"], result
