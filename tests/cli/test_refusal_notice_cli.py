"""The real ``freeact-tui run`` says on stderr which project file it did not use, and why (``project.refusals``):
an ``AGENTS.md`` that is a FIFO and a skill too big to read are named, one line each, and the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from freeact_tui.project.files import MAX_PROJECT_FILE
from tests.fake_openai import FakeOpenAI, Reply

APP = Path(sys.executable).parent / "freeact-tui"


def test_run_names_each_project_file_it_did_not_use_on_stderr(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    folder = (tmp_path / "clone").resolve()
    skill = folder / ".agents" / "skills" / "big" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: big\ndescription: x\n---\n" + "x" * MAX_PROJECT_FILE)
    os.mkfifo(folder / "AGENTS.md")  # read as a plain file, it would hang the app
    fake_openai.script(Reply("done"))
    done = subprocess.run(
        [str(APP), "run", "--trust", "--base-url", fake_openai.url, "--model", "fake-model", "hi"],
        cwd=folder,
        input="",
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    lines = done.stderr.splitlines()
    assert "freeact-tui: project instructions AGENTS.md is not used: it is not a regular file." in lines, lines
    big = "freeact-tui: skill .agents/skills/big/SKILL.md is not used: it is too big."
    assert lines.count(big) == 1, lines
