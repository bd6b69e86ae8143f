"""The trust dialog names every file under ``.freeact/generated`` the app does not generate (#39, F3a).

Class: the dialog summarised the generated folder as "…tool12/api.py and 2 more", so a
``sitecustomize.py`` (or ``json.py``) planted among 13 saved tools was never named. Mechanism: one table
of the app's layout there (``project.generated_layout``); the review names each file outside it in
full, whatever the number of the app's own files summarised before it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.project import trust
from freeact_tui.project.generated_layout import is_app_layout
from freeact_tui.project.review import review

TOOL = '"""A tool."""\n\n\ndef run() -> int:\n    return 1\n'


def _generated(folder: Path, tools: int, foreign: list[str]) -> Path:
    root = folder / ".freeact" / "generated"
    files = {"gentools/__init__.py": "", "gentools/util/__init__.py": "", "mcptools/__init__.py": ""}
    for k in range(tools):
        files[f"gentools/util/tool{k:02d}/__init__.py"] = ""
        files[f"gentools/util/tool{k:02d}/api.py"] = TOOL
    files.update({name: "open('/tmp/marker', 'w')\n" for name in foreign})
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _dialog(folder: Path) -> str:
    return review(trust.check(folder)).text()


def test_the_reported_sitecustomize_among_13_tools_is_named(tmp_path: Path) -> None:
    _generated(tmp_path, 13, ["sitecustomize.py"])
    text = _dialog(tmp_path)
    assert "sitecustomize.py" in text and "NOT FILES THE APP GENERATES" in text


@pytest.mark.parametrize(
    "rel",
    ["mcptools/__init__.py", "mcptools/github/__init__.py", "mcptools/github/list_issues.py",
     "gentools/__init__.py", "gentools/data/__init__.py", "gentools/data/load_csv/api.py",
     "gentools/data/load_csv/__init__.py"],
)  # fmt: skip
def test_the_apps_own_layout(rel: str) -> None:
    assert is_app_layout(rel)


@pytest.mark.parametrize(
    "rel",
    ["sitecustomize.py", "json.py", "typing.py", "x.pth", "usercustomize.py", "__pycache__/json.cpython-311.pyc",
     "mcptools/github/__pycache__/x.cpython-311.pyc", "mcptools/a/b/c.py", "gentools/x.py", "gentools/c/t/impl.py",
     "gentools/c/t/api.so", "mcptools/my-server/x.py", "mcptools/a/x.pth"],
)  # fmt: skip
def test_not_the_apps_layout(rel: str) -> None:
    assert not is_app_layout(rel)


_SEGMENT = st.text("abcdefghijklmnopqrstuvwxyz_0123456789-.", min_size=1, max_size=10).filter(
    lambda s: s not in (".", "..")
)
_FOREIGN = st.one_of(
    st.sampled_from(["sitecustomize.py", "json.py", "os.py", "evil.pth", "usercustomize.py", "typing.py"]),
    st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join),
).filter(lambda rel: not is_app_layout(rel))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools=st.integers(0, 30), foreign=st.lists(_FOREIGN, min_size=1, max_size=4, unique=True))
def test_every_foreign_file_is_named_however_many_tools_come_first(tools: int, foreign: list[str]) -> None:
    if any(a != b and (b.startswith(a + "/") or a.startswith(b + "/")) for a in foreign for b in foreign):
        return  # a file cannot also be a directory
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _generated(folder, tools, foreign)
        line = next(line for line in _dialog(folder).splitlines() if ".freeact/generated/" in line)
        named = line.split("NOT FILES THE APP GENERATES: ", 1)[1]
        assert set(named.split(", ")) == set(foreign), line  # each named, and none of the app's own
