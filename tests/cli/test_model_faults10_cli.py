"""model10 (#40, #45): the model-fault attacker's reported cases through the real CLI.

``freeact-tui run`` (headless, a real kernel) against the fake OpenAI-compatible server through
``--base-url``, in the default protocol (``auto``), ``tools`` and ``text``:

- F3: a correct yes/no answer that repeats the question's words ("Is 17 a prime number?" → code prints
  True → "Yes, 17 is a prime number.") is the answer (it was nudged, then stopped ``stalled`` with an
  empty answer);
- F1: code whose structure grows by one element each step (a list one ``0`` longer, ``abs(`` one level
  deeper) ends on the progress bound instead of the request budget.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, ToolCallReply
from tests.helpers import cli, fake_args
from tests.scripted import CODE_TOOL

pytestmark = pytest.mark.kernel

PROTOCOLS = [None, "tools", "text"]


def _act(code: str, protocol: str | None) -> Reply:
    if protocol == "text":
        return Reply(f"```python\n{code}\n```")
    return Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code})])


def _run(fake_openai: FakeOpenAI, tmp_path: Path, protocol: str | None, prompt: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    chosen = ["--action-protocol", protocol] if protocol else []
    done = cli("run", *fake_args(fake_openai), *chosen, "--allow", "code:*", "-o", "json", prompt, cwd=tmp_path)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p or "default")
def test_a_yes_that_repeats_the_question_is_the_answer(
    protocol: str | None, fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    def model(request: RecordedRequest) -> Reply:
        if request.index == 0:
            return _act("print(all(17 % d for d in range(2, 17)))", protocol)
        return Reply("Yes, 17 is a prime number.")

    fake_openai.default = model
    code, result = _run(fake_openai, tmp_path, protocol, "Is 17 a prime number?")
    assert (code, result["status"], result["answer"]) == (0, "answered", "Yes, 17 is a prime number."), result
    assert fake_openai.count == 2


GROWING: dict[str, Callable[[int], str]] = {
    "a list one element longer": lambda n: f"print(len({[0] * (n + 1)}))",
    "a call one level deeper": lambda n: "print(" + "abs(" * (n + 1) + f"-{n}" + ")" * (n + 1) + ")",
}


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p or "default")
@pytest.mark.parametrize("grows", list(GROWING))
def test_code_that_grows_by_one_element_each_step_ends_on_the_bound(
    grows: str, protocol: str | None, fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    fake_openai.default = lambda request: _act(GROWING[grows](request.index), protocol)
    code, result = _run(fake_openai, tmp_path, protocol, "go")
    assert (code, result["status"]) == (4, "stalled"), result["errors"]
    assert fake_openai.count <= 2 + 3, fake_openai.count
