"""A real model in the loop: a task set run by this app (real kernel) per action protocol, and by peers.

Each task gives a prompt (or several turns), approves actions like a user would (or rejects, or
cancels), and checks the outcome in the working directory, the answer or the events — never what
the model claims. Prints solved/total and the median seconds of a task per agent and task set.

    python bench/real_model.py --base-url http://127.0.0.1:8011/v1 --model local \
        [--set derived|heldout|all] [--protocols auto,tools,text] [--tasks compute,shell_count] \
        [--peers smolagents,freeact] [--keep-sessions DIR] [--json] [--timeout 300] [--repeat 3]

Two task sets: ``derived`` (the default) is the set the small-model rules were derived from;
``heldout`` (``real_model_heldout.py``) was written before looking at any trace of it, phrased as
people ask, in English and German. Report both.

``--peers`` runs the same tasks, checked by the same outcome checks, with smolagents' ``CodeAgent``
and freeact 0.11 against the same server, every action approved (``real_model_agents.py``); with
peers and no ``--protocols`` this app runs with the protocol a ``--base-url`` user gets (``default``).
A peer that is not installed is reported as such; tasks that reject, cancel, delegate to a subagent
or resume are not run with peers (said in the output).

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
from pathlib import Path
from typing import Any

sys.path.insert(
    0, str(Path(__file__).resolve().parent)
)  # the held-out set and the agents live next to this file

from real_model_agents import Context, Folders, Runner, runners  # noqa: E402

from freeact_tui.events import AgentError, ApprovalRequest, Cancelled, ModelWaiting, SubagentStatus  # noqa: E402


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


async def t_cancel_early(c: Context) -> bool:
    """#45: Esc while the model has sent nothing yet (it "thinks"), then a one-line question: the answer
    is to the question; the cancelled loop is not written again."""
    async with c.make() as agent:
        t = await c.turn(
            agent,
            "Print the numbers 1 to 30, one per second.",
            cancel_on=lambda e: isinstance(e, ModelWaiting),
        )
        follow = await c.turn(agent, "What is 6 times 7? Compute it with Python.")
    again = [
        e for e in follow.of(ApprovalRequest) if "sleep" in repr(e.tool_call) or "31" in repr(e.tool_call)
    ]
    return bool(t.of(Cancelled)) and "42" in follow.answer and not again


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
    "cancel_early": t_cancel_early,
    "subagent": t_subagent,
    "recover": t_recover,
}
"""The derived set: the tasks the small-model rules were derived from."""


def _sets() -> dict[str, dict[str, Callable[[Context], Awaitable[bool]]]]:
    from real_model_heldout import HELDOUT  # imported late: it refers back to this module's Context

    return {"derived": TASKS, "heldout": HELDOUT, "all": {**TASKS, **HELDOUT}}


async def run_task(
    name: str,
    runner: Runner,
    *,
    base_url: str,
    model: str,
    limit: float,
    idle_timeout: float = 600,
    scratch: Path | None = None,
    keep: Path | None = None,
) -> dict[str, Any]:
    """One task in a fresh working directory and session store; a timeout or crash is unsolved.

    ``keep``: where the task's session store is copied (the code actions the model wrote, for
    ``approvals_real.py``)."""
    # One fixed place, emptied for each task: the system prompt names the working directory, so the
    # same path lets a local server reuse its cached prompt prefix across tasks (as for a user's project).
    # Absolute: the kernel runs in the task's folder, so a relative ``--scratch`` put the site folder
    # (PYTHONPATH, PIP_TARGET) under it and a package the model installed was never importable.
    tmp = (scratch or Path(tempfile.gettempdir()) / f"freeact-real-model-bench-{os.getuid()}").resolve()
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        folders = Folders(tmp / "work", tmp / "sessions", tmp / "site")
        folders.work.mkdir()
        folders.site.mkdir()
        make = runner.opener(folders, base_url, model, idle_timeout)
        context = Context(folders.work, folders.sessions, make)
        started = time.monotonic()
        error = ""
        try:
            solved = await asyncio.wait_for(_sets()["all"][name](context), limit)
        except TimeoutError:
            solved, error = False, f"timeout {limit:g} s"
        except Exception as exc:  # a bench reports, it does not stop
            solved, error = False, f"{type(exc).__name__}: {exc}"
        seconds = time.monotonic() - started
        if keep is not None and folders.sessions.is_dir():
            shutil.copytree(folders.sessions, keep, dirs_exist_ok=True)
            (keep / "work.txt").write_text(f"{folders.work}\n")  # what the cells' paths were read against
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"task": name, "protocol": runner.label, "solved": solved, "seconds": round(seconds, 1),
            "switched": context.switched, "error": error,
            "last_answer": context.last.answer[-300:] if context.last else "",
            "trace": context.trace}  # fmt: skip


def table(results: list[dict[str, Any]], agents: list[str]) -> str:
    """Per task set and agent: solved/total over every attempt, each round's count, the median seconds."""
    rounds = sorted({r.get("round", 1) for r in results})
    lines = ["| task set | agent | solved | per round | median s |", "|---|---|---|---|---|"]
    for task_set in dict.fromkeys(r.get("set", "derived") for r in results):
        for agent in agents:
            rows = [r for r in results if r["protocol"] == agent and r.get("set", "derived") == task_set]
            if not rows:
                continue
            solved = sum(r["solved"] for r in rows)
            median = statistics.median(r["seconds"] for r in rows)
            each = [
                f"{sum(r['solved'] for r in rows if r.get('round', 1) == n)}/"
                f"{sum(1 for r in rows if r.get('round', 1) == n)}"
                for n in rounds
            ]
            share = f"{solved}/{len(rows)} ({100 * solved / len(rows):.0f} %)"
            lines.append(f"| {task_set} | {agent} | {share} | {', '.join(each)} | {median:.0f} |")
    return "\n".join(lines)


def per_task(results: list[dict[str, Any]], agents: list[str]) -> str:
    """Solved attempts per task and agent, with the set each task belongs to ("-": not run)."""
    names = list(dict.fromkeys(r["task"] for r in results))
    sets = {r["task"]: r.get("set", "derived") for r in results}
    lines = ["| task | set | " + " | ".join(agents) + " |", "|---|---|" + "---|" * len(agents)]
    for name in names:
        cells = []
        for agent in agents:
            rows = [r for r in results if r["task"] == name and r["protocol"] == agent]
            cells.append(f"{sum(r['solved'] for r in rows)}/{len(rows)}" if rows else "-")
        lines.append(f"| {name} | {sets[name]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> list[dict[str, Any]]:
    peers = [p for p in args.peers.split(",") if p]
    protocols = (args.protocols or ("default" if peers else "auto,tools,text")).split(",")
    agents = runners(protocols, peers, args.freeact_python)
    tasks = _sets()[args.set]
    names = args.tasks.split(",") if args.tasks else list(tasks)
    unknown = [n for n in names if n not in tasks]
    if unknown:
        raise SystemExit(f"unknown tasks in set {args.set}: {', '.join(unknown)} (known: {', '.join(tasks)})")
    results = []
    skipped: dict[str, list[str]] = {}
    for agent in agents:
        for name in names:
            why = agent.unsupported(name)
            if why:
                skipped.setdefault(f"{agent.label}: {why}", []).append(name)
    for line, which in skipped.items():
        print(f"not run with {line}: {', '.join(which)}", file=sys.stderr, flush=True)
    try:
        for round_ in range(1, args.repeat + 1):
            # task by task, every agent on it: a run cut short still compares the agents on the same tasks
            for name in names:
                for agent in agents:
                    if agent.unsupported(name):
                        continue
                    keep = (
                        args.keep_sessions / f"r{round_}-{agent.label}-{name}" if args.keep_sessions else None
                    )
                    result = await run_task(
                        name, agent, base_url=args.base_url, model=args.model, limit=args.timeout,
                        idle_timeout=args.idle_timeout, scratch=args.scratch, keep=keep,
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
                        f"{where}{agent.label:10} {name:14} {mark} {result['seconds']:6.1f} s{extra} {result['error']}",
                        flush=True,
                    )
                    if not result["solved"] and args.verbose:
                        print(f"      last answer: {result['last_answer']!r}", flush=True)
                    if args.trace:
                        print("\n".join(f"      | {line}" for line in result["trace"]), flush=True)
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl+C: the table of the tasks done so far
        print(f"interrupted after {len(results)} runs", file=sys.stderr, flush=True)
    labels = [a.label for a in agents]
    if args.json:
        print(json.dumps(results))
    else:
        print(table(results, labels))
        print()
        print(per_task(results, labels))
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url", required=True, help="an OpenAI-compatible server, e.g. http://127.0.0.1:8011/v1"
    )
    parser.add_argument("--model", default="local", help="the model name the server knows")
    parser.add_argument(
        "--protocols",
        default="",
        help="this app's action protocols, comma-separated: default, tools, text, auto, or none "
        "(peers only) (default: auto,tools,text; with --peers: default, what a --base-url user gets)",
    )
    parser.add_argument(
        "--peers",
        default="",
        help="comma-separated peers run on the same tasks: smolagents (pip install smolagents openai), "
        "freeact (0.11 in a Python 3.13, see --freeact-python)",
    )
    parser.add_argument(
        "--freeact-python",
        default=os.environ.get("FREEACT_PYTHON", "/tmp/freeact013/bin/python"),
        help="a Python 3.13 with freeact 0.11.2 installed (default: $FREEACT_PYTHON or /tmp/freeact013)",
    )
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
    parser.add_argument(
        "--keep-sessions",
        type=Path,
        default=None,
        help="copy each task's session store to DIR/r<round>-<agent>-<task> (for bench/approvals_real.py)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--verbose", action="store_true", help="print the last answer of a failed task")
    parser.add_argument("--trace", action="store_true", help="print what the model did in every task")
    try:
        asyncio.run(main(parser.parse_args()))
    except KeyboardInterrupt:  # the table was printed
        raise SystemExit(130) from None
