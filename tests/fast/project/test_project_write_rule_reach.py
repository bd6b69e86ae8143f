"""What a trusted project's write rule such as ``src/**`` leads to (#39): ordinary project source, said so.

The question: a project rule ``allow FileWrite src/**`` lets the model write ``src/helper.py`` unasked; does
that reach code the app or its children run? The routes, each closed elsewhere and checked here where the
rule is involved:

- no process the app starts has the folder on its path (``tests/project/test_trust_boundary_audit.py``), and
  the kernel imports a folder module only for the cell's own import (``folder_imports``), which the reading
  of effects judges as running folder code: asked ("cannot tell"), whatever allowed the write;
- the names that configure code run later (``conftest.py``, ``pytest.ini``, and ``sitecustomize.py``, which
  Python imports at start-up from ``src/`` once an editable install put it on the path) and the protected
  ones are refused by the rule's bound, in any spelling;
- a command that runs the source (``pytest``, ``python src/x.py``, ``make``) is asked: a project's shell
  allow rules are bound to the read-only table.

So the rule lets the model write ordinary project source, and the trust dialog says exactly that.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import read_effects
from freeact_tui.effects.classes import Kind
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project import paths, trust
from freeact_tui.project.review import review
from freeact_tui.toolcalls import CodeAction, FileWrite, ShellAction

_RULE = {"type": "FileWrite", "tool_name": "filesystem_*", "path": "src/**"}


def _project(folder: Path) -> PermissionRules:
    (folder / ".freeact").mkdir(exist_ok=True)
    (folder / "src").mkdir(exist_ok=True)
    (folder / ".freeact" / "permissions.toml").write_text(tomli_w.dumps({"allow": [_RULE]}))
    return PermissionRules(None, defaults=False, working_dir=folder, project=folder)


def _write(folder: Path, path: str) -> FileWrite:
    return FileWrite(path, "x = 1\n", resolved=os.path.realpath(folder / path), outside=False)


def test_the_trust_dialog_says_what_the_write_rule_lets_the_model_do(tmp_path: Path) -> None:
    _project(tmp_path)
    text = review(trust.check(tmp_path)).text()
    rules = text.split("Permission rules it would add:")[1].split("\n\n")[0]
    assert "allow write: path:src/** — lets the model write the files src/** without asking" in rules
    assert "Python there is ordinary project code" in rules


def test_the_rule_writes_python_in_src_and_a_cell_running_it_is_asked(tmp_path: Path) -> None:
    rules = _project(tmp_path)
    assert rules.check(_write(tmp_path, "src/helper.py")) == "allow"  # ordinary project source
    (tmp_path / "src" / "helper.py").write_text("import os; os.system('echo ran')\n")
    for cell in ("import src.helper", "from src import helper", "from src.helper import x"):
        found = read_effects(CodeAction(cell), tmp_path)
        assert Kind.UNKNOWN in found.kinds and found.effect_class is None, cell  # runs folder code: asked
    for command in ("pytest src", "python src/helper.py", "python -m src.helper", "make"):
        assert rules.check(ShellAction(command)) != "allow", command


_CONTROLLING = sorted({*paths.CONFIGURES_CODE, *paths.PROTECTED_NAMES})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(_CONTROLLING), upper=st.booleans(), depth=st.sampled_from(["src/", "src/pkg/"]))
def test_the_rule_never_writes_a_name_that_configures_code_in_src(
    tmp_path_factory: pytest.TempPathFactory, name: str, upper: bool, depth: str
) -> None:
    folder = tmp_path_factory.mktemp("proj")
    rules = _project(folder)
    path = depth + (name.upper() if upper else name)
    assert rules.check(_write(folder, path)) != "allow", path
