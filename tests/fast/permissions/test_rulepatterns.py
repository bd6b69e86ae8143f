"""Proposed patterns for remembered decisions are narrow, and broad ones are named as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.permissions.patterns import broad_reason, pattern_note, proposed_pattern
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import CodeAction, ProgrammaticToolCall, ShellAction, ShellScript, ToolCall


@pytest.fixture
def rules(tmp_path: Path) -> PermissionRules:
    return PermissionRules(None, defaults=False, working_dir=tmp_path)


def allow_proposal(rules: PermissionRules, call: ToolCall) -> str:
    pattern = proposed_pattern(call)
    rules.add(call.kind, pattern, scope="session")
    assert rules.check(call) == "allow", pattern  # the proposal always covers the action at hand
    return pattern


def test_one_line_code_is_proposed_as_that_exact_cell(rules: PermissionRules) -> None:
    call = CodeAction("print(df[df.x > 0].head())\n")
    pattern = allow_proposal(rules, call)
    assert pattern.startswith("cell:")
    assert broad_reason("code", pattern) is None
    note = pattern_note("code", pattern)
    assert note is not None and "only this exact cell" in note
    assert rules.check(CodeAction("print(df[df.x > 0].head()); import os")) == "ask"
    assert rules.check(CodeAction("print(1)")) == "ask"
    # Comments and formatting are not code: the same cell written differently still matches.
    assert rules.check(CodeAction("print( df[df.x>0].head() )  # again\n\n")) == "allow"


def test_longer_code_is_proposed_as_the_exact_cell_not_its_first_line(rules: PermissionRules) -> None:
    call = CodeAction("import pandas as pd\ndf = pd.read_csv('data[1].csv')\nprint(df)")
    pattern = allow_proposal(rules, call)
    assert pattern.startswith("cell:")
    assert rules.check(CodeAction("import pandas as pd\nprint(pd.__version__)")) == "ask"
    assert (
        rules.check(CodeAction("import pandas as pd\ndf = pd.read_csv('data[1].csv')\nprint(df)\n"))
        == "allow"
    )


def test_a_prefix_rule_on_code_still_works_but_is_broad(rules: PermissionRules) -> None:
    rules.add("code", "import pandas as pd*", scope="session")
    assert rules.check(CodeAction("import pandas as pd\nimport os; os.remove('x')")) == "allow"
    reason = broad_reason("code", "import pandas as pd*")
    assert reason is not None and "whatever code follows" in reason
    assert all(e.broad for e in rules.rules() if e.kind == "code")


@pytest.mark.parametrize(
    ("kind", "pattern", "words"),
    [
        ("code", "*", "every code action (any Python), in every future session"),
        ("code", " * ", "every code action"),
        ("code", "import*", "almost every code action"),
        ("code", "print(*", "almost every code action"),
        ("script", "*", "every shell script"),
        ("shell", "*", "every shell command"),
        ("shell", "* --help", "any program"),
        ("shell", "python *", "lets `python` run any code"),
        ("shell", "python", "lets `python` run any code"),
        ("shell", "python3 -c *", "lets `python3` run any code"),
        ("shell", "bash *", "lets `bash` run any code"),
        ("shell", "sudo *", "lets `sudo` run any code"),
        ("shell", "rm *", "lets `rm` act on any file"),
        ("shell", "rm -rf *", "lets `rm` act on any file"),
        ("mcp", "*", "every MCP tool call"),
        ("mcp", "*.*", "every MCP tool call"),
        ("tool", "*", "every tool call"),
        ("shell", "path:**", "every path"),
    ],
)
def test_broad_patterns_are_named(kind: str, pattern: str, words: str) -> None:
    reason = broad_reason(kind, pattern)
    assert reason is not None and words in reason, reason


@pytest.mark.parametrize(
    ("kind", "pattern"),
    [
        ("code", "print('hello')"),
        ("shell", "python script.py *"),
        ("shell", "python --version"),
        ("shell", "rm -rf build"),
        ("shell", "git status *"),
        ("shell", "touch *"),
        ("mcp", "github.*"),
        ("shell", "path:src/**"),
    ],
)
def test_narrow_patterns_pass(kind: str, pattern: str) -> None:
    assert broad_reason(kind, pattern) is None


@pytest.mark.parametrize(
    ("command", "proposal"),
    [
        # A wildcard only for programs known only to read (#39, strict): any other is proposed exactly.
        ("git log -1 --stat", "git log *"),
        ("ls -la src", "ls *"),
        ("git commit -m 'first'", "git commit -m 'first'"),
        ("touch a.txt", "touch a.txt"),
        ("python train.py --epochs 3", "python train.py --epochs 3"),
        ("python train.py", "python train.py"),
        ("rm -rf build", "rm -rf build"),
        ("python -c 'import os'", "python -c 'import os'"),  # quoted: only the command as written
        ("bash", "bash"),
    ],
)
def test_shell_proposals_are_narrow(rules: PermissionRules, command: str, proposal: str) -> None:
    assert allow_proposal(rules, ShellAction(command)) == proposal


def test_rm_proposal_does_not_cover_other_files(rules: PermissionRules) -> None:
    allow_proposal(rules, ShellAction("rm -rf build"))
    assert rules.check(ShellAction("rm -rf /")) == "ask"
    assert rules.check(ShellAction("rm -rf build/../..")) == "ask"


def test_other_calls_keep_their_name_pattern(rules: PermissionRules) -> None:
    assert allow_proposal(rules, ProgrammaticToolCall("github", "list_issues")) == "github.list_issues"
    assert allow_proposal(rules, ShellScript("echo hi\nls")).startswith("cell:")
    assert rules.check(ShellScript("echo hi\nrm -rf x")) == "ask"
