"""Work that changes where names lead, and work that outlives its cell, are never plain in-folder work (#42, F2).

A rename of a folder holding a relative symlink changes where every path through the link leads; code an
earlier cell left behind (a ``__del__``, a generator's ``finally``, a callback a library keeps) then writes
through the moved name with no reading of its own. So: a move of anything but a regular file reads as
"changes where paths lead" (``Kind.RELINKS``: no class allows it, and once it ran by hand the kernel is
widened), and a function of the cell that touches something and may run after the cell cannot be told.
The property test runs generated sequences of such cells for real in a temporary folder, each unasked only
when the reading (with the kernel's ledger) vouches for it, and an independent oracle checks that nothing
outside the folder changed.
"""

from __future__ import annotations

import contextlib
import gc
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, describe, read_effects
from freeact_tui.effects.ledger import KernelLedger
from freeact_tui.toolcalls import CodeAction

_FOLDER_CLASSES = ("computes", "reads", "in-folder")


def _layout(root: Path) -> tuple[Path, Path]:
    """``work/deep/x/y/lnk -> ../../outside`` leads inside (``work/deep/outside``), outside once ``y`` moves up."""
    base = root / "r1" / "r2"  # every relative target a generated link may have stays under ``root``
    work, outside = base / "work", base / "outside"
    (work / "deep" / "outside").mkdir(parents=True)
    (work / "deep" / "x" / "y").mkdir(parents=True)
    (work / "d1").mkdir()
    (work / "f.txt").write_text("a regular file\n")
    outside.mkdir()
    (outside / "keep.txt").write_text("outside\n")
    os.symlink("../../outside", work / "deep" / "x" / "y" / "lnk")
    os.symlink("f.txt", work / "flink")
    return work, outside


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return _layout(tmp_path)[0]


RELINKS = [
    ("import os\nos.rename('deep/x/y', 'y')", "deep/x/y"),  # a folder holding a relative link
    ("import os\nos.replace('deep/x', 'x')", "deep/x"),
    ("import shutil\nshutil.move('deep/x/y', 'd1')", "deep/x/y"),
    ("from os import rename\nrename('deep/x/y', 'y')", "deep/x/y"),  # the same move by its bare name
    ("from pathlib import Path\nPath('deep/x/y').rename('y')", "deep/x/y"),
    ("from pathlib import Path\nPath('deep/x/y/lnk').replace('lnk')", "deep/x/y/lnk"),  # a link itself
    ("import os\nos.rename('flink', 'd1/flink')", "flink"),  # a link to a regular file
    ("import os\nos.rename('not-there-yet', 'y')", "not-there-yet"),  # made by someone else before it runs
]


@pytest.mark.parametrize(("code", "moved"), RELINKS)
def test_a_move_of_a_folder_or_link_changes_where_paths_lead(code: str, moved: str, work: Path) -> None:
    found = read_effects(CodeAction(code), work)
    assert moved in found.names(Kind.RELINKS), describe(found)
    assert found.effect_class is None and f"changes where paths lead: {moved}" in describe(found)


@pytest.mark.parametrize(
    "code",
    [
        "import os\nos.rename('f.txt', 'g.txt')",
        "import shutil\nshutil.move('f.txt', 'd1')",
        "from pathlib import Path\nPath('f.txt').rename('g.txt')",
    ],
)
def test_a_move_of_a_regular_file_stays_in_the_folder(code: str, work: Path) -> None:
    found = read_effects(CodeAction(code), work)
    assert found.effect_class == "in-folder" and Kind.RELINKS not in found.kinds, describe(found)


@pytest.mark.parametrize(
    "code",
    [
        "import os\nos.symlink('..', 'up')",
        "from pathlib import Path\nPath('up').symlink_to('..')",
        "import os\nos.link('/etc/hosts', 'h')",
        "from pathlib import Path\nPath('h').hardlink_to('/etc/hosts')",
        "import shutil\nshutil.copytree('deep', 'copy', symlinks=True)",
        "import tarfile\ntarfile.open('a.tar').extractall()",
        "import zipfile\nzipfile.ZipFile('a.zip').extractall()",
    ],
)
def test_other_work_that_changes_where_names_lead_cannot_be_told(code: str, work: Path) -> None:
    found = read_effects(CodeAction(code), work)
    assert Kind.UNKNOWN in found.kinds, describe(found)


def test_after_a_move_approved_by_hand_no_later_cell_passes_as_in_folder(work: Path) -> None:
    ledger = KernelLedger(work)
    move = CodeAction("import os\nos.rename('deep/x/y', 'y')")
    assert ledger.read(move).effect_class is None  # asked
    ledger.ran(move, "c1")  # the user approved it
    ledger.finished("c1")
    later = ledger.read(CodeAction("x = 1"))
    assert later.effect_class is None and "earlier work" in describe(later)
    ledger.restarted()  # a reset forgets it
    assert ledger.read(CodeAction("x = 1")).effect_class == "computes"


OUTLIVES = [
    # Python calls these itself, in later cells too (``keep = None`` runs ``__del__``)
    "class Tidy:\n    def __del__(self):\n        open('y/lnk/.bash_logout', 'a').write('x')\nkeep = Tidy()",
    "class R:\n    def __repr__(self):\n        open('log.txt', 'a').write('x')\n        return 'r'\nr = R()",
    "class C:\n    def __exit__(self, *a):\n        open('log.txt', 'a').write('x')\nc = C()",
    "class E:\n    def __eq__(self, o):\n        open('log.txt', 'a').write('x')\n        return True\ne = E()",
    # a generator's body and ``finally`` run as it is resumed or collected
    "def g():\n    try:\n        yield 1\n    finally:\n        open('log.txt', 'a').write('x')\nit = g()\nnext(it)",
    "def g():\n    yield from [open('log.txt', 'a').write('x')]\nit = g()",
    "async def job():\n    open('log.txt', 'a').write('x')\nc = job()",
    # a library keeps an object whose methods it calls later (``np.seterrcall``)
    "import numpy as np\nclass Log:\n    def write(self, msg):\n        open('log.txt', 'a').write(msg)\n"
    "sink = Log()\nnp.seterr(all='log')\nnp.seterrcall(sink)",
    "import numpy as np\ndef hook(kind, flag):\n    open('log.txt', 'a').write(kind)\nnp.seterrcall(hook)",
    # the registrations of modules the reading does not list
    "import atexit\ndef bye():\n    open('log.txt', 'a').write('x')\natexit.register(bye)",
    "import weakref\nclass A:\n    pass\na = A()\nweakref.finalize(a, print, 'x')",
    "import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)",
    "import sys\nsys.settrace(None)",
    "import threading\nthreading.settrace(None)",
]


@pytest.mark.parametrize("code", OUTLIVES)
def test_work_that_outlives_its_cell_cannot_be_told(code: str, work: Path) -> None:
    found = read_effects(CodeAction(code), work)
    assert Kind.UNKNOWN in found.kinds, describe(found)


@pytest.mark.parametrize(
    "code",
    [
        "class Box:\n    def __init__(self):\n        self.n = 1\n    def __repr__(self):\n        return 'box'\nb = Box()",
        "def g():\n    yield 1\nprint(list(g()))",
        "class W:\n    def save(self):\n        open('out.txt', 'w').write('x')\nW().save()",
    ],
)
def test_work_that_ends_with_its_cell_is_still_read(code: str, work: Path) -> None:
    found = read_effects(CodeAction(code), work)
    assert found.effect_class in _FOLDER_CLASSES, describe(found)


# -- generated sequences of cells, run for real ------------------------------------------------------------

_MOVES = [
    ("deep/x/y", "y", "y/lnk/w.txt"),
    ("deep/x", "x", "x/y/lnk/w.txt"),
    ("deep/x/y/lnk", "lnk", "lnk/w.txt"),
    ("deep/x/y", "d1/y", "d1/y/lnk/w.txt"),
    ("f.txt", "g.txt", "g.txt"),
]
"""(source, destination, a path through the moved name): a folder holding the link, the link, a regular file."""
_TARGETS = ["..", "../outside", "deep", "../../outside", "d1"]


@st.composite
def _cells(draw: st.DrawFn) -> list[tuple[str, bool]]:
    """A sequence of cells about one move, each with whether the user would approve it by hand: the move,
    links made, writes through the moved name, work left to run later through it, what sets that work off."""
    src, dst, moved = draw(st.sampled_from(_MOVES))
    others = [f"{dst}/w.txt", f"{src}/lnk/w.txt", "up/w.txt"]
    through = draw(st.sampled_from([moved, moved, moved, *others]))  # mostly through the moved name
    how = draw(st.sampled_from(["rename", "replace"]))
    kinds = {
        "move": f"import os\nos.{how}({src!r}, {dst!r})",
        "link": f"import os\nos.symlink({draw(st.sampled_from(_TARGETS))!r}, 'up')",
        "write": f"f = open({through!r}, 'a')\nf.write('x')\nf.close()",
        "del": f"class Tidy:\n    def __del__(self):\n        open({through!r}, 'a').write('x')\nkeep = Tidy()",
        "gen": (
            f"def g():\n    try:\n        yield 1\n    finally:\n        open({through!r}, 'a').write('x')\n"
            "it = g()\nnext(it)"
        ),
        "trigger": draw(st.sampled_from(["keep = None", "it = None"])),
    }
    picked = draw(st.lists(st.sampled_from([*sorted(kinds), "del", "gen", "move"]), min_size=2, max_size=6))
    return [(kinds[k], draw(st.booleans())) for k in picked]


def _outside_state(root: Path, work: Path) -> dict[str, str]:
    """Every file and link outside ``work`` under ``root``, with its contents (links not followed)."""
    state: dict[str, str] = {}
    for top, dirs, files in os.walk(root):
        if Path(top) == work or work in Path(top).parents:
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if Path(top, d) != work]
        for name in files:
            path = Path(top, name)
            state[str(path)] = os.readlink(path) if path.is_symlink() else path.read_text()
    return state


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=_cells())
@example(  # the reported trace: work left behind, the folder of its link moved up, the work set off
    cells=[
        ("class Tidy:\n    def __del__(self):\n        open('y/lnk/w.txt', 'a').write('x')\nkeep = Tidy()", False),
        ("import os\nos.rename('deep/x/y', 'y')", True),
        ("keep = None", False),
    ]
)
def test_whatever_runs_unasked_never_writes_outside(
    cells: list[tuple[str, bool]], tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path_factory.mktemp("seq")
    work, _ = _layout(root)
    before = _outside_state(root, work)
    monkeypatch.chdir(work)
    ledger = KernelLedger(work)
    kernel: dict[str, object] = {}
    for n, (code, by_hand) in enumerate(cells):
        call = CodeAction(code)
        unasked = ledger.read(call).effect_class in _FOLDER_CLASSES
        # the user approves by hand only work that writes no file's contents (moves and links)
        if not unasked and not (by_hand and ("os.rename" in code or "os.replace" in code or "symlink" in code)):
            continue
        ledger.ran(call, f"c{n}")
        with contextlib.suppress(Exception):
            exec(compile(code, f"<cell {n}>", "exec"), kernel)  # noqa: S102 - the cell, as the kernel runs it
        ledger.finished(f"c{n}")
        assert _outside_state(root, work) == before, (cells[: n + 1], "ran unasked" if unasked else "by hand")
    for name in [n for n in kernel if n != "__builtins__"]:  # the kernel stops: what it held is collected
        del kernel[name]
    gc.collect()
    assert _outside_state(root, work) == before, cells
