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
    figures = asyncio.run(main())
    if args.json:
        print(json.dumps(figures))
    else:
        width = max(map(len, figures), default=0) + 2
        for key, value in figures.items():
            print(f"{key:{width}} {value}")
