"""smolagents' ``CodeAgent`` as a peer of ``real_model.py`` (one session per process, run in the task's folder).

Reads one JSON object per line on stdin (``{"prompt": ...}``), runs it as a turn of the same agent
(its memory kept, ``reset=False`` after the first), and writes one JSON line per turn:
``{"answer", "outputs", "actions", "error"}`` — the final answer, what the code printed, the code it ran.

    python bench/peer_smolagents.py --base-url http://127.0.0.1:8011/v1 --model local < prompts

Needs ``pip install smolagents openai`` in the interpreter that runs it (not a dependency of this app).
"""

from __future__ import annotations

import argparse
import builtins
import json
import sys
from typing import Any


def _agent(base_url: str, model: str, max_steps: int, max_tokens: int) -> Any:
    from smolagents import CodeAgent, OpenAIServerModel

    server = OpenAIServerModel(
        model_id=model,
        api_base=base_url,
        api_key="local",
        flatten_messages_as_text=True,  # llama.cpp's chat template wants plain text messages
        temperature=0.0,
        max_tokens=max_tokens,
    )
    # Every import allowed and the builtin ``open`` handed to its local executor: the peer of an app
    # whose every action is approved may read and write files and run programs.
    return CodeAgent(
        tools=[],
        model=server,
        additional_authorized_imports=["*"],
        executor_kwargs={"additional_functions": {"open": builtins.open}},
        max_steps=max_steps,
        verbosity_level=0,
    )


def _turn(agent: Any, prompt: str, first: bool) -> dict[str, Any]:
    from smolagents.memory import ActionStep

    before = len(agent.memory.steps)
    answer, error = "", ""
    try:
        answer = str(agent.run(prompt, reset=first))
    except Exception as exc:  # the bench records it, the turn is unsolved
        error = f"{type(exc).__name__}: {exc}"
    steps = [s for s in agent.memory.steps[before:] if isinstance(s, ActionStep)]
    # a final_answer step's "output" is the answer the model wrote, not something its code printed
    outputs = [s.observations or "" for s in steps if not s.is_final_answer]
    actions = [s.code_action or "" for s in steps if s.code_action]
    return {"answer": answer, "outputs": "\n".join(outputs), "actions": actions, "error": error}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="local")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=700)
    args = parser.parse_args()
    answers, sys.stdout = sys.stdout, sys.stderr  # what the agent prints must not mix with the answers
    agent = _agent(args.base_url, args.model, args.max_steps, args.max_tokens)
    first = True
    for line in sys.stdin:
        result = _turn(agent, json.loads(line)["prompt"], first)
        first = False
        print(json.dumps(result), file=answers, flush=True)


if __name__ == "__main__":
    main()
