"""``run --trust`` says what it trusts: the trust dialog's listing, then the folder is trusted with
exactly those files (issue #39)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from freeact_tui import trust
from freeact_tui.project_review import review
from tests.fake_openai import FakeOpenAI, Reply

APP = Path(sys.executable).parent / "freeact-tui"


def test_run_trust_prints_the_listing_it_trusts(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    folder = tmp_path / "clone"
    (folder / ".freeact" / "generated").mkdir(parents=True)
    (folder / ".freeact" / "generated" / "helper.py").write_text("X = 1\n")
    (folder / "AGENTS.md").write_text("Be brief.\n")
    listing = review(trust.check(folder)).text()
    fake_openai.script(Reply("done"))

    done = subprocess.run(
        [str(APP), "run", "--trust", "--base-url", fake_openai.url, "--model", "fake-model", "hi"],
        cwd=folder,
        input="",
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "NO_COLOR": "1"},
    )

    assert done.returncode == 0, done.stderr
    assert f"--trust: trusted {folder}" in done.stderr
    assert listing in done.stderr
    assert ".freeact/generated/" in listing and "AGENTS.md" in listing
    assert trust.check(folder).status == "trusted"
