"""freeact 0.11 as a peer of ``real_model.py``: its SDK agent, every action approved, in the task's folder.

Run by a Python 3.13 that has ``freeact==0.11.2`` (not this app's venv). Reads one JSON object per
line on stdin (``{"prompt": ...}``), runs it as a turn of the same agent (its kernel and history
kept across turns), and writes one JSON line per turn: ``{"answer", "outputs", "actions", "error"}``
— the last response, what the code printed, the code actions it ran.

    /tmp/freeact013/bin/python bench/peer_freeact.py --base-url http://127.0.0.1:8011/v1 --model local
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any


def _runtime(base_url: str, model: str, max_tokens: int) -> Any:
    from freeact.config import AgentSection, FreeactConfig, ToolPresets, resolve, workspace

    work = Path.cwd()
    # The bench's PIP_TARGET / PYTHONPATH (a package the model installs goes to the task's folder),
    # kept beside the path freeact's own kernel needs for its generated tool APIs.
    paths = [p for p in (os.environ.get("PYTHONPATH", ""), str(workspace(work).generated_dir)) if p]
    kernel_env = {"PYTHONPATH": os.pathsep.join(paths)}
    for name in ("PIP_TARGET", "PIP_DISABLE_PIP_VERSION_CHECK"):
        if name in os.environ:
            kernel_env[name] = os.environ[name]
    agent = AgentSection(
        model=f"openai:{model}",
        provider_settings={"base_url": base_url, "api_key": os.environ.get("OPENAI_API_KEY", "local")},
        model_settings={"temperature": 0.0, "max_tokens": max_tokens},
        tools=ToolPresets(),
        execution_timeout=90,
        enable_persistence=False,
        enable_subagents=False,
        kernel_env=kernel_env,
    )
    runtime = resolve(FreeactConfig(agent=agent), working_dir=work)
    # Its MCP servers (filesystem, tool discovery) take longer than pydantic-ai's 5 s start timeout to
    # import on a loaded 2-core machine: wait for them as the bench waits for the app's kernel.
    servers = {name: {**config, "timeout": 300} for name, config in runtime.mcp_servers.items()}
    return dataclasses.replace(runtime, mcp_servers=servers)


async def _turn(agent: Any, prompt: str, max_turns: int) -> dict[str, Any]:
    from freeact.events import ApprovalRequest, CodeExecutionOutput, Response
    from freeact.toolcalls import CodeAction

    answer, outputs, actions, error = "", [], [], ""
    try:
        async for event in agent.stream(prompt, max_turns=max_turns):
            match event:
                case ApprovalRequest(tool_call=call):
                    event.approve(True)  # the peer of an app whose every action is approved
                    if isinstance(call, CodeAction):
                        actions.append(call.code)
                case CodeExecutionOutput(text=text):
                    outputs.append(text or "")
                case Response(content=content) if event.agent_id == "main":
                    answer = content
    except Exception as exc:  # the bench records it, the turn is unsolved
        error = f"{type(exc).__name__}: {exc}"
    return {"answer": answer, "outputs": "\n".join(outputs), "actions": actions, "error": error}


async def _main(args: argparse.Namespace) -> None:
    from freeact.agent import Agent

    answers, sys.stdout = sys.stdout, sys.stderr  # what the agent prints must not mix with the answers
    # freeact starts its own MCP servers as ``python -m ...``: this interpreter, as its venv would be active
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    loop = asyncio.get_running_loop()
    async with Agent(_runtime(args.base_url, args.model, args.max_tokens)) as agent:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            result = await _turn(agent, json.loads(line)["prompt"], args.max_turns)
            print(json.dumps(result), file=answers, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="local")
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=700)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
