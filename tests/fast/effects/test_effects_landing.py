"""Where a writer's path really lands (#42 F1–F3): the reading judges every name the library writes.

The class: a writer whose file written is not the name it is given — an extension appended
(``np.save('data')`` writes ``data.npy``, ``plt.savefig('fig')`` writes ``fig.png``), a destination that
is a folder (``shutil.copy(src, 'out')`` writes ``out/<name of src>``), or folders above the name
(``os.removedirs`` removes each empty one it names, up to the root of the disk). The mechanism: every
writer in the table says how it lands (``known.Touch.lands``, ``effects.landing``), and the test below
calls each REAL writer in a temporary folder, with generated names, and checks that every file it wrote
(or removed) is one the reading claimed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, known, read_effects
from freeact_tui.effects.landing import MATPLOTLIB_FORMATS
from freeact_tui.toolcalls import CodeAction

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402 - after the backend is chosen

_FILES = (Kind.READS, Kind.WRITES, Kind.CONTROLS, Kind.ENVIRONMENT)


def claimed(code: str, root: str) -> set[str]:
    """Every path the reading says the cell touches, absolute and real."""
    reading = read_effects(CodeAction(code), Path(root))
    assert reading.effect_class is not None or all(f.kind != Kind.UNKNOWN for f in reading.found), reading
    out: set[str] = set()
    for found in reading.found:
        if found.kind in _FILES:
            out.add(os.path.realpath(os.path.join(root, found.what)))
        elif found.kind == Kind.OUTSIDE:
            out.add(os.path.realpath(found.what))
    return out


def _figure(path: str) -> None:
    fig = plt.figure()
    try:
        plt.savefig(path)
    finally:
        plt.close(fig)


def _fig_method(path: str) -> None:
    fig = plt.figure()
    try:
        fig.savefig(path)
    finally:
        plt.close(fig)


# the dotted name of each writer in the table → (the cell, the real call on an absolute path)
WRITERS: dict[str, tuple[str, Callable[[str], object]]] = {
    "numpy.save": ("import numpy as np\nnp.save({p!r}, np.zeros(2))", lambda p: np.save(p, np.zeros(2))),
    "numpy.savez": ("import numpy as np\nnp.savez({p!r}, np.zeros(2))", lambda p: np.savez(p, np.zeros(2))),
    "numpy.savez_compressed": (
        "import numpy as np\nnp.savez_compressed({p!r}, np.zeros(2))",
        lambda p: np.savez_compressed(p, np.zeros(2)),
    ),
    "numpy.savetxt": ("import numpy as np\nnp.savetxt({p!r}, np.zeros(2))", lambda p: np.savetxt(p, np.zeros(2))),
    "matplotlib.pyplot.savefig": ("import matplotlib.pyplot as plt\nplt.savefig({p!r})", _figure),
    "matplotlib.pyplot.imsave": (
        "import numpy as np\nimport matplotlib.pyplot as plt\nplt.imsave({p!r}, np.zeros((2, 2)))",
        lambda p: plt.imsave(p, np.zeros((2, 2))),
    ),
    ".savefig()": ("import matplotlib.pyplot as plt\nfig = plt.figure()\nfig.savefig({p!r})", _fig_method),
    ".to_csv()": (
        "import pandas as pd\ndf = pd.DataFrame({{'a': [1]}})\ndf.to_csv({p!r})",
        lambda p: pd.DataFrame({"a": [1]}).to_csv(p),
    ),
    "builtins.open": ("open({p!r}, 'w').write('x')", lambda p: Path(p).write_text("x")),
}

NAMES = st.builds(
    lambda folder, base, ext: folder + base + ext,
    st.sampled_from(["", "sub/", "./"]),
    st.text(alphabet="abxyz", min_size=1, max_size=4),
    st.sampled_from(["", ".", ".npy", ".npz", ".png", ".txt", ".pdf", ".npy.txt", ".svg", ".csv"]),
)


def _new_files(root: str) -> set[str]:
    return {os.path.realpath(os.path.join(top, f)) for top, _, files in os.walk(root) for f in files}


@settings(max_examples=120, deadline=None)
@given(writer=st.sampled_from(sorted(WRITERS)), name=NAMES)
def test_every_file_a_real_writer_writes_is_one_the_reading_claims(writer: str, name: str) -> None:
    cell, real = WRITERS[writer]
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(tmp)
        os.mkdir(os.path.join(root, "sub"))
        claims = claimed(cell.format(p=name), root)
        with warnings.catch_warnings(), contextlib.suppress(Exception):
            warnings.simplefilter("ignore")
            real(os.path.join(root, name))
        written = _new_files(root)
        assert written <= claims, (writer, name, written - claims)


# the file movers: source, and a destination that is a folder or not
MOVERS: dict[str, Callable[[str, str], object]] = {
    "shutil.copy": shutil.copy,
    "shutil.copy2": shutil.copy2,
    "shutil.copyfile": shutil.copyfile,
    "shutil.move": shutil.move,
    "os.rename": os.rename,
    "os.replace": os.replace,
}


@settings(max_examples=80, deadline=None)
@given(
    mover=st.sampled_from(sorted(MOVERS)),
    source=st.sampled_from(["notes.txt", "tpl/notes.txt", "./notes.txt"]),
    destination=st.sampled_from(["out", "out/", "tpl/../out", "new.txt", "out/x.txt", "."]),
)
def test_every_file_a_real_copy_or_move_writes_is_one_the_reading_claims(
    mover: str, source: str, destination: str
) -> None:
    module, function = mover.split(".")
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(tmp)
        for folder in ("out", "tpl"):
            os.mkdir(os.path.join(root, folder))
        Path(root, source).write_text("x")
        before = _new_files(root)
        claims = claimed(f"import {module}\n{module}.{function}({source!r}, {destination!r})", root)
        with contextlib.suppress(OSError, shutil.Error):
            MOVERS[mover](os.path.join(root, source), os.path.join(root, destination))
        written = _new_files(root) - before
        assert written <= claims, (mover, source, destination, written - claims)


def test_every_writer_of_the_table_is_checked_against_the_real_library() -> None:
    """A writer added to the table without a real-library case above fails here."""
    files = {
        f"{module}.{name}"
        for module, rule in known.MODULES.items()
        for name, touch in (rule.touches or {}).items()
        if touch.writes
    }
    folders = {"os.makedirs", "os.mkdir", "os.remove", "os.unlink", "os.rmdir", "os.removedirs", "shutil.rmtree"}
    logs = {"logging.basicConfig"}
    assert files - folders - logs <= set(WRITERS) | set(MOVERS), files - folders - logs - set(WRITERS) - set(MOVERS)
    assert {f".{m}()" for m in ("savefig", "to_csv")} <= set(WRITERS)


def test_matplotlib_formats_are_all_it_may_append() -> None:
    canvas = plt.figure().canvas
    assert set(canvas.get_supported_filetypes()) <= set(MATPLOTLIB_FORMATS)
    assert matplotlib.rcParams["savefig.format"] in MATPLOTLIB_FORMATS


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_removedirs_reaches_every_folder_it_removes_and_the_folder_itself(depth: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.realpath(tmp)
        Path(base, "keep").write_text("x")  # the removal stops here
        root = os.path.join(base, "project")
        leaf = os.path.join(root, *["d"] * depth)
        os.makedirs(leaf)
        folders = {os.path.join(root, *["d"] * k) for k in range(depth + 1)}
        for form in (leaf, os.path.relpath(leaf, root)):
            claims = claimed(f"import os\nos.removedirs({form!r})", root)
            reading = read_effects(CodeAction(f"import os\nos.removedirs({form!r})"), Path(root))
            if os.path.isabs(form):
                assert folders <= claims
                assert reading.effect_class == "outside"
        os.removedirs(leaf)
        assert not os.path.exists(root)  # the working folder went too: never in-folder work


# the reported cases (#42 F1–F3), with their symlinks and protected names
REPORTED = [
    ("import numpy as np\nnp.save('data', np.frombuffer(b'x', dtype=np.uint8))", "data.npy"),
    ("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('fig')", "fig.png"),
    ("import numpy as np\nnp.savez('arch', np.zeros(2))", "arch.npz"),
    ("import shutil\nshutil.copy('notes.txt', 'out')", "out/notes.txt"),
    ("import shutil\nshutil.copy2('notes.txt', 'tpl/../out')", "out/notes.txt"),
]


@pytest.mark.parametrize(("cell", "link"), REPORTED)
def test_a_landed_name_that_leads_outside_is_outside(tmp_path: Path, cell: str, link: str) -> None:
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    (root / "tpl").mkdir()
    (root / "notes.txt").write_text("x")
    (root / link).symlink_to(tmp_path / "outside")
    assert read_effects(CodeAction(cell), root).effect_class == "outside"
    assert read_effects(CodeAction(f"%%time\n{cell}"), root).effect_class != "in-folder"


@pytest.mark.parametrize("name", ["AGENTS.md", ".freeact-tui.toml", "conftest.py"])
@pytest.mark.parametrize("function", ["copy", "copy2", "move"])
def test_a_copy_into_the_folder_that_plants_a_protected_name_is_not_in_folder(
    tmp_path: Path, name: str, function: str
) -> None:
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / name).write_text("x")
    for destination in (".", "./", "tpl/../"):
        cell = f"import shutil\nshutil.{function}('tpl/{name}', {destination!r})"
        assert read_effects(CodeAction(cell), tmp_path).effect_class != "in-folder", cell


@pytest.mark.parametrize(
    "cell",
    [
        "import shutil\nshutil.rmtree('.')",
        "import os\nos.rmdir('.')",
        "from pathlib import Path\nPath('.').rmdir()",
        "import os\nos.removedirs('{root}/empty')",
    ],
)
def test_the_working_folder_itself_is_never_in_folder_work(tmp_path: Path, cell: str) -> None:
    (tmp_path / "empty").mkdir()
    reading = read_effects(CodeAction(cell.format(root=tmp_path)), tmp_path)
    assert reading.effect_class not in ("in-folder", "reads", "computes"), reading


@pytest.mark.parametrize(
    ("cell", "link"),
    [
        ("import numpy as np\nnp.save('data', np.zeros(2))", "data.npy"),
        ("import matplotlib.pyplot as plt\nplt.savefig('fig')", "fig.png"),
        ("import shutil\nshutil.copy('notes.txt', 'out')", "out/notes.txt"),
    ],
)
def test_a_landed_name_linked_to_a_git_hook_is_a_protected_write(tmp_path: Path, cell: str, link: str) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / link).symlink_to(tmp_path / ".git" / "hooks" / "pre-commit")
    reading = read_effects(CodeAction(cell), tmp_path)
    assert Kind.CONTROLS in reading.kinds and reading.effect_class is None, reading
