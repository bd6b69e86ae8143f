"""The real ``freeact-tui run --trust`` in a project with every kind of project file (issue #39): the app's
process opens a project file only through the trust check's digest or the one reader for use
(``project.trusted``), and what the model is sent is the trusted content.

The audit hook of ``tests/audit/sitecustomize.py`` is put into the app's process through ``PYTHONPATH``
and records, for each ``open`` under the folder, which of those readers it went through.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Reply

AUDIT_DIR = Path(__file__).parents[1] / "audit"
APP = Path(sys.executable).parent / "freeact-tui"
MARK = "TRUSTEDCONTENT4711"

FILES = {
    "AGENTS.md": f"Project rule {MARK}.\n",
    ".agents/skills/s/SKILL.md": f"---\nname: s\ndescription: use {MARK}\n---\nbody\n",
    ".freeact/config.toml": "[agent]\nexecution_timeout = 120\n",
    ".freeact/permissions.toml": '[[allow]]\ntype = "ShellAction"\ntool_name = "bash"\ncommand = "make test"\n',
    ".freeact-tui.toml": "approval_timeout = 600\n",
    ".env": "TRUST5_CLI_PROBE=1\n",
}


@pytest.mark.kernel
def test_run_opens_project_files_only_through_the_check_and_the_one_reader(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = (tmp_path / "clone").resolve()
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    log = tmp_path / "audit.jsonl"
    env = {**os.environ, "PYTHONPATH": str(AUDIT_DIR), "AUDIT_FOLDER": str(folder), "AUDIT_LOG": str(log)}
    fake_openai.script(Reply("done"))

    done = subprocess.run(
        [str(APP), "run", "--trust", "--base-url", fake_openai.url, "--model", "fake-model", "hi"],
        cwd=folder,
        input="",
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )

    assert done.returncode == 0, done.stderr
    system = json.dumps(fake_openai.requests[0].messages)
    assert MARK in system.replace("\\n", "\n")  # AGENTS.md and the skill were used: the audit saw their reads
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    app = next(e["pid"] for e in events if e["event"] == "start")
    opened = [e for e in events if e["pid"] == app and e["event"] == "open"]
    project = {str(folder / name) for name in FILES}
    past = sorted({e["path"] for e in opened if e["path"] in project and e["reader"] is None})
    assert not past, f"the app opened project files past the check and the one reader: {past}"
    used = {e["path"] for e in opened if e["reader"] == "read_opened"}
    assert {str(folder / n) for n in ("AGENTS.md", ".agents/skills/s/SKILL.md", ".env")} <= used
