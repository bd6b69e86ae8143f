"""Command line entry point (placeholder until the app lands)."""

from __future__ import annotations


def main() -> None:
    raise SystemExit("freeact-tui: not built yet")
