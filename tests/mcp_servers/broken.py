"""A stdio MCP server for tests that never works: it exits at start, or with ``--hang`` never answers."""

from __future__ import annotations

import sys
import time

if __name__ == "__main__":
    if "--hang" in sys.argv:
        time.sleep(3600)
    sys.stderr.write("broken: cannot open the database\n")
    sys.exit(2)
