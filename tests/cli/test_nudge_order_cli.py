"""#45 leftover (model9): the end of a turn does not depend on the order its nudges came in.

Seen from outside: the model answers a made-up number ("Ein Tag hat 10,982,432 Sekunden."), runs a wrong
computation, and repeats the answer. Asked first "you did not run any code" and then the number check,
or only the number check, the repeated answer ended differently: the number check QUOTES the reply's
numbers, and the repeat counted as the app's own words ("stalled"). The real CLI against the fake
OpenAI server with a real kernel: both orders end alike, on the model's answer (each nudge asked once).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, ReplySpec, ToolCallReply
from tests.helpers import cli, fake_args
from tests.scripted import CODE_TOOL

ANSWER = "Ein Tag hat 10,982,432 Sekunden."
CODE = "print(24 * 60 * 60 * 138.57)"  # a wrong computation: 11972448.0


def act(protocol: str) -> Reply:
    if protocol == "text":
        return Reply(f"```python\n{CODE}\n```")
    return Reply("", tool_calls=[ToolCallReply(CODE_TOOL, {"code": CODE})])


ORDERS = {
    "no code nudge, then the number check": ["answer", "act", "answer", "answer", "answer"],
    "the number check only": ["act", "answer", "answer", "answer", "answer"],
}


@pytest.mark.kernel
@pytest.mark.parametrize("protocol", ["auto", "text"])
def test_both_orders_of_the_nudges_end_alike(protocol: str, tmp_path: Path) -> None:
    ends = {}
    for name, script in ORDERS.items():

        def reply(request: RecordedRequest, script: list[str] = script) -> ReplySpec:
            step = script[min(request.index, len(script) - 1)]
            return act(protocol) if step == "act" else Reply(ANSWER)

        work = tmp_path / name.replace(" ", "_").replace(",", "")
        work.mkdir()
        with FakeOpenAI() as server:
            server.default = reply
            done = cli(
                "run", *fake_args(server), "--action-protocol", protocol, "--allow", "code:*", "-o", "json",
                "Wie viele Sekunden hat ein Tag?", cwd=work,
            )  # fmt: skip
        result = json.loads(done.stdout)
        ends[name] = (result["status"], done.returncode, result["answer"])
    assert set(ends.values()) == {("answered", 0, ANSWER)}, ends
