"""#30: a code action (Python, ``!`` shell, ``%%bash``) whose paths resolve outside the working
directory or into the app's own installation is marked: in the approval dialog and in the output of
a headless run. Found from the structure of the action (string literals, shell words), never from
its wording."""

from __future__ import annotations

import functools
import json
import os
import sysconfig
from pathlib import Path

import pytest
from textual.widgets import Label

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config
from freeact_tui.reach.named_paths import MAX_SHOWN, describe, named_paths
from freeact_tui.toolcalls import CodeAction, NamedPath, ShellAction, ShellScript, ToolCall
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from tests import helpers
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import cli, fake_args
from tests.scripted import Code, script

SIZE = (120, 40)
SITE = os.path.realpath(sysconfig.get_paths()["purelib"])
HOME = os.path.realpath(os.path.expanduser("~"))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")  # inside by name, outside in fact
    return root


# (action, paths named relative to the working dir's parent "P" or absolute; True marks the app's installation)
ROWS: list[tuple[str, ToolCall, list[tuple[str, bool]]]] = [
    ("absolute literal", CodeAction('print(open("/etc/hostname").read())'), [("/etc/hostname", False)]),
    ("relative inside", CodeAction('open("config.ini", "w").write("x")\nopen("sub/../a.txt")'), []),
    ("parent dir", CodeAction('import os\nos.listdir("..")\nopen("../secret.txt")'), [("P", False), ("P/secret.txt", False)]),
    ("home", CodeAction('open(os.path.expanduser("~/.bashrc"))'), [(f"{HOME}/.bashrc", False)]),
    ("symlink out", CodeAction('open("link/data.csv")'), [("P/elsewhere/data.csv", False)]),
    ("the app's package", CodeAction(f'open("{SITE}/freeact_tui/config.ini", "w")'), [(f"{SITE}/freeact_tui/config.ini", True)]),
    ("f-string head", CodeAction('name = "x"\nopen(f"/etc/{name}")'), [("/etc", False)]),
    # a suffix joined to something else, a separator, a URL, a stream: not paths of their own
    ("suffixes and separators", CodeAction('u = base + "/users"\nv = f"{base}/api"\n"a/b".split("/")'), []),
    ("url and null", CodeAction('get("https://example.org/x")\nopen("/dev/null", "w")'), []),
    ("words with spaces", CodeAction('print("see /etc for details")'), []),
    ("! and % lines", CodeAction("!cat /etc/passwd\nfor i in range(2):\n    !ls ../sub\n%cd /tmp"), [("/etc/passwd", False), ("P/sub", False), ("/tmp", False)]),
    ("%%bash cell", CodeAction("%%bash\necho hi > ../out.txt\nls ~"), [("P/out.txt", False), (HOME, False)]),
    ("%%writefile", CodeAction("%%writefile ../x.py\nprint(1)"), [("P/x.py", False)]),
    ("IPython assignment", CodeAction('files = !ls /var/log\nprint("ok")'), [("/var/log", False)]),
    ("shell command", ShellAction("cp data.csv /tmp/data.csv"), [("/tmp/data.csv", False)]),
    ("shell redirect", ShellAction("echo x >> ~/.profile"), [(f"{HOME}/.profile", False)]),
    ("shell option value", ShellAction("tar -czf out.tgz --directory=/opt ."), [("/opt", False)]),
    ("script substitution", ShellScript("cd sub && cat ./a.txt\nrm -rf $(ls /var/log)"), [("/var/log", False)]),
    ("the program itself", ShellAction("/usr/bin/python3 script.py"), []),
]  # fmt: skip


@pytest.mark.parametrize(("call", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_named_paths(work: Path, call: ToolCall, expected: list[tuple[str, bool]]) -> None:
    parent = os.path.realpath(work.parent)
    want = [
        NamedPath(p.replace("P", parent, 1) if p.startswith("P") else p, app_install=i) for p, i in expected
    ]
    assert list(named_paths(call, work)) == want


def test_the_apps_package_counts_even_inside_the_working_dir(tmp_path: Path) -> None:
    # an editable install in the project being worked on: writing into the app itself is still marked
    package = Path(__import__("freeact_tui").__file__).resolve().parent
    paths = named_paths(CodeAction(f'open("{package}/config.ini", "w")'), package.parent)
    assert paths == (NamedPath(f"{package}/config.ini", app_install=True),)


def test_the_warning_lines() -> None:
    assert describe(()) == []
    assert describe((NamedPath("/etc/hosts"),)) == [
        "⚠ Names paths outside the working directory:",
        "  /etc/hosts",
    ]
    both = describe((NamedPath("/s/freeact_tui/x", app_install=True), NamedPath("/etc/hosts")))
    assert both == [
        "⚠ Names paths outside the working directory and in the app's own installation:",
        "  /s/freeact_tui/x  (the app's own installation)",
        "  /etc/hosts",
    ]
    many = describe(tuple(NamedPath(f"/p{i}") for i in range(MAX_SHOWN + 3)))
    assert len(many) == MAX_SHOWN + 2 and many[-1] == "  … 3 more"


# -- in the app: the dialog of the model's code action carries the line ----------------------------------


# the kernel: conftest.py's module-scoped `executor`
until = functools.partial(helpers.until, limit=30.0)


def _paths_text(screen: ApprovalScreen) -> str | None:
    found = screen.query("#approval-paths")
    return str(found.first(Label).render()) if found else None


async def _dialog_for(code: str, executor: KernelExecutor, work: Path) -> tuple[str | None, Path]:
    s = script([Code(code)], ["Done."])
    config = Config(sessions_dir=work.parent / "sessions", working_dir=work, subagent_pool_size=0)
    app = FreeactApp(config, model=s.model(), executor=executor)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent_ready)
        app.main_screen.prompt.load_text("save it")
        app.main_screen.prompt.focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        text = _paths_text(app.screen)  # type: ignore[arg-type]
        await pilot.press("escape")  # rejected: nothing is written
        await until(pilot, lambda: not app.main_screen.turn_running)
    return text, work


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_the_dialog_marks_a_code_action_writing_outside(executor: KernelExecutor, work: Path) -> None:
    outside = str((work.parent / "notes.txt").resolve())
    text, _ = await _dialog_for(
        'open("../notes.txt", "w").write("x")\nprint(open("out.txt").read())', executor, work
    )
    assert text is not None
    assert text.splitlines() == ["⚠ Names paths outside the working directory:", f"  {outside}"]
    assert not (work.parent / "notes.txt").exists()


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_no_line_for_a_code_action_inside(executor: KernelExecutor, work: Path) -> None:
    text, _ = await _dialog_for('open("sub/notes.txt", "w").write("x")', executor, work)
    assert text is None


# -- headless: the warning goes to stderr and into the json result ------------------------------------------


def test_a_headless_run_names_the_paths(fake_openai: FakeOpenAI, work: Path) -> None:
    code = 'print(open("/etc/hostname").read())\nopen("../copy.txt", "w")'
    fake_openai.script(Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": code})]))
    done = cli("run", *fake_args(fake_openai), "-o", "json", "copy the host name", cwd=work)
    assert done.returncode == 2, done.stderr  # refused: nobody approves
    outside = os.path.realpath(work.parent / "copy.txt")
    assert (
        "⚠ Names paths outside the working directory: /etc/hostname, " + outside
    ) in done.stderr and "(refused)" in done.stderr
    (action,) = json.loads(done.stdout)["actions"]
    assert action["approvals"][0]["named_paths"] == [
        {"path": "/etc/hostname", "app_install": False},
        {"path": outside, "app_install": False},
    ]
