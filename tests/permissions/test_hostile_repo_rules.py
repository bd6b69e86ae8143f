"""A hostile repository against the permission rules: one test per attack of issue #28 (rules part).

Each case was an exploit on main: a secret read without asking, a repo-configured program run by a
default-allowed ``git``, a hidden ``$var`` expansion, a deny rule dodged by spelling, a user allow rule
that let a forbidden flag through. The kernel cases run a real ipybox kernel in a real git repository.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentEvent, ApprovalRequest, CodeExecutionOutput
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import ShellAction
from tests.scripted import Code, Script, script

MARKER_PROGRAM = """#!/bin/sh
echo "$0 $*" >> {marker}
exit 1
"""


def hostile_repo(root: Path) -> tuple[Path, Path]:
    """A git repo whose own config names programs (fsmonitor, external diff) and hooks that write a marker."""
    repo, marker = root / "repo", root / "ran-repo-programs"
    repo.mkdir()
    program = root / "evil.sh"
    program.write_text(MARKER_PROGRAM.format(marker=marker))
    program.chmod(0o755)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q", ".")
    git("config", "user.email", "a@example.com")
    git("config", "user.name", "a")
    (repo / "f.txt").write_text("one\n")
    git("add", "f.txt")
    git("commit", "-qm", "one")
    (repo / "f.txt").write_text("one\ntwo\n")  # a change, so that status and diff have work to do
    git("config", "core.fsmonitor", str(program))
    git("config", "diff.external", str(program))
    git("config", "core.pager", str(program))
    for hook in (
        "pre-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
        "fsmonitor-watchman",
    ):
        path = repo / ".git" / "hooks" / hook
        path.write_text(MARKER_PROGRAM.format(marker=marker))
        path.chmod(0o755)
    return repo, marker


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return hostile_repo(tmp_path_factory.mktemp("hostile"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(repo: tuple[Path, Path]) -> AsyncIterator[KernelExecutor]:
    """A real kernel whose working directory is the hostile repository."""
    ex = KernelExecutor(working_dir=repo[0], images_dir=repo[0].parent / "images")
    await ex.start()
    yield ex
    await ex.stop()


def make_agent(s: Script, executor: KernelExecutor, working_dir: Path, rules: PermissionRules) -> Agent:
    return Agent(
        s.model(),
        sessions_dir=working_dir.parent / "sessions",
        working_dir=working_dir,
        executor=executor,
        permissions=rules,
    )


async def run(agent: Agent, decide: Callable[[ApprovalRequest], bool]) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    async for event in agent.stream("go"):
        events.append(event)
        if isinstance(event, ApprovalRequest) and not event.decided:
            event.approve(decide(event))
    return events


def nobody(request: ApprovalRequest) -> bool:
    raise AssertionError(f"asked about {request.tool_call}")


# --- secrets read without asking ----------------------------------------------------------------


@pytest.fixture
def defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PermissionRules:
    home = tmp_path / "home"
    for secret in (".config/gh/hosts.yml", ".docker/config.json", ".kube/config", ".npmrc", ".bash_history"):
        (home / secret).parent.mkdir(parents=True, exist_ok=True)
        (home / secret).write_text("token\n")
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    return PermissionRules(None, working_dir=work)


@pytest.mark.parametrize(
    "command",
    [
        "grep -a OPENAI_API_KEY /proc/*/environ",
        "cat /proc/self/environ",
        "head -c 4000 /proc/1/environ",
        "cat /proc/self/cmdline",
    ],
)
def test_proc_environ_is_never_read_without_asking(defaults: PermissionRules, command: str) -> None:
    assert defaults.check(ShellAction(command)) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/.config/gh/hosts.yml",
        "cat ~/.docker/config.json",
        "cat ~/.kube/config",
        "cat ~/.npmrc",
        "cat ~/.bash_history",
        "tail -n 50 ~/.python_history",
        "head ~/.zsh_history",
        "cat /etc/passwd",  # the defaults read inside the working directory only
        "ls ~",
    ],
)
def test_home_config_and_history_reads_ask(defaults: PermissionRules, command: str) -> None:
    assert defaults.check(ShellAction(command)) == "ask"


def test_secrets_ask_even_under_a_users_broad_allow_rule(defaults: PermissionRules) -> None:
    defaults.add("shell", "cat *", scope="session")
    assert defaults.check(ShellAction("cat ~/.config/gh/hosts.yml")) == "ask"
    assert defaults.check(ShellAction("cat /proc/self/environ")) == "ask"
    assert defaults.check(ShellAction("cat notes.txt")) == "allow"


def test_default_reads_inside_the_working_dir_still_run(defaults: PermissionRules) -> None:
    for command in (
        "ls", "cat README.md", "grep -n foo src/app.py", "git status", "wc -l *.py 2>/dev/null",
        "cat .docker/Dockerfile", "ls .config",  # a project's own dirs of those names hold no login
    ):  # fmt: skip
        assert defaults.check(ShellAction(command)) == "allow", command


def test_home_secrets_ask_when_the_working_dir_is_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    rules = PermissionRules(None, working_dir=tmp_path)
    for command in (
        "cat .config/gh/hosts.yml",
        "cat .docker/config.json",
        "cat .bash_history",
        "cat ~/.kube/config",
    ):
        assert rules.check(ShellAction(command)) == "ask", command


# --- git runs the repository's programs ---------------------------------------------------------


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_default_allowed_git_is_asked_in_a_repo_that_names_programs_and_runs_none_when_approved(
    executor: KernelExecutor, repo: tuple[Path, Path]
) -> None:
    work, marker = repo
    marker.unlink(missing_ok=True)
    rules = PermissionRules(None, working_dir=work)
    s = script([Code("!git status\n!git diff\n!git log -p -1\n!git show --stat")], ["ok"])
    asked: list[str] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request.tool_call.display_text())
        return True

    async with make_agent(s, executor, work, rules) as agent:
        events = await run(agent, approve)
    # The repository's config names programs (gitrun.repo_program_keys): no git part runs unasked.
    for command in ("git status", "git diff", "git log -p -1", "git show --stat"):
        assert any(command in text for text in asked), (command, asked)
    out = "".join(e.text or "" for e in events if isinstance(e, CodeExecutionOutput))
    assert "+two" in out  # git diff ran, with git's own diff
    # Approved, git still runs none of them: the kernel's git settings are a second line.
    assert not marker.exists(), marker.read_text()


# --- IPython $var expansion ------------------------------------------------------------------------


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    "cells",
    [
        ["x = '; touch {target}'", "!echo $x"],
        ["def f():\n    y = '; touch {target}'\n    !echo $y\nf()"],
        ["x = '; touch {target}'", "!echo {{x}}"],
    ],
    ids=["dollar", "function-local", "braces"],
)
async def test_a_shell_part_is_judged_as_it_will_run(
    executor: KernelExecutor, repo: tuple[Path, Path], tmp_path: Path, cells: list[str]
) -> None:
    work = repo[0]
    target = tmp_path / "X"
    rules = PermissionRules(None, working_dir=work)
    steps = [[Code(c.format(target=target), call_id=f"c{k}")] for k, c in enumerate(cells)]
    s = script(*steps, ["ok"])
    shown: list[str] = []

    def decide(request: ApprovalRequest) -> bool:
        shown.append(request.tool_call.display_text())
        return "touch" not in request.tool_call.display_text() or request.tool_call.kind == "code"

    async with make_agent(s, executor, work, rules) as agent:
        await run(agent, decide)
    assert f"touch {target}" in shown  # the dialog showed what would really run, and it was refused
    assert not target.exists()


# --- deny rules match the program, not its spelling ---------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "/bin/rm -rf build",
        "\\rm -rf build",
        "'rm' -rf build",
        '"rm" -rf build',
        "command rm -rf build",
        "env rm -rf build",
        "env FOO=1 rm -rf build",
        "exec rm -rf build",
        "sudo rm -rf build",
        "sudo -u root /usr/bin/rm build",
        "xargs rm",
        "nice -n 5 rm build",
        "timeout 5 rm build",
        "FOO=1 rm build",
        "find . -delete",
        "find . -name '*.pyc' -exec rm {} \\;",
        "echo $(rm build)",
        "echo `rm build`",
        "sh -c 'rm build'",
        "bash -c 'ls; rm build'",
        "ls && /bin/rm build",
    ],
)
def test_a_deny_rule_stops_every_spelling_of_the_program(tmp_path: Path, command: str) -> None:
    rules = PermissionRules(None, working_dir=tmp_path)
    rules.add("shell", "*", scope="session")  # even with everything else allowed
    rules.add("shell", "rm *", scope="session", effect="deny")
    assert rules.check(ShellAction(command)) == "deny"


def test_a_deny_rule_spelled_with_a_path_stops_the_bare_program(tmp_path: Path) -> None:
    rules = PermissionRules(None, working_dir=tmp_path)
    rules.add("shell", "/bin/rm *", scope="session", effect="deny")
    assert rules.check(ShellAction("rm -rf build")) == "deny"


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_a_deny_rule_stops_a_path_spelled_rm_in_the_kernel(
    executor: KernelExecutor, repo: tuple[Path, Path], tmp_path: Path
) -> None:
    victim = tmp_path / "keep.txt"
    victim.write_text("precious")
    rules = PermissionRules(None, working_dir=repo[0])
    rules.add("shell", "rm *", scope="session", effect="deny")
    s = script([Code(f"!\\rm {victim}\n!/bin/rm {victim}\n!command rm {victim}")], ["ok"])
    async with make_agent(s, executor, repo[0], rules) as agent:
        await run(agent, nobody)
    assert victim.read_text() == "precious"


# --- user allow rules and forbidden flags ---------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("find *", "find . -exec rm {} \\;"),
        ("find *", "find . -name x -delete"),
        ("find *", "find . -fprint out.txt"),
        ("sed *", "sed s/a/b/e notes.txt"),
        ("sed *", "sed 1e notes.txt"),
        ("sed *", "sed -i s/a/b/ notes.txt"),
        ("sed *", "sed -n 'w out.txt' notes.txt"),
        ("awk *", "awk 'BEGIN{system(\"touch x\")}'"),
        ("awk *", "awk '{print | \"sh\"}' notes.txt"),
        ("awk *", "awk 'BEGIN{print ENVIRON[\"OPENAI_API_KEY\"]}'"),
        ("grep *", "grep -r KEY ."),
        ("sort *", "sort -o notes.txt notes.txt"),
        ("git *", "git -c core.pager=evil log"),
        ("tar *", "tar -xf a.tar --to-command=sh"),
    ],
)
def test_a_user_allow_rule_does_not_allow_a_forbidden_flag(tmp_path: Path, rule: str, command: str) -> None:
    rules = PermissionRules(None, defaults=False, working_dir=tmp_path)
    rules.add("shell", rule, scope="always")
    assert rules.check(ShellAction(command)) == "ask"


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("find *", "find . -name '*.py'"),
        ("sed *", "sed -n 1,5p notes.txt"),
        ("sed *", "sed s/a/b/g notes.txt"),
        ("awk *", "awk '{print $1}' notes.txt"),
        ("find * -delete", "find build -name '*.pyc' -delete"),  # the rule names the flag: the user meant it
    ],
)
def test_a_user_allow_rule_still_allows_what_it_names(tmp_path: Path, rule: str, command: str) -> None:
    rules = PermissionRules(None, defaults=False, working_dir=tmp_path)
    rules.add("shell", rule, scope="always")
    assert rules.check(ShellAction(command)) == "allow"
