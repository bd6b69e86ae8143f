"""Rules in a freeact project: saved from this app into ``.freeact/permissions.toml`` in freeact's format
(real freeact 0.11 reads them back, ``FREEACT_PYTHON``), and applied by headless ``run`` as by the app."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from freeact_tui.project import paths
from freeact_tui.toolcalls import FileRead, ShellAction
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import cli as run_cli
from tests.helpers import fake_args

CODE_TOOL = "ipybox_execute_ipython_cell"

FREEACT_CHECK = """
import json, sys
from pathlib import Path
from freeact.permissions import PermissionManager
from freeact.toolcalls import FileRead, ShellAction
work = Path(sys.argv[1])
pm = PermissionManager(working_dir=work, freeact_dir=work / ".freeact")
pm.init()
print(json.dumps({
    "wc": pm.is_allowed(ShellAction(tool_name="bash", command="wc -l a.txt")),
    "docs": pm.is_allowed(FileRead(tool_name="filesystem_read_text_file", path="docs/a.md", offset=None, limit=None)),
    "ls": pm.is_allowed(ShellAction(tool_name="bash", command="ls")),
    "rm": pm.is_allowed(ShellAction(tool_name="bash", command="rm -rf x")),
}))
pm.allow_always(ShellAction(tool_name="bash", command="mkdir build"))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    (work / ".freeact").mkdir(parents=True)
    return work


def freeact_python() -> str:
    python = os.environ.get("FREEACT_PYTHON")
    if not python or not Path(python).exists():
        pytest.skip(
            "FREEACT_PYTHON is not set (a Python with freeact 0.11, e.g. /work/venv-freeact/bin/python)"
        )
    return python


def test_rules_saved_here_go_to_the_freeact_file_and_freeact_reads_them(project: Path) -> None:
    from freeact_tui.permissions.cells import cell_pattern
    from freeact_tui.permissions.rules import rules_for

    rules = rules_for(project)
    # A program not known only to read is more than a project may allow (#39: what it does may be
    # defined by files the agent writes): such a rule goes to the user's own files (kept with this folder: it
    # names files relative to it, #42); a read goes to the project's.
    assert rules.add("shell", "touch *", scope="always") == "folder"
    assert rules.add("shell", "touch a.txt", scope="always") == "folder"
    assert rules.add("shell", "touch /srv/a.txt", scope="always") == "always"
    assert rules.add("shell", "wc -l a.txt", scope="always") == "project"
    assert rules.add("read", "path:docs/**", scope="always") == "project"
    # freeact has no deny tier and no exact-cell rule: those stay in this app's own files (a cell with its
    # folder: what it touches depends on the folder it runs in, #44)
    assert rules.add("shell", "rm *", scope="always", effect="deny") == "always"
    assert rules.add("code", cell_pattern("print(1)"), scope="always") == "folder"
    data = tomllib.loads((project / ".freeact" / "permissions.toml").read_text())
    assert {"type": "ShellAction", "tool_name": "bash", "command": "wc -l a.txt"} in data["allow"]
    assert {"type": "FileRead", "tool_name": "filesystem_*", "path": "docs/**"} in data["allow"]
    assert set(data) == {"ask", "allow"}  # freeact refuses any other key
    saved = json.loads(paths.permissions_file().read_text())
    assert {"kind": "shell", "pattern": "rm *"} in saved["deny"]

    done = subprocess.run(
        [freeact_python(), "-c", FREEACT_CHECK, str(project)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "wc": True,
        "docs": True,
        "ls": True,
        "rm": False,
    }
    # ... and what freeact saved applies here
    again = rules_for(project)
    assert again.check(ShellAction("mkdir build")) == "ask"  # freeact saved it; a project may allow only reads
    assert again.check(ShellAction("touch a.txt")) == "allow"  # the user's own file
    assert again.check(FileRead("docs/a.md")) == "allow"
    assert again.check(ShellAction("rm -rf x")) == "deny"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, timeout=180)


@pytest.mark.kernel
def test_headless_run_applies_the_freeact_projects_rules(fake_openai: FakeOpenAI, project: Path) -> None:
    # A project may allow only reads (which the defaults allow already); its ask rules apply in run too.
    (project / ".freeact" / "permissions.toml").write_text(
        '[[ask]]\ntype = "ShellAction"\ntool_name = "bash"\ncommand = "ls *"\n'
    )
    call = Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": "!ls -la"}, call_id="call_1")])
    fake_openai.script(call, Reply("done"))
    done = cli("run", "--trust", *fake_args(fake_openai), "list it", cwd=project)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "refused shell action 'ls -la'" in done.stderr

    # without the project's rule, the default allows it
    (project / ".freeact" / "permissions.toml").write_text("")
    fake_openai.script(call, Reply("done"))
    done = cli("run", "--trust", *fake_args(fake_openai), "list it", cwd=project)
    assert done.returncode == 0, done.stderr[-2000:]
