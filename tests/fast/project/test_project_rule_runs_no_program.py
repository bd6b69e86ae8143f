"""A project's allow rules allow only reads (#39, F4).

Class: a project rule allows a program whose behaviour is defined by files the agent may write
(``sh build.sh``, ``npm test``, ``make``, ``pytest``: the agent rewrites ``build.sh`` in-folder, then
the project's rule runs it unasked). Mechanism: ``policy.project_rule_refusal`` lets a project's shell
allow rule through only when every command its words run is in the app's own read-only table
(``breadth.unread_program``); every other rule is named under "Never applied". The user's own rules
are not bounded.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.permissions.rules import rules_for
from freeact_tui.project import trust
from freeact_tui.project.policy import project_rule_refusal
from freeact_tui.project.review import review
from freeact_tui.reach.breadth import READ_ONLY_PROGRAMS, READ_ONLY_SUBCOMMANDS
from freeact_tui.toolcalls import ShellAction

RUNS_A_PROGRAM = (
    "sh build.sh", "bash build.sh", "./build.sh", "./scripts/test", "npm test", "npm run build", "npm ci",
    "yarn test", "pnpm install", "pytest", "pytest -q tests", "python -m pytest", "python3 setup.py build",
    "python manage.py test", "uv run pytest", "uv sync", "cargo test", "cargo build", "go test ./...",
    "go generate ./...", "docker compose up", "docker build .", "pre-commit run", "pre-commit run --all-files",
    "gradle build", "./gradlew build", "mvn test", "pip install -e .", "pip install -r requirements.txt",
    "make", "make test", "cmake --build build", "ninja", "tox", "nox -s tests", "poetry install",
    "hatch test", "just test", "rake test", "bundle exec rspec", "deno task test", "bun test", "node x.js",
    "jest", "vitest run", "ruff check .", "mypy .", "black .", "sphinx-build docs out",
)  # fmt: skip
PROJECT_READS = ("ls *", "git log *", "git status", "cat src/*", "wc -l *", "grep -n *", "git diff *", "pip list *")


@pytest.mark.parametrize("command", RUNS_A_PROGRAM)
def test_a_project_may_not_allow_a_build_test_or_run_command(command: str) -> None:
    assert project_rule_refusal("allow", "shell", command) is not None
    assert project_rule_refusal("allow", "shell", command + " *") is not None


@pytest.mark.parametrize("command", PROJECT_READS)
def test_a_project_may_allow_what_the_read_only_table_allows(command: str) -> None:
    assert project_rule_refusal("allow", "shell", command) is None


@pytest.mark.parametrize("kind", ["shell", "script", "code", "*"])
def test_a_project_path_rule_may_not_allow_programs(kind: str) -> None:
    assert project_rule_refusal("allow", kind, "path:build.sh") is not None


_KNOWN = READ_ONLY_PROGRAMS | set(READ_ONLY_SUBCOMMANDS)
_NAME = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12).filter(
    lambda w: w not in _KNOWN and not w.startswith("-") and w.strip(".")
)
_DECOR = st.sampled_from(["{p}", "./{p}", "/usr/bin/{p}", "bin/{p}", "'{p}'", "\\{p}", "FOO=1 {p}", "env {p}"])
_ARG = st.sampled_from(["test", "build", "run", "-q", "--all", ".", "./...", "x.sh", "src", "install", "*"])


@settings(max_examples=400, deadline=None)
@given(program=_NAME, decor=_DECOR, args=st.lists(_ARG, max_size=3))
def test_no_generated_program_outside_the_read_only_table_is_allowed_by_a_project(
    program: str, decor: str, args: list[str]
) -> None:
    pattern = " ".join([decor.format(p=program), *args])
    assert project_rule_refusal("allow", "shell", pattern) is not None, pattern


@settings(max_examples=200, deadline=None)
@given(runner=st.sampled_from(["sh", "bash", "zsh", "dash", "python3", "node", "perl", "ruby"]), script=_NAME)
def test_no_interpreter_on_a_generated_script_is_allowed_by_a_project(runner: str, script: str) -> None:
    assert project_rule_refusal("allow", "shell", f"{runner} {shlex.quote(script)}") is not None


def _project(root: Path, commands: tuple[str, ...]) -> Path:
    work = root / "proj"
    (work / ".freeact").mkdir(parents=True)
    allow = [{"type": "ShellAction", "tool_name": "bash", "command": c} for c in commands]
    (work / ".freeact" / "permissions.toml").write_text(tomli_w.dumps({"allow": allow}))
    return work


def test_the_reported_project_rule_is_never_applied_and_named(tmp_path: Path) -> None:
    work = _project(tmp_path, ("sh build.sh", *RUNS_A_PROGRAM, "wc -l *"))
    rules = rules_for(work, user_file=tmp_path / "user.json")
    assert [e.pattern for e in rules.rules() if e.scope == "project"] == ["wc -l *"]
    assert rules.check(ShellAction("sh build.sh")) == "ask"
    assert rules.check(ShellAction("npm test")) == "ask"
    never = review(trust.check(work)).text().split("Never applied, even if trusted:")[1]
    for command in RUNS_A_PROGRAM:
        assert f"allow shell: {command} (" in never, command


def test_the_users_own_rule_still_allows_a_build(tmp_path: Path) -> None:
    work = tmp_path / "plain"
    work.mkdir()
    rules = rules_for(work, user_file=tmp_path / "user.json")
    rules.add("shell", "sh build.sh", scope="always")
    assert rules.check(ShellAction("sh build.sh")) == "allow"


def test_a_project_read_rule_reads_inside_the_folder_only(tmp_path: Path) -> None:
    """A project's read rule is bound as the read-only table is: a read outside the folder is asked."""
    work = _project(tmp_path, ("nl *",))
    rules = rules_for(work, user_file=tmp_path / "user.json")
    assert [e.pattern for e in rules.rules() if e.scope == "project"] == ["nl *"]
    assert rules.check(ShellAction("nl /etc/hostname")) == "ask"
    assert rules.check(ShellAction("nl notes.txt")) == "allow"
