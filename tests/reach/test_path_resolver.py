"""The one path resolver (``pathresolve``) every rule judges paths with (#39).

A symlink in any component of a path word, or among a glob's matches, must be followed before a rule
decides whether the path is inside the working directory or a secret. Generated symlink trees
(relative and absolute targets, loops, dangling links, ``..``) and generated words check the resolver
against the operating system (``os.path.realpath`` and ``os.stat``), and check that the built-in rules
never let a command read a path whose real target is outside the working directory without asking.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentEvent, ApprovalRequest, CodeExecutionOutput
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.freeact.permissions import PermissionManager
from freeact_tui.freeact.toolcalls import FileRead
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.reach.named_paths import named_paths
from freeact_tui.reach.resolve import MAX_LINKS, expand_word, inside, real_path, resolve
from freeact_tui.toolcalls import ShellAction
from tests.scripted import Code, script

# Where links may live (inside the working dir) and what they may point at.
_LINK_PLACES = ("a", "b", "d/c", "d/e/f", "g")
_TARGETS = (
    "../out/secret",  # relative, out of the folder
    "../../out/secret",
    "../../../out/proc",
    "OUT/secret",  # absolute, out of the folder (OUT is replaced by the real directory)
    "OUT/proc",
    "OUT",
    "WD/d",  # absolute, inside
    "d",
    "d/e",
    ".",
    "..",
    "a",  # chains and loops
    "b",
    "../a",
    "../b",
    "g",
    "missing/x",  # dangling
    "../out/nothing",
)
_PARTS = (
    "a",
    "b",
    "d",
    "c",
    "e",
    "f",
    "g",
    "..",
    ".",
    "secret",
    "proc",
    "1",
    "environ",
    "id_rsa",
    "*",
    "x",
    "{a,d}",
    "{a..c}",
    "?",
)


def _tree(root: Path, links: list[tuple[str, str]]) -> Path:
    """A working dir with real subdirs ``d/e``, an outside ``out/secret/id_rsa`` and ``out/proc/1/environ``."""
    wd, out = root / "wd", root / "out"
    (wd / "d" / "e").mkdir(parents=True)
    (wd / "d" / "x").write_text("inside\n")
    (out / "secret").mkdir(parents=True)
    (out / "secret" / "id_rsa").write_text("key\n")
    (out / "proc" / "1").mkdir(parents=True)
    (out / "proc" / "1" / "environ").write_text("OPENAI_API_KEY=sk\n")
    for place, target in links:
        link = wd / place
        if link.exists() or link.is_symlink() or not link.parent.is_dir():
            continue
        link.symlink_to(target.replace("OUT", str(out)).replace("WD", str(wd)))
    return wd


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


links_strategy = st.lists(st.tuples(st.sampled_from(_LINK_PLACES), st.sampled_from(_TARGETS)), max_size=5)
words_strategy = st.lists(st.sampled_from(_PARTS), min_size=1, max_size=5).map("/".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(links=links_strategy, words=st.lists(words_strategy, min_size=1, max_size=4))
def test_resolver_agrees_with_the_operating_system(links: list[tuple[str, str]], words: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        wd = _tree(Path(os.path.realpath(tmp)), links)
        root = str(wd)
        for word in words:
            found, resolved = expand_word(word, wd)
            for raw, where in zip(found, resolved, strict=False):
                full = os.path.join(root, raw)
                if not os.path.exists(full):
                    continue
                assert where.certain
                assert where.path == os.path.realpath(full)
                assert os.stat(where.path).st_ino == os.stat(full).st_ino
                assert inside(raw, wd) == _inside(os.path.realpath(full), root)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(links=links_strategy, word=words_strategy)
def test_a_rule_never_judges_inside_what_really_is_outside(links: list[tuple[str, str]], word: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        wd = _tree(Path(os.path.realpath(tmp)), links)
        root = str(wd)
        found, _ = expand_word(word, wd)
        real = [
            os.path.realpath(os.path.join(root, w)) for w in found if os.path.exists(os.path.join(root, w))
        ]
        outside = [r for r in real if not _inside(r, root)]
        call = ShellAction(f"cat {word}")
        if outside:
            assert PermissionRules(None, working_dir=wd).check(call) == "ask", (word, outside)
            assert {p.path for p in named_paths(call, wd)} >= set(outside)
        if "*" not in word and not _inside(os.path.realpath(os.path.join(root, word)), root):
            # freeact's own manager (``path = "**"`` allows reads) judges the same way
            manager = PermissionManager(working_dir=wd, freeact_dir=wd / ".freeact")
            read = FileRead(tool_name="filesystem_read_text_file", path=word, offset=None, limit=None)
            assert not manager.is_allowed(read), word


def test_a_symlink_loop_or_a_long_chain_is_uncertain(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    for k in range(MAX_LINKS + 2):
        (tmp_path / f"l{k}").symlink_to(f"l{k + 1}")
    assert not resolve("a/x", tmp_path).certain
    assert not resolve("l0", tmp_path).certain
    (tmp_path / "d").mkdir()
    (tmp_path / "up").symlink_to("d/..")
    assert real_path(str(tmp_path / "up" / ".." / "x")).path == os.path.realpath(tmp_path / "up" / ".." / "x")
    rules = PermissionRules(None, working_dir=tmp_path)
    assert rules.check(ShellAction("cat a/x")) == "ask"


def test_a_glob_with_more_matches_than_are_read_counts_as_outside(tmp_path: Path) -> None:
    from freeact_tui.reach import resolve as pathresolve

    for k in range(5):
        (tmp_path / f"f{k}").write_text("x")
    rules = PermissionRules(None, working_dir=tmp_path)
    assert rules.check(ShellAction("cat f*")) == "allow"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pathresolve, "MAX_MATCHES", 3)
        assert rules.check(ShellAction("cat f* ")) == "ask"


# --- the two reported cases, end to end ------------------------------------------------------------


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working dir with ``p -> /proc`` and ``docs/k -> ~/.ssh`` (a fake home with a key)."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN FAKE KEY-----\n")
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "p").symlink_to("/proc")
    (work / "docs" / "k").symlink_to(home / ".ssh")
    return work


@pytest.mark.parametrize(
    "command",
    ["grep -a OPENAI_API_KEY p/*/environ", "cat p/self/environ", "cat docs/k/id_rsa", "cat docs/*/id_rsa",
     "cat {docs,x}/k/id_rsa", "cat docs/{j..l}/id_rsa", "head docs/k/../k/id_rsa", "cat < docs/k/id_rsa",
     "echo x > docs/k/new_file", "git diff --no-index docs/k/id_rsa /dev/null"],
)  # fmt: skip
def test_a_directory_symlink_to_a_secret_asks(planted: Path, command: str) -> None:
    assert PermissionRules(None, working_dir=planted).check(ShellAction(command)) == "ask"


@pytest_asyncio.fixture
async def executor(planted: Path) -> AsyncIterator[KernelExecutor]:
    ex = KernelExecutor(working_dir=planted, images_dir=planted.parent / "images")
    await ex.start()
    yield ex
    await ex.stop()


@pytest.mark.kernel
@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("command", "secret"), [("cat docs/k/id_rsa", "FAKE KEY"), ("grep -a HOME p/self/environ", "HOME=")]
)
async def test_the_kernel_never_shows_the_secret_without_asking(
    executor: KernelExecutor, planted: Path, command: str, secret: str
) -> None:
    asked: list[str] = []

    def refuse(request: ApprovalRequest) -> bool:
        asked.append(request.tool_call.subject)
        return False

    s = script([Code(f"!{command}")], ["ok"])
    agent = Agent(
        s.model(),
        sessions_dir=planted.parent / "sessions",
        working_dir=planted,
        executor=executor,
        permissions=PermissionRules(None, working_dir=planted),
    )
    events: list[AgentEvent] = []
    async with agent:
        async for event in agent.stream("go"):
            events.append(event)
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(refuse(event))
    assert command in asked
    shown = "".join(e.text or "" for e in events if isinstance(e, CodeExecutionOutput))
    assert secret not in shown


@pytest.mark.parametrize("command", ["rg -L KEY docs", "rg --follow KEY .", "rg -iL KEY"])
def test_a_recursive_read_that_follows_symlinks_asks(planted: Path, command: str) -> None:
    # no path word names the link: the program would follow it on its own
    assert PermissionRules(None, working_dir=planted).check(ShellAction(command)) == "ask"


@pytest.mark.parametrize("command", ["cat *", "head *", "grep KEY *", "cat k/*"])
def test_a_command_spelled_like_a_default_rule_is_still_judged(planted: Path, command: str) -> None:
    # ``cat *`` is the text of a built-in rule, but the user never saw this command: its glob reaches
    # ``k -> ~/.ssh`` and it asks (on main the equal text counted as "spelled out in full")
    assert PermissionRules(None, working_dir=planted / "docs").check(ShellAction(command)) == "ask"


@pytest.mark.parametrize(
    "command", ["grep -f.env x", "grep -fdocs/k/id_rsa x", "file -fdocs/k/id_rsa", "sort -T/proc/self"]
)
def test_a_path_glued_to_a_short_option_is_judged(planted: Path, command: str) -> None:
    (planted / ".env").write_text("KEY=1\n")
    assert PermissionRules(None, working_dir=planted).check(ShellAction(command)) == "ask"
