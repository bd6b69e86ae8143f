"""#40 (hostile tester): ``prompt_tokens: 1e30`` from the server showed as-is in the headless JSON. The
real CLI against the fake OpenAI-compatible server: impossible counts are no counts (estimated)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freeact_tui.agent.usage import MAX_TOKENS
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import cli, fake_args


@pytest.mark.parametrize(
    "usage", [(10**30, 5), (1.5e300, 3.7), (-5, -99_999_999)], ids=["huge", "floats", "negative"]
)
def test_impossible_usage_is_estimated_in_the_headless_json(
    fake_openai: FakeOpenAI, tmp_path: Path, usage: tuple[float, float]
) -> None:
    fake_openai.script(Reply("Answer here.", usage=usage))  # type: ignore[arg-type]
    done = cli("run", *fake_args(fake_openai), "-o", "json", "hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    counts = {k: v for k, v in result["usage"].items() if k.endswith("tokens")}
    assert counts and all(type(v) is int and 0 <= v <= MAX_TOKENS for v in counts.values()), result["usage"]
    assert result["usage"].get("estimated") is True, result["usage"]
