"""A module that reads a configuration file the folder holds cannot be told (#42, round 6).

The class of defect: "config files libraries read from the working dir" (a shipped ``matplotlibrc`` with
``figure.hooks: helper:f`` ran ``helper.py`` on ``plt.figure()``, read as "only computes"). The
mechanism: the one table of such files (``paths.CONFIGURES_CODE``, which also protects their writes)
says which modules read each; a cell that imports one while the folder holds the file cannot be told,
and the dialog's line names the file.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, describe, read_effects
from freeact_tui.project.paths import CONFIGURES_CODE
from freeact_tui.toolcalls import CodeAction

_READ = sorted((name, module) for name, c in CONFIGURES_CODE.items() for module in c.read_by)

_IMPORTS = [
    "import {m}\nx = 1",
    "import {m} as lib\nx = 1",
    "from {m} import something\nx = 1",
    "import json, {m}\nx = 1",
    "def f():\n    import {m}\n    return 1",
    "import {m}.sub\nx = 1",
    "from {m}.sub import part\nx = 1",
]


def _reading(folder: Path, code: str) -> tuple[bool, str]:
    found = read_effects(CodeAction(code), folder)
    return Kind.UNKNOWN in found.kinds, describe(found)


@settings(max_examples=150, deadline=None)
@given(entry=st.sampled_from(_READ), spelling=st.sampled_from(_IMPORTS), how=st.sampled_from(["file", "link", "dir"]))
def test_a_cell_using_a_module_that_reads_a_config_file_of_the_folder_cannot_be_told(
    entry: tuple[str, str], spelling: str, how: str
) -> None:
    name, module = entry
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "elsewhere.txt").write_text("figure.hooks: helper:f\n")
        if how == "file":
            (folder / name).write_text("figure.hooks: helper:f\n")
        elif how == "link":
            (folder / name).symlink_to(folder / "elsewhere.txt")
        else:
            (folder / name).mkdir()
        unknown, words = _reading(folder, spelling.format(m=module))
        assert unknown and name in words, words


@pytest.mark.parametrize(("name", "module"), _READ)
def test_without_the_file_the_same_cell_is_judged_by_its_code(name: str, module: str, tmp_path: Path) -> None:
    (tmp_path / f"not-{name}").write_text("x")
    _, words = _reading(tmp_path, f"import {module}\nx = 1")
    assert name not in words, words


def test_the_reported_matplotlibrc_with_figure_hooks(tmp_path: Path) -> None:
    (tmp_path / "matplotlibrc").write_text("figure.hooks: helper:FigureCanvas\n")
    unknown, words = _reading(tmp_path, "import matplotlib.pyplot as plt\nfig = plt.figure()")
    assert unknown and "matplotlibrc" in words, words
    unknown, words = _reading(tmp_path, "import pandas as pd\npd.DataFrame({'a': [1]}).plot()")
    assert unknown and "matplotlibrc" in words, words
