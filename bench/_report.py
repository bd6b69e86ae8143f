"""The command line every async bench script shares: run it, print its figures (``--json``: one object)."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any


def run_bench(description: str, main: Callable[[], Coroutine[Any, Any, dict[str, Any]]]) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    print_figures(asyncio.run(main()), as_json=args.json)


def print_figures(figures: dict[str, Any], *, as_json: bool) -> None:
    """Print a bench's figures: one JSON object, or one aligned line each."""
    if as_json:
        print(json.dumps(figures))
    else:
        width = max(map(len, figures), default=0) + 2
        for key, value in figures.items():
            print(f"{key:{width}} {value}")
