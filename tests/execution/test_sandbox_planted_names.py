"""A real bubblewrap sandbox: what sandboxed code plants at any depth is undone and told (#39, F5).

The attacker's run: ``--execution sandbox run --skip-permissions``; the code ``git init``s a nested
repository and sets ``core.fsmonitor`` in it, writes ``sub/.gitattributes``, ``.envrc``,
``.vscode/settings.json``, ``sub/.mcp.json`` and ``evil.pth`` — all of which persisted on the host.
Now ``planted.PlantGuard`` undoes each after the action and the run says so; ordinary work stays.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import check_plants_undone, cli, fake_args

CODE_TOOL = "ipybox_execute_ipython_cell"
PLANT = """\
import os
!git init -q sub
!git -C sub config core.fsmonitor 'touch /tmp/planted-fsmonitor'
open('sub/.gitattributes', 'w').write('* filter=x\\n')
open('.envrc', 'w').write('touch /tmp/planted-envrc\\n')
os.makedirs('.vscode', exist_ok=True)
open('.vscode/settings.json', 'w').write('{}')
open('sub/.mcp.json', 'w').write('{}')
open('evil.pth', 'w').write('import os\\n')
open('out.txt', 'w').write('work\\n')
print('all ' + 'written')
"""
PLANTED = ("sub/.git", "sub/.gitattributes", ".envrc", ".vscode/settings.json", "sub/.mcp.json", "evil.pth")


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_sandboxed_plants_are_undone_and_told(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None or shutil.which("socat") is None:
        pytest.skip("bwrap or socat not installed (Debian packages: bubblewrap, socat)")
    work = tmp_path / "w9"
    work.mkdir()
    (work / "README.txt").write_text("hello\n")
    call = Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": PLANT}, call_id="c1")])
    fake_openai.script(call, Reply("done"))
    done = cli(
        "run", "--execution", "sandbox", "--skip-permissions", "-o", "json", *fake_args(fake_openai), "go",
        cwd=work, timeout=240,
    )  # fmt: skip
    check_plants_undone(done, fake_openai, work, PLANTED)
