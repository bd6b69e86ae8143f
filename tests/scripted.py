"""Scripted LLM streams for tests: the one stand-in allowed (pydantic-ai's FunctionModel)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

CODE_TOOL = "ipybox_execute_ipython_cell"


@dataclass
class Think:
    text: str


@dataclass
class Code:
    code: str
    call_id: str = "call-1"
    tool: str = CODE_TOOL


@dataclass
class Call:
    """Any tool call with JSON args (a string is sent verbatim: broken JSON)."""

    tool: str
    args: dict[str, object] | str
    call_id: str = "call-1"


@dataclass
class Wait:
    """Pause the stream until the event is set (for deterministic mid-stream states)."""

    event: asyncio.Event


@dataclass
class Fail:
    exc: BaseException


Item = str | Think | Code | Call | Wait | Fail
Step = Sequence[Item]


@dataclass
class Script:
    """A FunctionModel that plays one step per model request and records what it was sent."""

    steps: list[Step]
    requests: list[list[ModelMessage]] = field(default_factory=list)
    infos: list[AgentInfo] = field(default_factory=list)
    chunk: int = 0  # split text into chunks of this size (0: one delta per string)

    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self._stream, model_name="scripted")

    def tool_returns(self) -> list[ToolReturnPart]:
        out: list[ToolReturnPart] = []
        for messages in self.requests:
            for m in messages:
                if isinstance(m, ModelRequest):
                    out.extend(p for p in m.parts if isinstance(p, ToolReturnPart))
        return out

    def last_tool_return(self) -> str:
        last = self.requests[-1][-1]
        assert isinstance(last, ModelRequest)
        parts = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        return str(parts[-1].content)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        index = len(self.requests)
        self.requests.append(list(messages))
        self.infos.append(info)
        step = self.steps[index] if index < len(self.steps) else ["(script exhausted)"]
        part = 0
        for item in step:
            match item:
                case str():
                    if self.chunk:
                        for i in range(0, len(item), self.chunk):
                            yield item[i : i + self.chunk]
                    else:
                        yield item
                case Think(text=text):
                    yield {part: DeltaThinkingPart(content=text)}
                    part += 1
                case Code(code=code, call_id=call_id, tool=tool):
                    args = json.dumps({"code": code})
                    yield {
                        part: DeltaToolCall(name=tool, json_args=args[: len(args) // 2], tool_call_id=call_id)
                    }
                    yield {part: DeltaToolCall(json_args=args[len(args) // 2 :])}
                    part += 1
                case Call(tool=tool, args=args, call_id=call_id):
                    raw = args if isinstance(args, str) else json.dumps(args)
                    yield {part: DeltaToolCall(name=tool, json_args=raw, tool_call_id=call_id)}
                    part += 1
                case Wait(event=event):
                    await event.wait()
                case Fail(exc=exc):
                    raise exc


def script(*steps: Step, chunk: int = 0) -> Script:
    return Script(list(steps), chunk=chunk)


def approve_all(decide: Callable[[object], bool] | None = None) -> Callable[[object], None]:
    """An event handler that approves (or decides with ``decide``) every undecided ApprovalRequest."""
    from freeact_tui.events import ApprovalRequest

    def handle(event: object) -> None:
        if isinstance(event, ApprovalRequest) and not event.decided:
            event.approve(True if decide is None else decide(event))

    return handle
