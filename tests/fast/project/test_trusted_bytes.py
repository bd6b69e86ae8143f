"""Trusted bytes are the used bytes (issue #39, time of check vs time of use).

The class: a project file is digested by the trust check, then read again later for use; a swap in
between (a ``git pull``, a background process, an earlier session's action) makes the app use content
nobody trusted. The mechanism: ``project.trusted``, the one reader for use, checks the bytes it returns
against what the check read. These tests swap every kind of trusted file right after the check (in every
way a file can be swapped) and assert the swapped content reaches nothing (the prompt, the rules, the
environment, the MCP servers to launch), and an audit hook asserts that no project file is opened for
use but through that reader.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.agent.agent import Agent
from freeact_tui.permissions.rules import rules_for
from freeact_tui.project import trust, trusted
from freeact_tui.project.config import ConfigError, load_config
from freeact_tui.project.freeact_dir import FreeactConfigError, add_freeact_permission

ENV_NAME = "TRUST5_PROBE_VALUE"
TRUSTED = "TRUSTEDMARKER" + "0" * 24  # longer than any swapped marker: a same-size swap fits in its room


@dataclass(frozen=True)
class Kind:
    """One kind of trusted project file: where it is and what it holds around a marker."""

    name: str
    path: str
    template: Callable[[str], str]


KINDS = [
    Kind("agents", "AGENTS.md", lambda m: f"Project rule {m}.\n"),
    Kind("skill", ".agents/skills/s/SKILL.md", lambda m: f"---\nname: s{m}\ndescription: use {m}\n---\nbody\n"),
    Kind("freeact_config", ".freeact/config.toml", lambda m: f'[agent.mcp_servers.srv]\ncommand = "echo"\nargs = ["{m}"]\n'),
    Kind("tui_config", ".freeact-tui.toml", lambda m: f'[mcp_servers.srv]\ncommand = "echo"\nargs = ["{m}"]\n'),
    Kind(
        "permissions",
        ".freeact/permissions.toml",
        lambda m: f'[[allow]]\ntype = "ShellAction"\ntool_name = "bash"\ncommand = "echo {m}"\n',
    ),
    Kind("env", ".env", lambda m: f"{ENV_NAME}={m}\n"),
    Kind(
        "saved_tool",
        ".freeact/generated/gentools/cat/tool/api.py",
        lambda m: f'def run() -> None:\n    """Use {m}."""\n',
    ),
]  # fmt: skip


def _swap(path: Path, text: str, how: str, outside: Path) -> None:
    """Put ``text`` where ``path`` is, as ``how`` says (each a way a file changes under a running app)."""
    old = path.stat()
    if how == "rewrite":
        path.write_text(text)
    elif how == "replace":
        fresh = path.with_name(path.name + ".new")
        fresh.write_text(text)
        os.replace(fresh, path)
    elif how == "same_size_same_times":
        path.write_text(text.ljust(old.st_size)[: old.st_size])
        os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    elif how == "symlink":
        target = outside / path.name
        target.write_text(text)
        path.unlink()
        path.symlink_to(target)
    else:
        raise AssertionError(how)


def _use(folder: Path) -> tuple[str, list[str]]:
    """Everything the app takes from the folder's project files, as one text, and the refusals it gave."""
    used: list[str] = []
    refusals: list[str] = []
    try:
        config = load_config(None, {"working_dir": str(folder)}, cwd=folder)
        used.append(config.project_env.get(ENV_NAME, ""))  # read once, never into os.environ
        used.append(repr(config.mcp_servers))
        used += config.notices
        agent = Agent.from_config(config, model="test", eager_kernel=False)
        used.append(agent.opening.system_prompt())
    except (ConfigError, FreeactConfigError) as exc:
        refusals.append(str(exc))
    try:
        used += [f"{r.effect} {r.kind}: {r.pattern}" for r in rules_for(folder).rules()]
    except FreeactConfigError as exc:
        refusals.append(str(exc))
    assert ENV_NAME not in os.environ
    return "\n".join(used), refusals


@contextmanager
def _swapped_after_check(path: Path, text: str, how: str, outside: Path) -> Iterator[None]:
    """Swap ``path`` to ``text`` right after the first trust check that finds its folder trusted."""
    original = trust.check
    done: list[bool] = []

    def check(folder: Path) -> trust.TrustState:
        state = original(folder)
        if state.status == "trusted" and not done:
            done.append(True)
            _swap(path, text, how, outside)
        return state

    trust.check = check  # type: ignore[assignment]
    try:
        yield
    finally:
        trust.check = original  # type: ignore[assignment]
    assert done, "the trust check never ran"


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    how=st.sampled_from(["rewrite", "replace", "same_size_same_times", "symlink", "none"]),
    marker=st.from_regex(r"SWAP[A-Z0-9]{4,12}", fullmatch=True),
)
def test_content_swapped_after_the_trust_check_is_never_used(kind: Kind, how: str, marker: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, outside = Path(tmp, "clone"), Path(tmp, "outside")
        outside.mkdir()
        path = folder / kind.path
        path.parent.mkdir(parents=True)
        path.write_text(kind.template(TRUSTED))
        folder = folder.resolve()
        trust.trust(trust.check(folder))
        os.environ.pop(ENV_NAME, None)
        try:
            if how == "none":  # the control: the trusted content is used (the test can see a use)
                trust.check(folder)
                used, refusals = _use(folder)
                assert TRUSTED in used, (kind.name, refusals)
                return
            with _swapped_after_check(path, kind.template(marker), how, outside):
                used, refusals = _use(folder)
        finally:
            os.environ.pop(ENV_NAME, None)
            trusted.forget(folder)
        assert marker not in used, (kind.name, how)
        assert marker not in "\n".join(refusals)
        if kind.name in ("freeact_config", "tui_config", "permissions"):
            # A file that must be read to go on is a clear refusal naming it, never a silent old copy.
            assert any(str(path) in r and "trust check" in r for r in refusals), refusals


def test_a_swapped_env_says_so_in_a_notice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path.resolve()
    (folder / ".env").write_text(f"{ENV_NAME}=trusted\n")
    (folder / ".freeact-tui.toml").write_text("")
    trust.trust(trust.check(folder))
    monkeypatch.delenv(ENV_NAME, raising=False)
    with _swapped_after_check(folder / ".env", f"{ENV_NAME}=swapped\n", "replace", tmp_path):
        config = load_config(None, None, cwd=folder)
    assert ENV_NAME not in os.environ
    assert any(".env changed after the trust check read it" in n for n in config.notices), config.notices


def test_the_apps_own_rule_write_is_no_change(tmp_path: Path) -> None:
    """A rule the user adds (written into ``permissions.toml`` by the app) is used at once, not refused,
    and the next start does not ask about it (the app's own write never invalidates trust)."""
    folder = tmp_path.resolve()
    (folder / ".freeact").mkdir()
    (folder / ".freeact" / "permissions.toml").write_text("")
    trust.trust(trust.check(folder))
    trust.check(folder)
    assert add_freeact_permission(folder, "allow", "shell", "wc -l *")
    assert "allow shell: wc -l *" in {
        f"{r.effect} {r.kind}: {r.pattern}" for r in rules_for(folder).rules()
    }
    assert trust.check(folder).status == "trusted"
    (folder / ".freeact" / "permissions.toml").write_text("# anyone else's edit\n", "utf-8")
    assert trust.check(folder).status == "changed"


def test_an_untrusted_folders_files_are_never_used_even_when_asked_for(tmp_path: Path) -> None:
    folder = tmp_path.resolve()
    (folder / "AGENTS.md").write_text("planted\n")
    assert trust.check(folder).status == "untrusted"
    with pytest.raises(trusted.ProjectFileChanged, match="not trusted"):
        trusted.read_text(folder / "AGENTS.md")


def test_a_file_planted_after_a_check_that_found_none_is_not_used(tmp_path: Path) -> None:
    folder = tmp_path.resolve()
    assert trust.check(folder).status == "none"
    (folder / ".freeact").mkdir()
    (folder / ".freeact" / "permissions.toml").write_text(
        '[[allow]]\ntype = "ShellAction"\ncommand = "rm *"\n'
    )
    with pytest.raises(FreeactConfigError, match="appeared after the trust check"):
        rules_for(folder).rules()


# -- the audit: after the check, project files are opened for use only through the one reader ----------

_folder: list[Path] = []
_opened: list[tuple[str, bool]] = []
_READERS: set[CodeType] = {trusted.read_opened.__code__, trust._scan.__code__}  # the check walks in ``_scan``


def _through_a_reader(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code in _READERS:
            return True
        frame = frame.f_back
    return False


def _audit(event: str, args: tuple[object, ...]) -> None:
    if not _folder or event != "open" or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.path.abspath(os.fsdecode(args[0]))
    if Path(path).is_relative_to(_folder[0]):
        _opened.append((path, _through_a_reader(sys._getframe(1))))


sys.addaudithook(_audit)


def test_after_the_check_no_project_file_is_opened_for_use_but_through_the_one_reader(tmp_path: Path) -> None:
    folder = (tmp_path / "clone").resolve()
    for kind in KINDS:
        (folder / kind.path).parent.mkdir(parents=True, exist_ok=True)
        (folder / kind.path).write_text(kind.template(TRUSTED))
    trust.trust(trust.check(folder))
    _folder.append(folder)
    try:
        used, refusals = _use(folder)
    finally:
        _folder.clear()
        os.environ.pop(ENV_NAME, None)
    assert not refusals
    assert used.count(TRUSTED) >= len(KINDS)  # every kind was used, so every kind was opened
    others = sorted({path for path, through in _opened if not through})
    assert not others, f"opened past the one reader: {others}"
    for kind in KINDS:
        assert str(folder / kind.path) in {path for path, _ in _opened}, kind.name


def test_freeact_init_after_a_check_uses_what_it_wrote(tmp_path: Path) -> None:
    """``freeact-tui init`` in a checked folder writes config and rules, then reads them back: its own."""
    from freeact_tui.freeact import PermissionManager, config

    folder = tmp_path.resolve()
    assert trust.check(folder).status == "none"
    config.init(folder)
    manager = PermissionManager(working_dir=folder, freeact_dir=folder / ".freeact")
    manager.init()
    manager.load()
    assert config.load(folder).agent is not None
