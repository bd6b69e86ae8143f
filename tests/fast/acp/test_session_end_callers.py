"""#44 leftover, the class "a wait on a session's work with no bound": every stop of an agent in ``acp/`` goes
through the one bounded end (``acp/session_end.py``), and no code there waits on an agent's turn itself.

Before: ``session/close`` and the server's end each had their own ``wait_for(agent.stop(), …)`` and the
close waited for the running prompt unbounded; a new wait added anywhere would reopen the class.
"""

from __future__ import annotations

import ast
from pathlib import Path

import freeact_tui.acp

ACP = Path(freeact_tui.acp.__file__).parent
ONE_PLACE = "session_end.py"
TURN_WAITS = {"stop", "cancel_and_wait"}
"""The agent's methods that wait for its turn."""


def _agent_waits(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if name == "agent" and node.func.attr in TURN_WAITS:
                found.append(f"{name}.{node.func.attr}() at line {node.lineno}")
    return found


def test_every_stop_of_an_agent_in_acp_is_the_bounded_one() -> None:
    offenders = {
        path.name: waits
        for path in sorted(ACP.glob("*.py"))
        if path.name != ONE_PLACE and (waits := _agent_waits(ast.parse(path.read_text())))
    }
    assert offenders == {}, offenders


def test_the_prompt_runs_its_turn_through_run_turn() -> None:
    """The prompt handler awaits ``run_turn`` (which the session's end can answer), never the runner itself."""
    source = (ACP / "server.py").read_text()
    tree = ast.parse(source)
    awaited = [
        ast.unparse(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Await) and "run_prompt" in ast.unparse(node.value)
    ]
    assert awaited and all(a.startswith("run_turn(") for a in awaited), awaited
