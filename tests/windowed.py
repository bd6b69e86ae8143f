"""A scripted model with a small context window, for long-session tests and benches.

It behaves like a provider in the one way that matters here: a request larger than ``window``
tokens (about 4 characters a token, counted over everything sent) fails with HTTP 400
``context_length_exceeded``. Summarising requests (those with freeact-tui's summary instruction)
get a summary that keeps every ``FACT:`` sentence of what was sent; a question ``What is the
code of NAME?`` is answered from the facts the model can see; anything else gets ``ok``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

FACT = re.compile(r"FACT: the code of (\w+) is (\w+)\.")
QUESTION = re.compile(r"What is the code of (\w+)\?")


def sent_text(messages: list[ModelMessage]) -> str:
    chunks: list[str] = []
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(content, str):
                chunks.append(content)
            elif isinstance(content, list):
                chunks.extend(c for c in content if isinstance(c, str))
            args = getattr(part, "args", None)
            if args is not None:
                chunks.append(str(args))
    return "\n".join(chunks)


@dataclass
class WindowedModel:
    window: int
    fail_on: str | None = None
    """A prompt containing this text makes the (non-summary) request fail with HTTP 400."""
    hold: asyncio.Event | None = None
    """Summaries wait for this event (to see a compaction in progress)."""
    requests: list[list[ModelMessage]] = field(default_factory=list)
    summaries: int = 0
    largest: int = 0

    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self._stream, model_name="windowed")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        self.requests.append(list(messages))
        text = sent_text(messages)
        tokens = len(text) // 4
        self.largest = max(self.largest, tokens)
        if tokens > self.window:
            raise ModelHTTPError(
                400, "windowed", {"error": {"code": "context_length_exceeded", "tokens": tokens}}
            )
        if "You compact the history" in text:
            self.summaries += 1
            if self.hold is not None:
                await self.hold.wait()
            facts = dict.fromkeys(m.group(0) for m in FACT.finditer(text))
            focus = re.search(r"Focus the summary on: (.*)", text)
            yield "We talked about facts. " + " ".join(facts)
            if focus:
                yield f" (focus: {focus.group(1)})"
            return
        last = messages[-1]
        prompt = sent_text([last]) if isinstance(last, ModelRequest) else ""
        if self.fail_on is not None and self.fail_on in prompt:
            raise ModelHTTPError(400, "windowed", {"error": "refused"})
        question = QUESTION.search(prompt)
        if question:
            codes = {m.group(1): m.group(2) for m in FACT.finditer(text)}
            yield f"The code of {question.group(1)} is {codes.get(question.group(1), 'unknown')}."
            return
        yield "ok"


def answers(messages: list[ModelMessage]) -> list[str]:
    return [m.text or "" for m in messages if isinstance(m, ModelResponse)]
