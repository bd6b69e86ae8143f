"""The loop's own cost per model request as the history grows: 100, 1,000 and 10,000 messages.

A session with N messages of realistic turns (prompt, thinking + code action, output, answer) is
resumed, then the agent runs turns against a scripted model that answers at once; the time spent
inside the model's stream function is subtracted, and what remains is the loop's cost per request
(preparing the history, pydantic-ai's handling of it, events, appending to the session file).
Time is the event loop thread's CPU time (``time.thread_time``), so that waiting for the per-turn
fsync (in a worker thread) and other processes on a loaded machine do not blur the figures.
``ms_per_request`` also leaves out the model adapter's own handling of the messages (timed around
``Model.request_stream``): every adapter turns the whole history into its API's format per request
(the APIs are stateless), which is the provider's cost, not the loop's; ``with_adapter_ms`` keeps
it in (here pydantic-ai's FunctionModel, which checks every message once).
The median over the turns after the first is reported (the first resumes and prepares the whole
history once). For comparison, ``rebuild_ms`` is what rebuilding the prepared history from scratch
costs at that size (what every request paid before it was kept incrementally), and
``public_route_ms`` the cost per request when pydantic-ai's ``model_request_stream`` rescans the
history itself (agent/model_stream.py skips those scans for a plain prepared history).
``open_model_ms`` is ``ms_per_request`` for a model whose profile asks for chat-template tokens to
be broken (what pydantic-ai assumes for open models: local servers, Ollama, vLLM …);
``gc_ms_per_request`` is the cyclic garbage collector's share (mean over the turns, via
``gc.callbacks``). ``server_*`` is the whole cost of a request to the loop thread through the real
OpenAI chat adapter and HTTP client, against the fake OpenAI-compatible server of the tests on
loopback (its thread's CPU is not counted): the loop's work plus the adapter's mapping of every
message and the JSON encoding. Each figure is the median of RUNS runs (sizes interleaved); the
1-minute load average at the end is printed, as the machine may be shared.
Target: flat within 2x from 100 to 10,000 messages. Run: ``python bench/history_cost.py [--json]``.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)
from sessions import turn  # noqa: E402

from freeact_tui.agent import model_stream  # noqa: E402
from freeact_tui.agent.agent import Agent  # noqa: E402
from freeact_tui.agent.context import PreparedHistory  # noqa: E402
from freeact_tui.permissions.rules import PermissionRules  # noqa: E402
from freeact_tui.store import SessionStore  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402

SIZES = (100, 1_000, 10_000)
TURNS = 60
RUNS = 3
SERVER_TURNS = 15
OPEN_MODEL = "qwen3-coder"  # a name pydantic-ai treats as an open model: chat-template tokens are broken
CLOSED_MODEL = "gpt-4o"


class TimedAdapter(WrapperModel):
    """Adds up the CPU time the wrapped model spends opening its stream (its handling of the messages)."""

    spent = 0.0

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        t0 = time.thread_time()
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as s:
            self.spent += time.thread_time() - t0
            yield s


def write_session(root: Path, messages: int) -> str:
    session = SessionStore(root, fsync=False).new_session()
    history: list[ModelMessage] = []
    i = 0
    while len(history) < messages:
        history.extend(turn(i))
        i += 1
    session.append(history[:messages])
    return session.id


async def per_request_ms(root: Path, messages: int, *, open_model: bool = False) -> dict[str, float]:
    """The loop's CPU ms per request (median over the turns after the first) and what goes with it.

    ``open_model``: the model's profile says it may read chat-template tokens in content (as for
    open models on OpenAI-compatible servers), so every message's text goes through pydantic-ai's
    special-token break before it is sent.
    """
    session_id = write_session(root, messages)
    spent = 0.0

    async def stream(history: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        nonlocal spent
        t0 = time.thread_time()
        text = "done"
        spent += time.thread_time() - t0
        yield text

    profile = ModelProfile(may_tokenize_special_tokens_in_content=True) if open_model else None
    model = TimedAdapter(FunctionModel(stream_function=stream, model_name="bench", profile=profile))
    agent = Agent(
        model,
        sessions_dir=root,
        session_id=session_id,
        permissions=PermissionRules(None, skip_permissions=True),
        enable_subagents=False,
        eager_kernel=False,
        context_window=10_000_000,  # this bench measures the loop, not compaction
    )
    costs: list[float] = []
    with_adapter: list[float] = []
    collecting: list[float] = []
    gc_spent = 0.0
    gc_started = 0.0

    def gc_timer(phase: str, info: dict[str, Any]) -> None:
        nonlocal gc_spent, gc_started
        if phase == "start":
            gc_started = time.thread_time()
        else:
            gc_spent += time.thread_time() - gc_started

    async with agent:
        gc.callbacks.append(gc_timer)
        try:
            for n in range(TURNS):
                spent = model.spent = gc_spent = 0.0
                t0 = time.thread_time()
                async for _ in agent.stream(f"question {n}"):
                    pass
                with_adapter.append(time.thread_time() - t0 - spent)
                costs.append(with_adapter[-1] - (model.spent - spent))
                collecting.append(gc_spent)
        finally:
            gc.callbacks.remove(gc_timer)
        t0 = time.thread_time()
        PreparedHistory(trim_chars=2000).update(agent.history)
        rebuild = time.thread_time() - t0
    return {
        "ms": statistics.median(costs[1:]) * 1000,
        "with_adapter_ms": statistics.median(with_adapter[1:]) * 1000,
        "gc_ms": statistics.mean(collecting[1:]) * 1000,
        "rebuild_ms": rebuild * 1000,
    }


async def server_request_ms(root: Path, messages: int, model: str) -> float:
    """The loop thread's CPU ms per request through the real OpenAI chat adapter and HTTP client, against
    the fake OpenAI-compatible server of the tests (on loopback; its own thread's CPU is not counted).

    This is what a request costs the app's event loop with a model served at ``base_url`` (Ollama, vLLM,
    …): the loop's own work plus the adapter turning every message into the API's JSON (the API is
    stateless) and streaming the answer. Median over the turns after the first.
    """
    session_id = write_session(root, messages)
    costs: list[float] = []
    with FakeOpenAI(default=Reply("done", usage=(100 + 300 * messages, 5))) as server:
        agent = Agent(
            model,
            base_url=server.url,
            sessions_dir=root,
            session_id=session_id,
            permissions=PermissionRules(None, skip_permissions=True),
            enable_subagents=False,
            eager_kernel=False,
            context_window=10_000_000,
        )
        async with agent:
            for n in range(SERVER_TURNS):
                t0 = time.thread_time()
                async for _ in agent.stream(f"question {n}"):
                    pass
                costs.append(time.thread_time() - t0)
                server.requests.clear()  # the server's record of each request would fill this process's heap
    return statistics.median(costs[1:]) * 1000


async def main() -> dict[str, float]:
    runs: dict[str, list[float]] = {}

    def note(name: str, value: float) -> None:
        runs.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory() as tmp:
        await per_request_ms(Path(tmp) / "warmup", 100)
        for run in range(RUNS):  # sizes interleaved, so that a burst of load elsewhere hits all of them alike
            for size in SIZES:
                figures = await per_request_ms(Path(tmp) / f"s{size}-{run}", size)
                note(f"ms_per_request_at_{size}", figures["ms"])
                note(f"with_adapter_ms_at_{size}", figures["with_adapter_ms"])
                note(f"gc_ms_per_request_at_{size}", figures["gc_ms"])
                note(f"rebuild_ms_at_{size}", figures["rebuild_ms"])
            for size in SIZES:
                figures = await per_request_ms(Path(tmp) / f"o{size}-{run}", size, open_model=True)
                note(f"open_model_ms_at_{size}", figures["ms"])
            for size in SIZES:
                note(
                    f"server_open_model_ms_at_{size}",
                    await server_request_ms(Path(tmp) / f"so{size}-{run}", size, OPEN_MODEL),
                )
            note(
                f"server_closed_model_ms_at_{SIZES[-1]}",
                await server_request_ms(Path(tmp) / f"sc-{run}", SIZES[-1], CLOSED_MODEL),
            )
            fast = model_stream.FAST_PATH
            model_stream.FAST_PATH = False
            try:
                note(
                    f"server_open_model_public_route_ms_at_{SIZES[-1]}",
                    await server_request_ms(Path(tmp) / f"sp-{run}", SIZES[-1], OPEN_MODEL),
                )
                for size in SIZES:
                    figures = await per_request_ms(Path(tmp) / f"p{size}-{run}", size)
                    note(f"public_route_ms_at_{size}", figures["ms"])
                figures = await per_request_ms(Path(tmp) / f"po-{run}", SIZES[-1], open_model=True)
                note(f"public_route_open_model_ms_at_{SIZES[-1]}", figures["ms"])
            finally:
                model_stream.FAST_PATH = fast
    out = {name: round(statistics.median(values), 3) for name, values in runs.items()}
    out["growth_100_to_10000"] = round(out["ms_per_request_at_10000"] / out["ms_per_request_at_100"], 2)
    out["open_model_growth_100_to_10000"] = round(
        out["open_model_ms_at_10000"] / out["open_model_ms_at_100"], 2
    )
    out["runs"] = RUNS
    out["load_average_1min"] = round(os.getloadavg()[0], 2)
    return out


if __name__ == "__main__":
    run_bench(__doc__, main)
