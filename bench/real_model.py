"""A real model in the loop: a task set run through the agent (real kernel) for each action protocol.

Each task gives a prompt (or several turns), approves actions like a user would (or rejects, or
cancels), and checks the outcome in the working directory, the answer or the events — never what
the model claims. Prints solved/total and the median seconds of a task per protocol.

    python bench/real_model.py --base-url http://127.0.0.1:8011/v1 --model local \
        [--set derived|heldout|all] [--protocols auto,tools,text] [--tasks compute,shell_count] \
        [--json] [--timeout 300] [--repeat 3]

Two task sets: ``derived`` (the default) is the set the small-model rules were derived from;
``heldout`` (``real_model_heldout.py``) was written before looking at any trace of it, phrased as
people ask, in English and German. Report both.

Meant for a local OpenAI-compatible server (``../shared/local-llm/``); never run in CI. On a
shared 2-core machine a task takes minutes: pick a few tasks per run with ``--tasks``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freeact_tui.agent.agent import Agent
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutput,
    ModelRetry,
    Nudge,
    ProtocolSwitch,
    Response,
    SubagentStatus,
    ToolOutput,
)
from freeact_tui.permissions import PermissionRules

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the held-out set lives next to this file


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


@dataclass
class Context:
    """What a task runs with: a fresh working directory and a way to run turns."""

    work: Path
    sessions: Path
    make: Callable[..., Agent]
    switched: bool = False
    last: Turn | None = None
    trace: list[str] = field(default_factory=list)
    """What happened, one line per event of interest (``--trace`` prints it)."""

    async def turn(
        self,
        agent: Agent,
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


def _has(text: str, *needles: str) -> bool:
    return all(n in text for n in needles)


async def t_compute(c: Context) -> bool:
    async with c.make() as agent:
        t = await c.turn(agent, "What is 1234 * 5678? Compute it by running Python code.")
    return "7006652" in t.outputs.replace(",", "") and "7006652" in t.answer.replace(",", "")


async def t_primes(c: Context) -> bool:
    async with c.make() as agent:
        t = await c.turn(agent, "How many prime numbers are there below 10000? Run code to count them.")
    return "1229" in t.outputs and "1229" in t.answer


async def t_create_file(c: Context) -> bool:
    async with c.make() as agent:
        await c.turn(agent, "Create a file named hello.txt containing exactly the text: hello world")
    path = c.work / "hello.txt"
    return path.is_file() and path.read_text().strip() == "hello world"


async def t_edit_file(c: Context) -> bool:
    (c.work / "config.ini").write_text("[main]\ncolor = red\nsize = 3\n")
    async with c.make() as agent:
        await c.turn(
            agent, "In the file config.ini, change the color from red to blue. Keep the other lines."
        )
    text = (c.work / "config.ini").read_text()
    return "color = blue" in text and "size = 3" in text and "red" not in text


async def t_json_file(c: Context) -> bool:
    async with c.make() as agent:
        t = await c.turn(
            agent,
            'Write a JSON file data.json with the object {"a": 1, "b": 2, "c": 4}, then read it back '
            "and tell me the sum of its values.",
        )
    path = c.work / "data.json"
    return path.is_file() and json.loads(path.read_text()) == {"a": 1, "b": 2, "c": 4} and "7" in t.answer


async def t_shell_count(c: Context) -> bool:
    (c.work / "rows.csv").write_text("".join(f"{i},{i * i}\n" for i in range(37)))
    async with c.make() as agent:
        t = await c.turn(
            agent, "Use the shell command wc -l to count the lines of rows.csv and tell me the number."
        )
    return "37" in t.outputs and "37" in t.answer


async def t_shell_find(c: Context) -> bool:
    for name in ("alpha.py", "beta.py", "notes.md"):
        (c.work / name).write_text("# x\n")
    async with c.make() as agent:
        t = await c.turn(
            agent, "Run a shell command to list the .py files in the current directory, then name them."
        )
    return (
        _has(t.outputs, "alpha.py", "beta.py") and _has(t.answer, "alpha", "beta") and "notes" not in t.answer
    )


async def t_state(c: Context) -> bool:
    async with c.make() as agent:
        await c.turn(agent, "Run Python code that sets the variable secret = 41 in the kernel.")
        t = await c.turn(agent, "Now run code that prints the value of secret + 1 (reuse the variable).")
    return "42" in t.outputs and "42" in t.answer


async def t_resume(c: Context) -> bool:
    async with c.make() as agent:
        await c.turn(agent, "Remember the code word: pelican-7431. Just acknowledge it, do not run code.")
        session_id = agent.session_id
    async with c.make(session_id=session_id) as agent:
        t = await c.turn(agent, "What was the code word I gave you? Answer with it only.")
    return "7431" in t.answer


async def t_reject(c: Context) -> bool:
    (c.work / "keep.txt").write_text("important\n")
    async with c.make() as agent:
        t = await c.turn(agent, "Delete the file keep.txt.", decide=lambda _: False)
        asked = len(t.of(ApprovalRequest))
        follow = await c.turn(agent, "Then just say OK.", decide=lambda _: False)
    intact = (c.work / "keep.txt").read_text() == "important\n"
    return intact and asked >= 1 and not t.of(AgentError) and bool(follow.answer.strip())


async def t_cancel(c: Context) -> bool:
    async with c.make() as agent:
        t = await c.turn(
            agent,
            "Run Python code that sleeps 60 seconds (time.sleep(60)) and then prints done.",
            cancel_on=lambda e: isinstance(e, ApprovalRequest),
        )
        follow = await c.turn(agent, "Never mind. Compute 3 * 14 with Python and tell me the result.")
    return bool(t.of(Cancelled)) and "42" in follow.outputs and "42" in follow.answer


async def t_subagent(c: Context) -> bool:
    async with c.make(enable_subagents=True) as agent:
        t = await c.turn(
            agent,
            "Use the subagent_task tool to delegate this task to a subagent: compute 12 * 12 + 1 with Python. "
            "Then report the subagent's result.",
        )
    done = [e for e in t.of(SubagentStatus) if e.state == "done"]
    return bool(done) and "145" in t.answer


async def t_recover(c: Context) -> bool:
    async with c.make() as agent:
        await c.turn(
            agent,
            "Read the file missing.txt. If it does not exist, create it containing the word: created",
        )
    path = c.work / "missing.txt"
    return path.is_file() and path.read_text().strip() == "created"


TASKS: dict[str, Callable[[Context], Awaitable[bool]]] = {
    "compute": t_compute,
    "primes": t_primes,
    "create_file": t_create_file,
    "edit_file": t_edit_file,
    "json_file": t_json_file,
    "shell_count": t_shell_count,
    "shell_find": t_shell_find,
    "state": t_state,
    "resume": t_resume,
    "reject": t_reject,
    "cancel": t_cancel,
    "subagent": t_subagent,
    "recover": t_recover,
}
"""The derived set: the tasks the small-model rules were derived from."""


def _sets() -> dict[str, dict[str, Callable[[Context], Awaitable[bool]]]]:
    from real_model_heldout import HELDOUT  # imported late: it refers back to this module's Context

    return {"derived": TASKS, "heldout": HELDOUT, "all": {**TASKS, **HELDOUT}}


async def run_task(
    name: str,
    protocol: str,
    *,
    base_url: str,
    model: str,
    limit: float,
    idle_timeout: float = 600,
    scratch: Path | None = None,
) -> dict[str, Any]:
    """One task in a fresh working directory and session store; a timeout or crash is unsolved."""
    # One fixed place, emptied for each task: the system prompt names the working directory, so the
    # same path lets a local server reuse its cached prompt prefix across tasks (as for a user's project).
    tmp = scratch or Path(tempfile.gettempdir()) / f"freeact-real-model-bench-{os.getuid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        work, sessions, site = tmp / "work", tmp / "sessions", tmp / "site"
        work.mkdir()
        site.mkdir()
        # A package the model installs (``!pip install sympy``) goes to the task's directory, not the venv.
        kernel_env = {"PIP_TARGET": str(site), "PYTHONPATH": str(site), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

        def make(**kw: Any) -> Agent:
            kw.setdefault("enable_subagents", False)
            return Agent(
                model,
                base_url=base_url,
                working_dir=work,
                sessions_dir=sessions,
                action_protocol=protocol,
                permissions=PermissionRules(None, defaults=False),
                model_settings={"temperature": 0.0, "max_tokens": 700},
                # a loaded machine may take minutes before the first token: waiting beats a retry
                # that queues behind the abandoned request on a one-request server
                model_idle_timeout=idle_timeout,
                execution_timeout=90,
                subagent_pool_size=0,
                kernel_env=kernel_env,
                **kw,
            )

        context = Context(work, sessions, make)
        started = time.monotonic()
        error = ""
        try:
            solved = await asyncio.wait_for(_sets()["all"][name](context), limit)
        except TimeoutError:
            solved, error = False, f"timeout {limit:g} s"
        except Exception as exc:  # a bench reports, it does not stop
            solved, error = False, f"{type(exc).__name__}: {exc}"
        seconds = time.monotonic() - started
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"task": name, "protocol": protocol, "solved": solved, "seconds": round(seconds, 1),
            "switched": context.switched, "error": error,
            "last_answer": context.last.answer[-300:] if context.last else "",
            "trace": context.trace}  # fmt: skip


def table(results: list[dict[str, Any]], protocols: list[str], task_set: str = "derived") -> str:
    """Solved/total per protocol over every attempt (with each round's count when there were several)."""
    rounds = sorted({r.get("round", 1) for r in results})
    head = "| protocol | solved | median s |" + (" per round |" if len(rounds) > 1 else "")
    lines = [f"task set: {task_set}", "", head, "|---|---|---|" + ("---|" if len(rounds) > 1 else "")]
    for protocol in protocols:
        rows = [r for r in results if r["protocol"] == protocol]
        solved = sum(r["solved"] for r in rows)
        median = statistics.median(r["seconds"] for r in rows) if rows else 0
        share = f" ({100 * solved / len(rows):.0f} %)" if rows else ""
        line = f"| {protocol} | {solved}/{len(rows)}{share} | {median:.0f} |"
        if len(rounds) > 1:
            each = [sum(r["solved"] for r in rows if r.get("round", 1) == n) for n in rounds]
            line += f" {', '.join(map(str, each))} |"
        lines.append(line)
    return "\n".join(lines)


def per_task(results: list[dict[str, Any]], protocols: list[str]) -> str:
    """Solved attempts per task and protocol, with the set each task belongs to."""
    names = list(dict.fromkeys(r["task"] for r in results))
    sets = {r["task"]: r.get("set", "derived") for r in results}
    lines = ["| task | set | " + " | ".join(protocols) + " |", "|---|---|" + "---|" * len(protocols)]
    for name in names:
        cells = []
        for protocol in protocols:
            rows = [r for r in results if r["task"] == name and r["protocol"] == protocol]
            cells.append(f"{sum(r['solved'] for r in rows)}/{len(rows)}")
        lines.append(f"| {name} | {sets[name]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> list[dict[str, Any]]:
    protocols = args.protocols.split(",")
    tasks = _sets()[args.set]
    names = args.tasks.split(",") if args.tasks else list(tasks)
    unknown = [n for n in names if n not in tasks]
    if unknown:
        raise SystemExit(f"unknown tasks in set {args.set}: {', '.join(unknown)} (known: {', '.join(tasks)})")
    results = []
    for round_ in range(1, args.repeat + 1):
        for protocol in protocols:
            for name in names:
                result = await run_task(
                    name, protocol, base_url=args.base_url, model=args.model, limit=args.timeout,
                    idle_timeout=args.idle_timeout, scratch=args.scratch,
                )  # fmt: skip
                result["round"] = round_
                result["set"] = "heldout" if name not in TASKS else "derived"
                results.append(result)
                if args.json:
                    continue
                mark = "solved" if result["solved"] else "FAILED"
                extra = " (switched to text)" if result["switched"] else ""
                where = f"[{round_}] " if args.repeat > 1 else ""
                print(
                    f"{where}{protocol:5} {name:14} {mark} {result['seconds']:6.1f} s{extra} {result['error']}",
                    flush=True,
                )
                if not result["solved"] and args.verbose:
                    print(f"      last answer: {result['last_answer']!r}", flush=True)
                if args.trace:
                    print("\n".join(f"      | {line}" for line in result["trace"]), flush=True)
    if args.json:
        print(json.dumps(results))
    else:
        print(table(results, protocols, args.set))
        print()
        print(per_task(results, protocols))
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url", required=True, help="an OpenAI-compatible server, e.g. http://127.0.0.1:8011/v1"
    )
    parser.add_argument("--model", default="local", help="the model name the server knows")
    parser.add_argument("--protocols", default="auto,tools,text", help="comma-separated: tools, text, auto")
    parser.add_argument(
        "--set",
        choices=("derived", "heldout", "all"),
        default="derived",
        help="derived: the tasks the rules were derived from; heldout: written before looking at traces",
    )
    parser.add_argument("--tasks", default="", help="comma-separated subset of the chosen set's tasks")
    parser.add_argument("--timeout", type=float, default=300, help="seconds a task may take")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=600,
        help="seconds a model request may send nothing (a slow server)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run the task set this many times (each task gets a new directory)",
    )
    parser.add_argument(
        "--scratch",
        type=Path,
        default=None,
        help="the directory emptied for each task (default: one fixed temp dir); another one per bench run side by side",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--verbose", action="store_true", help="print the last answer of a failed task")
    parser.add_argument("--trace", action="store_true", help="print what the model did in every task")
    asyncio.run(main(parser.parse_args()))
