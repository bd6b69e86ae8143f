"""What looks like I/O by its library's naming, reached by name, or writes a tool's configuration is never
plain in-folder work (#42, F5).

Three classes, one mechanism each: a name of an understood library that its table does not list and that the
library's own naming makes I/O (``read_*``, ``to_*``, ``save*``, ``load*``, ``open*``, ``dump*``:
``pd.read_iceberg``) is not pure (``known.IO_NAMED``); a string so named may reach a method by its name
(``df.agg('to_hdf', path)``, ``methodcaller``, ``getattr``); a write to a dot-named path part is a tool's
configuration (``.claude/settings.json``, ``.lfsconfig``, ``.venv/bin/python``: ``paths.configures_tools``),
for code and for the file tools alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, describe, read_effects
from freeact_tui.effects.modes import file_call_inside
from freeact_tui.toolcalls import CodeAction, FileWrite

_FOLDER_CLASSES = ("computes", "reads", "in-folder")

REPORTED = [
    "import pandas as pd\nx = pd.read_iceberg('db.events', catalog_name='prod')",
    "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.agg('to_hdf', '.git/hooks/pre-commit', key='k')",
    "import pandas as pd\ns = pd.Series([1])\ns.agg('to_hdf', 'AGENTS.md', key='k')",
    "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.pipe('to_iceberg', 't')",
    *(
        f"open({p!r}, 'w').write('x')"
        for p in (".claude/settings.json", ".lfsconfig", ".mise.toml", ".cargo/config.toml", ".venv/bin/python",
                  ".python-version")
    ),  # fmt: skip
]


@pytest.mark.parametrize("code", REPORTED)
def test_the_reported_cells_are_not_in_folder_work(code: str, tmp_path: Path) -> None:
    found = read_effects(CodeAction(code), tmp_path)
    assert found.effect_class not in _FOLDER_CLASSES, describe(found)


@pytest.mark.parametrize(
    "code",
    [
        "import pandas as pd\nx = pd.to_datetime(['2020-01-01'])",
        "import json\nprint(json.dumps({'a': 1}))",
        "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\nprint(df.agg('sum'))",
        "print('open')",
        "open('notes.txt', 'w').write('x')",
        "open('sub/data.csv', 'w').write('x')",
    ],
)
def test_ordinary_work_is_still_read_as_such(code: str, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    found = read_effects(CodeAction(code), tmp_path)
    assert found.effect_class in _FOLDER_CLASSES, describe(found)


_IDENT = st.from_regex(r"[a-z][a-z0-9]{0,8}(_[a-z0-9]{1,6}){0,2}", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.sampled_from(["read_", "to_", "save_", "load_", "open_", "dump_", "write_", "export_"]),
    rest=_IDENT,
    how=st.sampled_from(
        [
            "df.agg({s!r}, 'x')",
            "df.apply({s!r})",
            "df.pipe({s!r}, 'x')",
            "df.transform({s!r})",
            "operator.methodcaller({s!r}, 'x')(df)",
            "getattr(df, {s!r})('x')",
        ]
    ),
)
def test_a_method_reached_by_an_io_name_cannot_be_told(prefix: str, rest: str, how: str) -> None:
    code = "import operator\nimport pandas as pd\ndf = pd.DataFrame({'a': [1]})\n" + how.format(s=prefix + rest)
    found = read_effects(CodeAction(code), Path.cwd())
    assert Kind.UNKNOWN in found.kinds, (code, describe(found))


_PART = st.from_regex(r"[A-Za-z0-9_-]{1,8}(\.[a-z]{1,4})?", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(before=st.lists(_PART, max_size=2), dotted=_PART, after=st.lists(_PART, max_size=2))
def test_a_write_under_any_dot_named_part_is_a_tools_configuration(
    before: list[str], dotted: str, after: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("dots")
    path = "/".join([*before, "." + dotted, *after])
    found = read_effects(CodeAction(f"open({path!r}, 'w').write('x')"), root)
    assert found.effect_class not in _FOLDER_CLASSES and Kind.CONTROLS in found.kinds, (path, describe(found))
    assert not file_call_inside(FileWrite(path, "x"), root)  # the file tools: the same bound
    plain = "/".join([*before, dotted, *after])
    assert file_call_inside(FileWrite(plain, "x"), root) or plain.endswith((".py", ".pyc", ".so", ".pth"))
