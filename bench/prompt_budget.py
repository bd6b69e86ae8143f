"""Prompt budget: the tokens of the system prompt plus the tool schemas sent with every request, per protocol.

Counted as the app estimates usage where a server reports none (about 4 characters a token); with
``--base-url`` of a llama.cpp server (llama-cpp-python's ``/extras/tokenize``) the model's own
tokenizer counts too. The default budget is 1,200 tokens: ``--check`` exits 1 when a protocol is over.

    python bench/prompt_budget.py [--json] [--check] [--base-url http://127.0.0.1:8011/v1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import urllib.request
from dataclasses import asdict
from pathlib import Path
from typing import Any

from freeact_tui.actions.definitions import tool_definitions
from freeact_tui.agent.prompts import build_system_prompt
from freeact_tui.agent.usage import estimate_tokens

BUDGET = 1200
PROTOCOLS = ("tools", "text", "auto")


def prompt_parts(protocol: str, *, subagents: bool = True) -> tuple[str, str]:
    """The system prompt and the tool schemas (as JSON) the main agent sends for ``protocol``."""
    with tempfile.TemporaryDirectory() as work:  # no AGENTS.md: the built-in prompt alone
        system = build_system_prompt(Path(work), subagents=subagents, protocol=protocol)
    tools = [] if protocol == "text" else tool_definitions(subagents=subagents)
    schemas = json.dumps(
        [
            {
                "type": "function",
                "function": {k: v for k, v in asdict(t).items() if k in ("name", "description")},
            }
            | {"parameters": t.parameters_json_schema}
            for t in tools
        ]
    )
    return system, schemas if tools else ""


def server_tokens(base_url: str, text: str) -> int | None:
    """Tokens of ``text`` by a llama-cpp-python server's tokenizer (``None`` if it cannot say)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    request = urllib.request.Request(
        f"{root}/extras/tokenize",
        data=json.dumps({"input": text, "model": "local"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            tokens = json.load(response).get("tokens")
    except (OSError, ValueError):
        return None
    return len(tokens) if isinstance(tokens, list) else None


def figures(base_url: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"budget": BUDGET}
    for protocol in PROTOCOLS:
        system, schemas = prompt_parts(protocol)
        out[f"{protocol}_system_tokens"] = estimate_tokens(system)
        out[f"{protocol}_tools_tokens"] = estimate_tokens(schemas)
        out[f"{protocol}_total_tokens"] = estimate_tokens(system) + estimate_tokens(schemas)
        if base_url:
            counted = server_tokens(base_url, system + schemas)
            if counted is not None:
                out[f"{protocol}_total_tokens_model_tokenizer"] = counted
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when a protocol is over {BUDGET}")
    parser.add_argument("--base-url", help="a llama.cpp server to count with the model's tokenizer too")
    args = parser.parse_args()
    result = figures(args.base_url)
    if args.json:
        print(json.dumps(result))
    else:
        width = max(map(len, result)) + 2
        for key, value in result.items():
            print(f"{key:{width}} {value}")
    over = [p for p in PROTOCOLS if result[f"{p}_total_tokens"] > BUDGET]
    if args.check and over:
        print(f"over the budget of {BUDGET} tokens: {', '.join(over)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
