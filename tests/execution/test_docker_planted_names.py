"""A real Docker container: what its code plants at any depth of the bind-mounted folder is undone and told
(issue #39, F5), as in the sandbox (``test_sandbox_planted_names.py``).

The class: every isolation backend whose code writes the folder unwatched must carry the same guard
(``planted.PlantGuard``), else a nested ``sub/.git/config`` with ``core.fsmonitor``, an ``.envrc`` or an
``evil.pth`` written in the container persists on the host for the user's next ``git``, shell or Python.
Docker's bind mount of the folder is read-write below its read-only protected names.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import IMAGE, check_plants_undone, cli, docker_problem, fake_args

CODE_TOOL = "ipybox_execute_ipython_cell"
# Written with Python only: the container's image holds no git.
PLANT = """\
import os
os.makedirs('sub/.git', exist_ok=True)
open('sub/.git/config', 'w').write('[core]\\n\\tfsmonitor = touch /tmp/planted-fsmonitor\\n')
open('sub/.gitattributes', 'w').write('* filter=x\\n')
open('.envrc', 'w').write('touch /tmp/planted-envrc\\n')
os.makedirs('.vscode', exist_ok=True)
open('.vscode/settings.json', 'w').write('{}')
open('evil.pth', 'w').write('import os\\n')
open('out.txt', 'w').write('work\\n')
print('all ' + 'written')
"""
PLANTED = ("sub/.git", "sub/.gitattributes", ".envrc", ".vscode/settings.json", "evil.pth")


@pytest.mark.kernel
@pytest.mark.timeout(400)
def test_plants_in_a_docker_container_are_undone_and_told(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    problem = docker_problem()
    if problem is not None and not os.environ.get("CI"):
        pytest.skip(f"Docker unavailable: {problem}")
    work = tmp_path / "w9"
    work.mkdir()
    (work / "README.txt").write_text("hello\n")
    config = tmp_path / "config.toml"
    config.write_text(f'docker_image = "{IMAGE}"\n')
    call = Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": PLANT}, call_id="c1")])
    fake_openai.script(call, Reply("done"))
    done = cli(
        "run", "--execution", "docker", "--skip-permissions", "-o", "json", *fake_args(fake_openai, config), "go",
        cwd=work, timeout=360,
    )  # fmt: skip
    check_plants_undone(done, fake_openai, work, PLANTED)
