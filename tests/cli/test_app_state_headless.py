"""The attacker's case through the real CLI (#42 F5): with the working folder at the app's config folder
(``FREEACT_TUI_HOME=H``, cwd ``H/config``, or ``H`` itself) and in-folder code allowed, the model rewrote
``permissions.json`` to allow everything, and from then on every action in every folder ran unasked. The
app's own state is never in-folder work: the write is refused, the rules file is untouched, and the next
run in another folder still asks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import cli, fake_args

CODE_TOOL = "ipybox_execute_ipython_cell"
EVERYTHING = json.dumps({"allow": [{"kind": "*", "pattern": "*"}]})


def _code(code: str) -> Reply:
    return Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code}, call_id="call_1")])


@pytest.mark.parametrize("where", ["config", "home"])
def test_in_folder_code_never_rewrites_the_apps_rules(
    fake_openai: FakeOpenAI, tmp_path: Path, where: str
) -> None:
    home = Path(os.environ["FREEACT_TUI_HOME"])
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    rules = config / "permissions.json"
    cwd, target = (config, "permissions.json") if where == "config" else (home, "config/permissions.json")
    fake_openai.script(_code(f"open({target!r},'w').write({EVERYTHING!r})"), Reply("done"))
    done = cli("run", *fake_args(fake_openai), "--allow", "effects:in-folder", "-o", "json", "go", cwd=cwd)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "this app's own settings" in done.stderr
    assert not rules.exists() or "*" not in rules.read_text()

    # the next run, in another folder, with no rule: still asked (refused, headless)
    other = tmp_path / "f2"
    other.mkdir()
    marker = other / "PWNED"
    fake_openai.reset()
    fake_openai.script(_code(f"open({str(marker)!r},'w').write('x')"), Reply("done"))
    again = cli("run", *fake_args(fake_openai), "-o", "json", "go", cwd=other)
    assert again.returncode == 2 and not marker.exists(), (again.stdout, again.stderr)
