"""The file a reader really reads is the one the reading judges (#42, F3: ``np.loadtxt('nums')`` reads ``nums.gz``).

The class: a library that opens another name than the one it is given — numpy's ``DataSource`` tries the name
with each compression suffix when the name is not there. The mechanism: the landing column (``landing``,
``Touch.lands``) applies to the path a reader reads as to the path a writer writes. The test runs each real
reader of the table in a temporary folder where ONLY a suffixed variant of the given name exists (no tracing:
a read that succeeds opened that file) and checks the reading named it.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from freeact_tui.effects import Kind, describe, read_effects
from freeact_tui.effects.landing import NUMPY_DATASOURCE
from freeact_tui.toolcalls import CodeAction

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

_TEXT = b"1 2\n3 4\n"
_PLANTS: dict[str, Callable[[bytes], bytes]] = {
    "": lambda b: b,
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lambda b: lzma.compress(b, format=lzma.FORMAT_XZ),
    ".lzma": lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE),
    ".txt": lambda b: b,
    ".csv": lambda b: b,
    ".npy": lambda b: b,
    ".zip": lambda b: b,
}
"""Suffixes a library might try, each planted alone (with contents a text reader accepts)."""

READERS: dict[str, Callable[[str], object]] = {
    "import numpy as np\nx = np.loadtxt({p!r})": np.loadtxt,
    "import numpy as np\nx = np.genfromtxt({p!r})": np.genfromtxt,
    "import numpy as np\nx = np.load({p!r})": lambda p: np.load(p),
    "import numpy as np\nx = np.fromfile({p!r})": np.fromfile,
    "import pandas as pd\nx = pd.read_csv({p!r})": pd.read_csv,
    "import pandas as pd\nx = pd.read_table({p!r})": pd.read_table,
    "import pandas as pd\nx = pd.read_fwf({p!r})": pd.read_fwf,
    "import pandas as pd\nx = pd.read_json({p!r})": pd.read_json,
}


@pytest.mark.parametrize("suffix", sorted(_PLANTS))
@pytest.mark.parametrize("code", sorted(READERS))
def test_the_file_a_reader_opens_is_the_one_the_reading_names(
    code: str, suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ("nums" + suffix)).write_bytes(_PLANTS[suffix](_TEXT))
    monkeypatch.chdir(tmp_path)
    try:
        READERS[code]("nums")
    except Exception:  # noqa: BLE001 - it did not read that file: nothing to claim
        return
    reading = read_effects(CodeAction(code.format(p="nums")), tmp_path)
    assert "nums" + suffix in reading.names(Kind.READS), describe(reading)


def test_a_suffixed_variant_that_leads_outside_is_judged_outside(tmp_path: Path) -> None:
    """The reported case: ``nums.gz`` a link to a secret outside, no ``nums``."""
    outside = tmp_path / "backup.gz"
    outside.write_bytes(gzip.compress(b"secret"))
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(outside, work / "nums.gz")
    reading = read_effects(CodeAction("import numpy as np\nprint(np.loadtxt('nums', dtype=str))"), work)
    assert reading.effect_class not in ("computes", "reads", "in-folder"), describe(reading)
    assert str(outside) in reading.names(Kind.OUTSIDE)


def test_the_suffixes_are_numpys_own() -> None:
    openers = np.lib._datasource._file_openers
    openers._load()
    assert set(NUMPY_DATASOURCE.suffixes) == {k for k in openers.keys() if k}
