"""freeact 0.11, the peer the interop tests run beside this app (a Python 3.13 named by ``FREEACT_PYTHON``)."""

from __future__ import annotations

import os
import subprocess


def find_freeact() -> tuple[str | None, str]:
    """The interpreter named by ``FREEACT_PYTHON`` if freeact 0.11 imports there, else why not."""
    python = os.environ.get("FREEACT_PYTHON")
    if not python:
        return (
            None,
            "FREEACT_PYTHON is not set (a Python 3.13 with freeact 0.11; .ci/run makes .venv-freeact)",
        )
    # cheap (no import of freeact or pydantic-ai): a broken install fails loudly in the tests instead
    check = (
        "import importlib.metadata as m, importlib.util as u; "
        "assert u.find_spec('freeact') is not None, 'no freeact package'; print(m.version('freeact'))"
    )
    try:
        done = subprocess.run([python, "-c", check], capture_output=True, text=True, timeout=120)
    except OSError as exc:
        return None, f"FREEACT_PYTHON={python} cannot run: {exc}"
    if done.returncode != 0:
        return None, f"freeact does not import with FREEACT_PYTHON={python}: {done.stderr.strip()[-300:]}"
    version = done.stdout.strip()
    if not version.startswith("0.11."):
        return None, f"FREEACT_PYTHON={python} has freeact {version}, not 0.11"
    return python, version
