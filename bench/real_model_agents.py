"""The agents ``real_model.py`` runs its tasks with: this app, and peers (smolagents, freeact) beside it.

One interface per agent (``Runner``): it opens sessions in a task's working directory; a session
streams this app's events for a prompt (``Session``), so every task's outcome check reads the same
things — the folder, the final answer, what the code printed, the code that ran — whoever ran it.
A peer runs in a subprocess (``peer_smolagents.py``, ``peer_freeact.py``) that answers one JSON line
per turn; its code actions arrive as already approved ``ApprovalRequest`` events (every action of a
peer is approved), its outputs as ``CodeExecutionOutput`` and its final answer as ``Response``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from freeact_tui.agent.agent import Agent
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutput,
    Decision,
    ModelRetry,
    Nudge,
    ProtocolSwitch,
    Response,
    SubagentStatus,
    ToolOutput,
)
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import CodeAction

BENCH = Path(__file__).resolve().parent


@dataclass
class Turn:
    """What one turn saw."""

    events: list[AgentEvent] = field(default_factory=list)

    @property
    def answer(self) -> str:
        responses = [e.content for e in self.events if isinstance(e, Response) and e.agent_id == "main"]
        return responses[-1] if responses else ""

    @property
    def outputs(self) -> str:
        return "\n".join(e.text or "" for e in self.events if isinstance(e, CodeExecutionOutput))

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


class Session(Protocol):
    """One conversation of an agent: this app's ``Agent`` is one as it is."""

    @property
    def session_id(self) -> str: ...

    def stream(self, prompt: str, max_turns: int | None = None) -> AsyncIterator[AgentEvent]: ...

    def cancel(self) -> None: ...


Opener = Callable[..., contextlib.AbstractAsyncContextManager[Any]]
"""Opens a session of an agent in a task's folder: ``async with c.make() as agent``."""


@dataclass(frozen=True)
class Folders:
    """A task's places: its working directory, the session store, and the site packages go to."""

    work: Path
    sessions: Path
    site: Path

    @property
    def kernel_env(self) -> dict[str, str]:
        # A package the model installs (``!pip install sympy``) goes to the task's directory, not a venv.
        return {
            "PIP_TARGET": str(self.site),
            "PYTHONPATH": str(self.site),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }


class Runner(Protocol):
    """An agent the bench runs a task with."""

    @property
    def label(self) -> str: ...

    def unsupported(self, task: str) -> str:
        """Why this agent cannot run ``task`` ("" when it can)."""
        ...

    def opener(self, folders: Folders, base_url: str, model: str, idle_timeout: float) -> Opener: ...


@dataclass
class Context:
    """What a task runs with: a fresh working directory and a way to run turns."""

    work: Path
    sessions: Path
    make: Opener
    switched: bool = False
    last: Turn | None = None
    trace: list[str] = field(default_factory=list)
    """What happened, one line per event of interest (``--trace`` prints it)."""

    async def turn(
        self,
        agent: Session,
        prompt: str,
        *,
        decide: Callable[[ApprovalRequest], bool] = lambda _: True,
        cancel_on: Callable[[AgentEvent], bool] | None = None,
    ) -> Turn:
        turn = Turn()
        self.last = turn
        self.trace.append(f"user: {prompt}")
        async for event in agent.stream(prompt, max_turns=8):
            turn.events.append(event)
            line = _trace_line(event)
            if line:
                self.trace.append(line)
            if isinstance(event, ProtocolSwitch):
                self.switched = True
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(decide(event))
            if cancel_on is not None and cancel_on(event):
                agent.cancel()
        return turn


def _trace_line(event: AgentEvent) -> str:
    """One line (or a few) for the events that show what the model did; "" for the rest."""
    who = "" if event.agent_id == "main" else f"[{event.agent_id}] "
    match event:
        case Response(content=content):
            return f"{who}model: {content!r}"
        case ApprovalRequest(tool_call=call):
            return f"{who}action: {call!r}"[:600]
        case CodeExecutionOutput(text=text, is_error=error):
            return f"{who}output{' (error)' if error else ''}: {(text or '')[:300]!r}"
        case ToolOutput(content=content, is_error=error):
            return f"{who}tool output{' (error)' if error else ''}: {content[:300]!r}"
        case ProtocolSwitch(reason=reason) | Nudge(reason=reason):
            return f"{who}{type(event).__name__}: {reason}"
        case AgentError(message=message) | Cancelled(phase=message) | ModelRetry(reason=message):
            return f"{who}{type(event).__name__}: {message}"
        case SubagentStatus(state=state, task=task):
            return f"{who}subagent {state}: {task[:80]!r}"
    return ""


@dataclass(frozen=True)
class AppRunner:
    """This app's agent with one action protocol (``default``: what a ``--base-url`` user gets)."""

    protocol: str

    @property
    def label(self) -> str:
        return self.protocol

    def unsupported(self, task: str) -> str:
        return ""

    def opener(self, folders: Folders, base_url: str, model: str, idle_timeout: float) -> Opener:
        def make(**kw: Any) -> Agent:
            kw.setdefault("enable_subagents", False)
            return Agent(
                model,
                base_url=base_url,
                working_dir=folders.work,
                sessions_dir=folders.sessions,
                action_protocol=self.protocol,
                permissions=PermissionRules(None, defaults=False),
                model_settings={"temperature": 0.0, "max_tokens": 700},
                # a loaded machine may take minutes before the first token: waiting beats a retry
                # that queues behind the abandoned request on a one-request server
                model_idle_timeout=idle_timeout,
                execution_timeout=90,
                subagent_pool_size=0,
                kernel_env=folders.kernel_env,
                **kw,
            )

        return make


PEER_UNSUPPORTED: dict[str, str] = {
    "reject": "rejects an approval",
    "cancel": "cancels a turn",
    "cancel_early": "cancels a turn",
    "subagent": "delegates to a subagent",
    "resume": "resumes a saved session in a new process",
}
"""The tasks a peer is not run on: what they need of an agent that the peer drivers do not offer."""


@dataclass(frozen=True)
class PeerRunner:
    """A peer agent driven in a subprocess by one of the bench's driver scripts."""

    name: str
    python: str
    script: str
    missing: str
    """Why the peer cannot run here ("" when it can): a bench without it still runs the rest."""

    @property
    def label(self) -> str:
        return self.name

    def unsupported(self, task: str) -> str:
        return self.missing or PEER_UNSUPPORTED.get(task, "")

    def opener(self, folders: Folders, base_url: str, model: str, idle_timeout: float) -> Opener:
        command = [self.python, str(BENCH / self.script), "--base-url", base_url, "--model", model]

        def make(**kw: Any) -> PeerSession:
            return PeerSession(command, folders)

        return make


class PeerSession:
    """One peer process: a prompt in, one JSON line out (answer, outputs, actions) per turn."""

    def __init__(self, command: list[str], folders: Folders) -> None:
        self._command = command
        self._folders = folders
        self._process: asyncio.subprocess.Process | None = None
        self.session_id = ""

    async def __aenter__(self) -> PeerSession:
        env = {**os.environ, **self._folders.kernel_env, "OPENAI_API_KEY": "local"}
        log = (self._folders.work.parent / "peer.log").open("ab")
        self._process = await asyncio.create_subprocess_exec(
            *self._command, cwd=self._folders.work, env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=log, start_new_session=True, limit=2**24,
        )  # fmt: skip
        log.close()
        return self

    async def __aexit__(self, *exc: object) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 20)
        except (TimeoutError, asyncio.CancelledError):
            pass
        finally:
            if process.returncode is None:  # the peer's kernels are in its process group
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()

    def cancel(self) -> None:  # no peer task cancels (PEER_UNSUPPORTED)
        raise NotImplementedError("the peer drivers do not cancel a turn")

    async def stream(self, prompt: str, max_turns: int | None = None) -> AsyncIterator[AgentEvent]:
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps({"prompt": prompt}) + "\n").encode())
        await process.stdin.drain()
        line = await process.stdout.readline()
        if not line:
            log = (self._folders.work.parent / "peer.log").read_text(errors="replace").strip()
            tail = log.splitlines()[-1] if log else ""
            yield AgentError(f"the peer process ended (exit {await process.wait()}): {tail[-300:]}")
            return
        result = json.loads(line)
        for code in result.get("actions", []):
            request = ApprovalRequest(CodeAction(code=code))
            request._future.set_result(Decision(approved=True))  # the peer approves every action
            yield request
        if result.get("outputs"):
            yield CodeExecutionOutput(result["outputs"])
        if result.get("error"):
            yield AgentError(result["error"])
        yield Response(result.get("answer", ""))


def _smolagents() -> PeerRunner:
    missing = "" if importlib.util.find_spec("smolagents") else (
        f"smolagents is not installed: {sys.executable} -m pip install smolagents openai"
    )  # fmt: skip
    return PeerRunner("smolagents", sys.executable, "peer_smolagents.py", missing)


def _freeact(python: str) -> PeerRunner:
    missing = "" if Path(python).is_file() else (
        f"no freeact Python at {python}: ~/.pyenv/versions/3.13.0/bin/python -m venv /tmp/freeact013 && "
        "/tmp/freeact013/bin/pip install freeact==0.11.2 (or --freeact-python)"
    )  # fmt: skip
    return PeerRunner("freeact", python, "peer_freeact.py", missing)


def runners(protocols: list[str], peers: list[str], freeact_python: str) -> list[Runner]:
    """This app with each protocol, then each peer named; an unknown peer name is a one-line error."""
    known: dict[str, Callable[[], PeerRunner]] = {
        "smolagents": _smolagents,
        "freeact": lambda: _freeact(freeact_python),
    }
    unknown = [p for p in peers if p not in known]
    if unknown:
        raise SystemExit(f"unknown peers: {', '.join(unknown)} (known: {', '.join(known)})")
    return [*(AppRunner(p) for p in protocols if p != "none"), *(known[p]() for p in peers)]
