"""A first prompt as other agent terminals take it (issue 43): ``freeact-tui "PROMPT"`` starts the app
with the prompt sent; ``freeact-tui -p "PROMPT"`` is ``run "PROMPT"``. The rewrite happens before
both parsers (the quick path and typer), so they agree."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import typer.main
from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.cli.app_options import quick_app_params
from freeact_tui.cli.entry import prompt_arguments
from freeact_tui.cli.main import app
from tests.cli.test_resume_launch import Terminal
from tests.helpers import cli, kill_processes, with_home

COMMAND = typer.main.get_command(app)

ROWS = [
    (["what is 2+2"], ["--prompt", "what is 2+2"]),
    (["--model", "demo", "what is 2+2"], ["--model", "demo", "--prompt", "what is 2+2"]),
    (["fix", "the", "bug", "-m", "demo"], ["-m", "demo", "--prompt", "fix the bug"]),
    (["--model", "run"], ["--model", "run"]),  # an option's value is no prompt (nor a subcommand)
    (["--model", "demo", "run", "hi"], ["--model", "demo", "run", "hi"]),  # a subcommand stays
    (["sessions", "list"], ["sessions", "list"]),
    (["-p", "hi"], ["run", "hi"]),
    (
        ["--model", "demo", "-p", "hi", "--output-format", "json"],
        ["--model", "demo", "run", "hi", "--output-format", "json"],
    ),
    (["hi", "--print"], ["run", "hi"]),
    (["--", "-not an option"], ["--prompt", "-not an option"]),
    (["--help"], ["--help"]),
    ([], []),
    (["--model=demo", "hi"], ["--model=demo", "--prompt", "hi"]),
]


@pytest.mark.parametrize(("argv", "rewritten"), ROWS, ids=[" ".join(r[0]) or "-" for r in ROWS])
def test_prompt_arguments(argv: list[str], rewritten: list[str]) -> None:
    assert prompt_arguments(argv) == rewritten


_WORDS = st.text(st.characters(codec="ascii", exclude_characters="-\x00"), min_size=1, max_size=12).filter(
    lambda w: w.strip() and w not in {"run", "acp", "sessions", "init"}
)


@given(
    st.lists(
        st.sampled_from([["--model", "demo"], ["--trust"], ["-e", "local"], ["--log-level", "debug"]]),
        max_size=3,
    ),
    st.lists(_WORDS, min_size=1, max_size=4),
)
def test_a_prompt_with_the_app_s_options_parses_the_same_on_both_paths(
    options: list[list[str]], words: list[str]
) -> None:
    argv = [word for option in options for word in option] + words
    rewritten = prompt_arguments(argv)
    quick = quick_app_params(rewritten)
    assert quick is not None and quick["prompt"] == " ".join(words)
    ctx = COMMAND.make_context("freeact-tui", list(rewritten))
    assert ctx.invoked_subcommand is None and ctx.params["prompt"] == " ".join(words)
    assert {k: v for k, v in ctx.params.items() if k != "version"} == quick


def test_print_runs_headless(tmp_path: Path) -> None:
    done = cli("--model", "demo", "-p", "hi", "--output-format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["status"] == "answered" and "demo model" in answer["answer"]


@pytest.mark.kernel
@pytest.mark.timeout(240)
def test_a_prompt_argument_opens_the_app_and_sends_it(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {**os.environ, "HOME": str(home), "FREEACT_TUI_HOME": str(home / "app"), "TERM": "xterm-256color"}
    terminal = Terminal(["--model", "demo", "say hello please"], env, work)
    try:
        terminal.wait_for(lambda: any("say hello please" in p.read_text() for p in home.rglob("main.jsonl")))
        time.sleep(0.3)
        assert terminal.process.poll() is None  # the app, not a headless run
        assert b"No such command" not in terminal.output
    finally:
        terminal.close()
        kill_processes(with_home(home))
