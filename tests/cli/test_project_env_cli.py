"""The real ``freeact-tui run --trust`` in a project whose ``.env`` brings the model's key and a variable of
its own (issue #39): the key reaches the model's server, the variable reaches the kernel through the
project's ``kernel_env``, and neither ever enters the app's own process environment.

A ``sitecustomize`` put on the app's ``PYTHONPATH`` writes the app's ``os.environ`` to a file as the
process ends (``atexit`` and ``os._exit``) (the kernel gateway and kernels inherit only a few named variables, never ``PYTHONPATH``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, ToolCallReply
from tests.helpers import cli, fake_args

CODE_TOOL = "ipybox_execute_ipython_cell"
DUMP = """\
import atexit, json, os

_out = os.environ.pop("ENV8_DUMP_TO", None)
if _out:
    _exit = os._exit

    def _dump():
        with open(_out, "w") as f:
            f.write(json.dumps(dict(os.environ)))

    def _dump_and_exit(code):
        _dump()
        _exit(code)

    atexit.register(_dump)
    os._exit = _dump_and_exit  # the app ends with os._exit once its kernels have stopped
"""


@pytest.mark.kernel
def test_a_trusted_projects_env_reaches_the_model_and_kernel_never_the_app(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = (tmp_path / "project").resolve()
    folder.mkdir()
    (folder / ".env").write_text(
        "OPENAI_API_KEY=sk-from-the-project\nENV8_PROBE=planted-by-the-project\nPYTHONSTARTUP=/nowhere.py\n"
    )
    (folder / ".freeact-tui.toml").write_text('[kernel_env]\nPROBE = "${ENV8_PROBE}"\n')
    user = tmp_path / "user.toml"
    user.write_text('api_key_env = "OPENAI_API_KEY"\nproject_kernel_env = ["PROBE"]\n')
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(DUMP)
    dump = tmp_path / "environ.json"

    def answer(request: RecordedRequest) -> Reply:
        return Reply(f"The kernel said {request.tool_results()[-1].strip()}.")

    code = "import os\nprint(os.environ.get('PROBE'), 'ENV8_PROBE' in os.environ)"
    fake_openai.script(Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code}, call_id="c1")]), answer)
    environ = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ENV8_PROBE", "PYTHONSTARTUP")}
    environ |= {"PYTHONPATH": str(hook), "ENV8_DUMP_TO": str(dump)}

    done = cli(
        "run", "--trust", *fake_args(fake_openai, user), "--action-protocol", "tools", "--allow", "code:*",
        "what does the kernel see?", cwd=folder, env=environ, timeout=180,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The kernel said planted-by-the-project False."
    assert {r.headers.get("authorization") for r in fake_openai.requests} == {"Bearer sk-from-the-project"}
    app = json.loads(dump.read_text())
    leaked = sorted({"OPENAI_API_KEY", "ENV8_PROBE", "PYTHONSTARTUP"} & set(app))
    assert not leaked, f"a project's .env entered the app's own process: {leaked}"
