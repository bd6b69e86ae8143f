"""The working folder is an import root for the cell's own code only, never for a library (#42, round 6).

The class of defect: "the working folder is an import root for libraries". ``plt.savefig('chart.pdf')``
read as "writes chart.pdf" and ran the folder's ``lxml.py``/``unicodedata2.py``/``uharfbuzz.py``: fontTools
imports them if they are there, and the folder was on the kernel's ``sys.path``. The mechanism
(``execution.kernel.folder_imports``): a finder that serves the folder's modules only to an import made
by a cell or a folder file. Real kernels; the planted modules only write a marker file.
"""

from __future__ import annotations

import itertools
import keyword
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, read_effects
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.toolcalls import CodeAction
from tests.executor_checks import run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300), pytest.mark.asyncio(loop_scope="module")]

OPTIONAL = ["lxml", "unicodedata2", "uharfbuzz", "brotli", "brotlicffi", "zopfli", "munkres", "cairocffi"]
"""Optional dependencies fontTools and matplotlib import when present (none installed in the test venv)."""


def _payload(work: Path, name: str) -> str:
    return f"import pathlib\npathlib.Path({str(work / ('RAN-' + name))!r}).write_text('ran')\nVALUE = {name!r}\n"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def folder_kernel(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[KernelExecutor, Path]]:
    root = tmp_path_factory.mktemp("folder-imports")
    work = root / "work"
    work.mkdir()
    for name in [*OPTIONAL, "helper"]:
        (work / f"{name}.py").write_text(_payload(work, name))
    (work / "chain.py").write_text("import helper\nVALUE = helper.VALUE + '!'\n")
    executor = KernelExecutor(working_dir=work, images_dir=root / "images")
    await executor.start()
    yield executor, work
    await executor.stop()


def _ran(work: Path) -> list[str]:
    found = sorted(p.name for p in work.glob("RAN-*"))
    for p in work.glob("RAN-*"):
        p.unlink()
    return found


async def test_a_pdf_save_imports_no_module_of_the_folder(folder_kernel: tuple[KernelExecutor, Path]) -> None:
    ex, work = folder_kernel
    cell = (
        "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\n"
        "plt.plot([1, 2]); plt.title('hello'); plt.savefig('chart.pdf'); plt.savefig('chart.eps')\nprint('saved')"
    )
    _, result = await run(ex, cell)
    assert not result.is_error and "saved" in result.text, result.text
    assert (work / "chart.pdf").exists()
    assert _ran(work) == []


async def test_a_library_naming_a_folder_module_finds_nothing(folder_kernel: tuple[KernelExecutor, Path]) -> None:
    ex, work = folder_kernel
    cell = (
        "import matplotlib\ntry:\n    matplotlib.use('module://helper')\nexcept ImportError as e:\n"
        "    print('refused', type(e).__name__)\nimport pkgutil\ntry:\n    pkgutil.resolve_name('helper')\n"
        "except ImportError as e:\n    print('refused', type(e).__name__)\n"
    )
    _, result = await run(ex, cell)
    assert result.text.split("\n") == ["refused ModuleNotFoundError"] * 2, result.text
    assert _ran(work) == []


async def test_the_cells_own_import_of_a_folder_module_still_works(folder_kernel: tuple[KernelExecutor, Path]) -> None:
    ex, work = folder_kernel
    code = "import helper, chain\nimport importlib\nprint(helper.VALUE, chain.VALUE, importlib.import_module('lxml').VALUE)"
    _, result = await run(ex, code)
    assert result.text == "helper helper! lxml", result.text
    assert _ran(work) == ["RAN-helper", "RAN-lxml"]
    # and the reading still says the cell runs the folder's code (it asks)
    assert Kind.UNKNOWN in read_effects(CodeAction("import helper"), work).kinds
    _, result = await run(ex, "%%time\nimport unicodedata2\nprint(unicodedata2.VALUE)")
    assert "unicodedata2" in result.text, result.text
    assert _ran(work) == ["RAN-unicodedata2"]
    _, result = await run(ex, "exec('import uharfbuzz')\nprint(uharfbuzz.VALUE)")
    assert result.text == "uharfbuzz", result.text
    assert _ran(work) == ["RAN-uharfbuzz"]


_FRESH = itertools.count()
_NAMES = st.from_regex(r"[a-z][a-z0-9_]{2,12}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n) and n not in ("helper", "chain", "test", "this", "antigravity")
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(st.sampled_from(OPTIONAL), _NAMES), package=st.booleans())
async def test_any_folder_module_is_found_by_the_cell_and_never_by_a_library(
    folder_kernel: tuple[KernelExecutor, Path], name: str, package: bool
) -> None:
    ex, work = folder_kernel
    # not installed, whatever was drawn, and new to the kernel (a module a cell imported stays in sys.modules)
    module = f"zz{next(_FRESH)}_{name}{'_pkg' if package else ''}"
    if package:
        (work / module).mkdir(exist_ok=True)
        (work / module / "__init__.py").write_text(_payload(work, module))
    else:
        (work / f"{module}.py").write_text(_payload(work, module))
    by_library = (
        f"import pkgutil, sys\ntry:\n    pkgutil.resolve_name({module!r})\n    print('found')\n"
        "except ImportError:\n    print('absent')\n"
        f"print(sys.modules.get({module!r}) is None)"
    )
    _, result = await run(ex, by_library)
    assert result.text == "absent\nTrue", result.text
    assert _ran(work) == []
    _, result = await run(ex, f"import {module}\nprint({module}.VALUE)")
    assert result.text == module, result.text
    assert _ran(work) == [f"RAN-{module}"]


async def test_an_rc_files_figure_hooks_import_no_folder_module(folder_kernel: tuple[KernelExecutor, Path]) -> None:
    """A shipped rc file's ``figure.hooks: hookmod:f`` is imported by matplotlib, not by the cell: refused."""
    ex, work = folder_kernel
    (work / "hookmod.py").write_text(_payload(work, "hookmod") + "def f(fig):\n    pass\n")
    (work / "shipped-rc.txt").write_text("figure.hooks: hookmod:f\n")
    cell = (
        "import matplotlib\nmatplotlib.rc_file('shipped-rc.txt')\nimport matplotlib.pyplot as plt\n"
        "try:\n    plt.figure()\nexcept ImportError as e:\n    print('refused', type(e).__name__)\n"
        "finally:\n    matplotlib.rc_file_defaults()"
    )
    _, result = await run(ex, cell)
    assert result.text == "refused ModuleNotFoundError", result.text
    assert _ran(work) == []
