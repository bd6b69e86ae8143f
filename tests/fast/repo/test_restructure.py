"""``tools/restructure.py``: the one table of module moves rewrites every reference whole, once.

Generated cases: every old name of the table with generated continuations (a longer identifier is
another name and stays; an attribute follows its module), texts built from old and new names
rewritten twice (the second pass changes nothing), and ``Path(__file__)`` ancestors kept on the same
folder after a move of any depth, except inside a string literal (another file's code).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path, PurePosixPath
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[3]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("restructure", ROOT / "tools" / "restructure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["restructure"] = module
    spec.loader.exec_module(module)
    return module


R = _load()
DOTTED = R.dotted_pattern()
PATHS, PATH_TABLE = R.path_pattern()
OLD = sorted(R.MOVES)
NEW = sorted(R.MOVES.values())


def rewrite(text: str) -> str:
    return R.rewrite_text(text, DOTTED, PATHS, PATH_TABLE)


@given(st.sampled_from(OLD), st.from_regex(r"[a-z0-9_][a-z0-9_]{0,8}", fullmatch=True))
def test_a_longer_identifier_is_another_name_and_stays(old: str, tail: str) -> None:
    assert rewrite(f"x = '{old}{tail}'\n") == f"x = '{old}{tail}'\n"


@given(st.sampled_from(OLD), st.from_regex(r"[A-Z][A-Za-z0-9_]{0,8}", fullmatch=True))
def test_an_attribute_follows_its_module(old: str, attr: str) -> None:
    text = f'monkeypatch.setattr("{old}.{attr}", None)\nimport {old}\n'
    assert rewrite(text) == f'monkeypatch.setattr("{R.MOVES[old]}.{attr}", None)\nimport {R.MOVES[old]}\n'


def _from_import(name: str) -> str:
    parent, leaf = name.rsplit(".", 1)
    return f"from {parent} import {leaf}"


PIECES = st.one_of(
    st.sampled_from(OLD),
    st.sampled_from(NEW),
    st.sampled_from(OLD).map(_from_import),
    st.sampled_from(NEW).map(_from_import),
    st.sampled_from(OLD).map(lambda n: n.replace(".", "/") + ".py"),
    st.sampled_from(NEW).map(lambda n: n.replace(".", "/") + ".py"),
    st.sampled_from([" ", ".", "/", "\n", " import ", ", ", "Name", "_x", "`", '"']),
)


@settings(max_examples=300)
@given(st.lists(PIECES, max_size=12).map("".join))
def test_a_second_rewrite_changes_nothing(text: str) -> None:
    once = rewrite(text)
    assert rewrite(once) == once


@given(st.lists(st.sampled_from(NEW), min_size=1, max_size=4))
def test_new_names_are_never_rewritten(names: list[str]) -> None:
    text = "\n".join([*(f"import {n}" for n in names), *(_from_import(n) for n in names)]) + "\n"
    assert rewrite(text) == text


def test_a_from_import_of_moved_modules_keeps_the_names_it_binds() -> None:
    by_parent: dict[str, list[str]] = {}
    for old in OLD:
        parent, leaf = old.rsplit(".", 1)
        by_parent.setdefault(parent, []).append(leaf)
    for parent, leaves in by_parent.items():
        text = f"from {parent} import {', '.join(leaves)}\n"
        bound = set()
        for line in rewrite(text).splitlines():
            for item in line.split(" import ", 1)[1].split(", "):
                bound.add(item.split(" as ")[-1])
                assert f"{line.split()[1]}.{item.split(' as ')[0]}" in R.MOVES.values()
        assert bound == set(leaves)


@given(
    st.integers(min_value=2, max_value=5),
    st.integers(min_value=0, max_value=3),
    st.integers(min_value=0, max_value=1),
    st.integers(min_value=0, max_value=3),
)
def test_path_of_file_keeps_pointing_at_the_same_folder(depth: int, delta: int, form: int, up: int) -> None:
    up = min(up, depth - 1)
    old_file = PurePosixPath(*(f"d{i}" for i in range(depth))) / "m.py"
    new_file = PurePosixPath(*old_file.parts[:-1], *(f"n{i}" for i in range(delta)), "m.py")
    code = f"Path(__file__).resolve(){'.parent' * (up + 1)}" if form else f"Path(__file__).parents[{up}]"
    moved = R.deepen(code, delta)
    index = R._FILE_ANCESTOR.match(moved)
    assert index is not None
    new_index = (
        index.group("parents").count(".parent") - 1 if index.group("parents") else int(index.group("n"))
    )
    assert new_file.parents[new_index] == old_file.parents[up]


def test_path_of_file_inside_a_string_is_another_files_and_stays() -> None:
    code = 'ROOT = Path(__file__).parent\nSOURCE = "here = Path(__file__).parent"\n'
    assert R.deepen(code, 1) == 'ROOT = Path(__file__).parents[1]\nSOURCE = "here = Path(__file__).parent"\n'


def test_data_that_looks_like_a_module_name_is_kept() -> None:
    for data in R.DATA_STRINGS:
        assert rewrite(data + "\n") == data + "\n"


def test_the_table_never_chains_and_every_new_package_says_what_it_is() -> None:
    R.check_table()
    for new in NEW:
        parts = new.split(".")
        for depth in range(2, len(parts)):
            package = ".".join(parts[:depth])
            existing = ROOT.joinpath(*parts[:depth], "__init__.py").exists()
            assert existing or package in R.PACKAGES or package.startswith("tests."), package
