"""What the sandbox hides, decided without starting it (#42): the secret files by the one secret table,
the homes, and the environment (``tests/execution/test_sandbox_secrets.py`` checks a real sandbox).

The class: a secret the sandboxed kernel can read. Checked here: every path a row of the permission
rules' secret table names is found in the folder (generated paths, any depth) and nothing else is;
the secret-named entries of the folders above it and where the folder's secret symlinks lead are hidden
too; the homes are the sandbox's own; and no variable the app passes on is secret-named.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.execution.isolation.protect import ProtectedNames
from freeact_tui.execution.isolation.sandbox import (
    SYSTEM_DIRS,
    SYSTEM_ETC,
    SandboxGatewayProcess,
    bwrap_options,
    needed_paths,
)
from freeact_tui.execution.isolation.secret_files import folder_secrets, is_secret_entry, secret_targets
from freeact_tui.execution.kernel.gateway_process import GATEWAY_TOKEN_ENV
from freeact_tui.execution.kernel.spare_gateway import INHERITED_ENV
from freeact_tui.project import paths
from freeact_tui.project.env_policy import is_secret_env
from freeact_tui.shell.gitreads import SECRET_NAMES, is_secret_name

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)


def _instance(glob: str) -> st.SearchStrategy[str]:
    return st.lists(_WORD, min_size=1, max_size=2).map(
        lambda words: re.sub(r"\[[^]]*\]", "_", glob).replace("**", "/".join(words)).replace("*", words[0])
    )


_SECRET = st.tuples(
    st.lists(_WORD.map(lambda w: "dir-" + w), max_size=3), st.sampled_from(SECRET_NAMES).flatmap(_instance)
).map(lambda t: "/".join([*t[0], t[1]]))
_PLAIN = st.tuples(st.lists(_WORD.map(lambda w: "dir-" + w), max_size=3), _WORD).map(
    lambda t: "/".join([*t[0], f"notes-{t[1]}.txt"])
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secrets=st.lists(_SECRET, min_size=1, max_size=6), plain=st.lists(_PLAIN, max_size=4))
def test_every_secret_path_of_the_table_is_found_and_nothing_else(
    secrets: list[str], plain: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("binds")
    made: set[str] = set()
    for rel in [*secrets, *plain]:
        try:  # a generated file where another path needs a folder (or the other way round): left out
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text("x")
            made.add(rel)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue
    secrets, plain = [r for r in secrets if r in made], [r for r in plain if r in made]
    found = folder_secrets(work)
    for rel in secrets:
        assert any((work / rel).is_relative_to(f) for f in found), (rel, found)
    for rel in plain:
        if not any((work / rel).is_relative_to(work / s) for s in secrets):
            assert not any((work / rel).is_relative_to(f) for f in found), (rel, found)


_PART = st.one_of(_WORD, st.sampled_from(SECRET_NAMES).flatmap(_instance).flatmap(lambda p: st.sampled_from(p.split("/"))))


@settings(max_examples=500, deadline=None)
@given(parts=st.lists(_PART, min_size=1, max_size=4), upper=st.booleans())
def test_one_name_at_a_time_hides_every_path_the_secret_table_names(parts: list[str], upper: bool) -> None:
    """The walk's judge (name and parent) against the rules' own (``is_secret_name`` of the whole path)."""
    parts = [p.upper() for p in parts] if upper else parts
    path = "/".join(parts)
    hidden = any(
        is_secret_entry(part, k < len(parts) - 1, parts[k - 1] if k else "") for k, part in enumerate(parts)
    )
    if is_secret_name(path) or is_secret_name(path.lower()):
        assert hidden, path


def test_what_lies_above_the_folder_and_where_its_secret_links_lead_is_hidden_too(tmp_path: Path) -> None:
    work = tmp_path / "repo" / "work"
    work.mkdir(parents=True)
    (tmp_path / ".env").write_text("monorepo")
    (tmp_path / "repo" / "deploy.key").write_text("k")
    (tmp_path / "repo" / "README.md").write_text("plain")
    (tmp_path / "vault.txt").write_text("the real secret")
    (work / ".env").symlink_to(tmp_path / "vault.txt")
    (work / "config.txt").write_text("inside")
    (work / "link.pem").symlink_to(work / "config.txt")
    (work / "dangling.pem").symlink_to(tmp_path / "nowhere")
    inside, outside = secret_targets(work)
    assert inside == [work / "config.txt"]
    assert outside == sorted([tmp_path / ".env", tmp_path / "repo" / "deploy.key", tmp_path / "vault.txt"])


def test_a_freeact_projects_sessions_are_hidden(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".freeact" / "sessions" / "abc").mkdir(parents=True)
    (project / "sub").mkdir()
    for work in (project, project / "sub"):
        inside, outside = secret_targets(work)
        assert project / ".freeact" / "sessions" in inside + outside


def test_the_sandbox_binds_an_empty_placeholder_over_each_secret(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".ssh").mkdir(parents=True)
    (work / ".env").write_text("KEY=1")
    (work / "server.pem").write_text("pem")
    (work / "notes.txt").write_text("plain")
    protected = ProtectedNames(work)
    try:
        options = bwrap_options(work, tmp_path / "sock", {}, protected.options())
        binds = {options[i + 2]: options[i + 1] for i, word in enumerate(options) if word == "--ro-bind"}
        for name in (".env", "server.pem", ".ssh"):
            source = Path(binds[str(work / name)])
            assert source != work / name and (not source.is_file() or source.stat().st_size == 0), name
            assert not source.is_dir() or not any(source.iterdir()), name
        assert str(work / "notes.txt") not in binds
        # the working dir's own bind comes first, the placeholders after it (a later mount covers)
        assert options.index(str(work / "server.pem")) > options.index("--bind")
    finally:
        protected.cleanup()


def test_the_sandbox_binds_its_table_and_nothing_else_and_no_secret_variable_is_passed_on(tmp_path: Path) -> None:
    work, sock = tmp_path / "work", tmp_path / "sock"
    options = bwrap_options(work, sock, {})
    sources = [Path(options[i + 1]) for i, word in enumerate(options) if word in ("--ro-bind", "--bind")]
    table = [Path("/etc", e) for e in SYSTEM_ETC] + [Path(d) for d in SYSTEM_DIRS]
    assert set(sources) <= {*table, *needed_paths({}), work, sock}, set(sources)
    for home in ("/home", "/root", os.environ.get("HOME", "/"), str(paths.config_dir()), str(paths.data_dir())):
        if home != "/" and os.path.isdir(home):
            assert not any(Path(home).resolve().is_relative_to(s) for s in sources), home
    gateway = SandboxGatewayProcess(
        host="127.0.0.1", port=1, tool_port=2, working_dir=tmp_path, env={"HOME": "/home/someone"}
    )
    assert gateway.env["HOME"] == "/tmp/home"
    assert gateway.token_on_stdin and GATEWAY_TOKEN_ENV not in gateway.process_env()
    assert not [name for name in INHERITED_ENV if is_secret_env(name)]

