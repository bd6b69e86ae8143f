"""#42 leftover 3: a reader whose format decides whether it runs a program or loads code says so by a column
of its row (``known.FormatRuns``), never by the kernel's subprocess guard alone.

Class: "a reader whose format decides whether it runs a program / loads code". Before: ``plt.imread('x.eps')``
read as "reads inside this folder: x.eps" (an in-folder read, allowed by ``effects:reads``), while matplotlib
hands any image but a PNG to ``PIL.Image.open``, which picks its reader by the file's CONTENTS: an EPS runs
Ghostscript. Now the reader rows carry the column: a format known to run the program → "runs programs"; one
known to run nothing → a read; any other, or one given at run time → "cannot tell". Readers that always load
code (an unpickler) and ``np.load(allow_pickle=...)`` (unless a constant false) cannot be told.

The corpus runs over every reader row of the table: a new reader row fails ``test_every_reader_row_is_placed``
until it is given a column or listed as reading data whatever its format.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, read_effects
from freeact_tui.effects.known import MODULES, FormatRuns
from freeact_tui.toolcalls import CodeAction

HERE = Path("/tmp/freeact-eff9-reader-formats")
"""Readings judge names only (nothing is created): a folder that need not exist."""

DATA_READERS = {
    **dict.fromkeys(
        [f"pandas.read_{n}" for n in "csv json excel parquet feather table fwf orc xml stata sas spss html".split()],
        "parses its format in the process; options that pick an engine or a program are not understood",
    ),
    **dict.fromkeys(["numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile"], "parses text or raw bytes"),
    **dict.fromkeys(
        ["os.listdir", "os.scandir", "os.walk", "os.stat", "os.lstat", "shutil.disk_usage", "shutil.copy",
         "shutil.copy2", "shutil.copyfile"],
        "lists, stats or copies bytes: no format is read",
    ),  # fmt: skip
    **dict.fromkeys(
        [f"os.path.{n}" for n in "exists isfile isdir islink getsize getmtime getctime getatime realpath abspath".split()],
        "asks the file system about a name",
    ),
}
"""Reader rows with no column, each with why its format decides nothing it runs."""

IMPORTS = {"numpy": "import numpy as np", "pandas": "import pandas as pd", "matplotlib.pyplot": "import matplotlib.pyplot as plt"}
ALIAS = {"numpy": "np", "pandas": "pd", "matplotlib.pyplot": "plt"}


def _reader_rows() -> dict[str, FormatRuns | None]:
    return {
        f"{module}.{name}": touch.runs
        for module, rule in MODULES.items()
        for name, touch in (rule.touches or {}).items()
        if touch.reads
    }


def test_every_reader_row_is_placed() -> None:
    rows = _reader_rows()
    unplaced = sorted(d for d, runs in rows.items() if runs is None and d not in DATA_READERS)
    assert unplaced == []  # a reader row: give it a FormatRuns column, or say why its format runs nothing
    assert {d for d, runs in rows.items() if runs is not None} == {
        "matplotlib.pyplot.imread",
        "numpy.load",
        "pandas.read_pickle",
    }


def _read(module: str, call: str) -> set[Kind]:
    code = f"{IMPORTS[module]}\n{ALIAS[module]}.{call}"
    return set(read_effects(CodeAction(code), HERE).kinds)


def _asks(kinds: set[Kind]) -> bool:
    return bool(kinds & {Kind.PROGRAMS, Kind.UNKNOWN})


def _row_cases() -> list[tuple[str, str, str]]:
    """(dotted, suffix, expected) for every row with a column: each format it names, in any case, and others."""
    cases = []
    for dotted, runs in _reader_rows().items():
        if runs is None:
            continue
        for fmt in sorted(runs.runs):
            cases += [(dotted, fmt, "runs"), (dotted, fmt.upper(), "runs")]
        for fmt in sorted(runs.safe):
            cases += [(dotted, fmt, "safe"), (dotted, fmt.upper(), "safe")]
        for fmt in ("jpg", "bin", "", "pkl", "npy"):
            if fmt not in runs.runs | runs.safe:
                cases.append((dotted, fmt, "cannot tell" if runs.runs or runs.safe or runs.always else "safe"))
    return cases


@pytest.mark.parametrize(("dotted", "suffix", "expected"), _row_cases())
def test_every_row_by_the_format_it_reads(dotted: str, suffix: str, expected: str) -> None:
    module, name = dotted.rsplit(".", 1)
    runs = _reader_rows()[dotted]
    assert runs is not None
    path = f"data/x.{suffix}" if suffix else "data/x"
    kinds = _read(module, f"{name}({path!r})")
    if runs.always:
        expected = "cannot tell"
    match expected:
        case "runs":
            assert Kind.PROGRAMS in kinds, kinds
        case "safe":
            assert not _asks(kinds) and Kind.READS in kinds, kinds
        case _:
            assert Kind.UNKNOWN in kinds, kinds


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["eps", "ps", "EPS", "png", "PNG", "jpg", "tif", ""]),
    st.sampled_from(["png", "x.png", "data.csv", "x"]),
)
def test_the_format_keyword_decides_over_the_name(fmt: str, name: str) -> None:
    """``plt.imread(name, format=...)``: matplotlib takes the format keyword over the suffix."""
    kinds = _read("matplotlib.pyplot", f"imread({name!r}, format={fmt!r})")
    positional = _read("matplotlib.pyplot", f"imread({name!r}, {fmt!r})")
    assert kinds == positional  # one binding, however it is spelled
    if fmt.lower() in ("eps", "ps"):
        assert Kind.PROGRAMS in kinds
    elif fmt.lower() == "png":
        assert not _asks(kinds)
    else:
        assert Kind.UNKNOWN in kinds


CODE_LOADERS = [
    ("matplotlib.pyplot", "imread('data/x.png', format=fmt)"),  # a format given at run time
    ("matplotlib.pyplot", "imread(name)"),  # a path given at run time
    ("numpy", "load('x.npy', allow_pickle=True)"),
    ("numpy", "load('x.npy', None, True)"),
    ("numpy", "load('x.npy', **{'allow_pickle': True})"),
    ("numpy", "load('x.npy', allow_pickle=flag)"),
    ("pandas", "read_pickle('x.pkl')"),
    ("pandas", "read_pickle('x.csv')"),
    ("pandas", "read_hdf('x.h5')"),
]


@pytest.mark.parametrize(("module", "call"), CODE_LOADERS)
def test_readers_that_load_code_or_a_format_given_at_run_time_cannot_be_told(module: str, call: str) -> None:
    code = f"{IMPORTS[module]}\nfmt = input()\nname = input()\nflag = input()\n{ALIAS[module]}.{call}"
    reading = read_effects(CodeAction(code), HERE)
    assert Kind.UNKNOWN in reading.kinds and reading.effect_class is None


@pytest.mark.parametrize(
    "code",
    [
        "import pickle\npickle.load(open('x.pkl', 'rb'))",
        "import joblib\njoblib.load('model.joblib')",
        "import torch\ntorch.load('weights.pt')",
        "import dill\ndill.load(open('x', 'rb'))",
        "from PIL import Image\nImage.open('x.png')",
        "import shelve\nshelve.open('db')",
    ],
)
def test_other_readers_that_load_code_or_run_programs_are_asked(code: str) -> None:
    assert read_effects(CodeAction(code), HERE).effect_class is None


def test_a_constant_false_allow_pickle_is_a_plain_read() -> None:
    for call in ("load('x.npy', allow_pickle=False)", "load('x.npy')"):
        kinds = _read("numpy", call)
        assert kinds == {Kind.READS}, (call, kinds)


def test_the_ghostscript_formats_are_pillows_own() -> None:
    """The row's ``runs`` formats are the extensions Pillow registers for its EPS reader (which runs Ghostscript)."""
    image = pytest.importorskip("PIL.Image")
    image.init()
    eps = {ext.lstrip(".") for ext, fmt in image.EXTENSION.items() if fmt == "EPS"}
    runs = _reader_rows()["matplotlib.pyplot.imread"]
    assert runs is not None and eps == set(runs.runs)


def test_the_reported_eps_read_runs_a_program() -> None:
    kinds = _read("matplotlib.pyplot", "imread('figure.eps')")
    assert Kind.PROGRAMS in kinds
