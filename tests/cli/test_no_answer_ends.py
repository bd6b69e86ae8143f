"""A turn that did not end with an answer has none (``RunRecord.final_answer``), in every protocol.

The class: "a turn that ended without an answer reports model text as the answer" — the code block of a
``text`` reply, the words beside a tool call. A table over protocol × how the turn ended, each row the
real CLI (``run -o json``) against the fake OpenAI server with a real kernel: only a turn that ended on
its answer has one; every other end has ``answer == ""``, its own status and exit code, and an error
saying why.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from freeact_tui.cli.run import EXIT_CODES
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, ReplySpec, ToolCallReply
from tests.helpers import cli, fake_args
from tests.scripted import CODE_TOOL

NARRATION = "Let me work this out step by step."


def action(code: str, protocol: str) -> Reply:
    """A reply that acts (``code``) with words beside it, as the protocol writes it."""
    if protocol == "text":
        return Reply(f"{NARRATION}\n\n```python\n{code}\n```")
    return Reply(NARRATION, tool_calls=[ToolCallReply(CODE_TOOL, {"code": code})])


@dataclass(frozen=True)
class End:
    """How the turn ends: the model's replies (from the request), extra options, the status it ends in."""

    name: str
    status: str
    options: tuple[str, ...] = ("--allow", "code:*")

    def reply(self, request: RecordedRequest, protocol: str) -> ReplySpec:
        if self.name == "answered":
            return Reply("The result is 42.") if request.index else action("print(6 * 7)", protocol)
        if self.name == "stalled":  # the same failing code, again and again
            return action("1 / 0", protocol)
        return action(f"print({request.index})", protocol)  # progress every step: max_turns / refused


ENDS = (
    End("answered", "answered"),
    End("stalled", "stalled"),
    End("max_turns", "max_turns", ("--allow", "code:*", "--max-turns", "2")),
    End("refused", "refused", ()),
)
PROTOCOLS = ("text", "tools", "auto")


@pytest.mark.kernel
@pytest.mark.parametrize(("protocol", "end"), list(itertools.product(PROTOCOLS, ENDS)), ids=lambda v: getattr(v, "name", v))
def test_only_a_turn_that_ended_on_its_answer_has_one(protocol: str, end: End, tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.default = lambda request: end.reply(request, protocol)
        done = cli(
            "run", *fake_args(server), "--action-protocol", protocol, *end.options, "-o", "json", "go", cwd=tmp_path
        )
    result = json.loads(done.stdout)
    assert (result["status"], done.returncode) == (end.status, EXIT_CODES[end.status]), done.stderr
    if end.status == "answered":
        assert result["answer"] == "The result is 42."
        return
    assert result["answer"] == ""  # was: the code block, or the words beside the call
    assert result["errors"] or result["refusals"]  # and it says why
