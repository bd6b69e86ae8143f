"""The kernel starts without importing debugpy (ipykernel loads it for Jupyter's debugger only, a tenth
of the kernel's start); a cell can still import it; an environment an older version built gets the
current kernel spec with its installed packages kept. A real kernel."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.kernel.venv import KERNEL_NAME, ensure_kernel_venv, kernel_spec
from tests.executor_checks import run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    root = tmp_path_factory.mktemp("launcher")
    (root / "work").mkdir()
    executor = KernelExecutor(
        working_dir=root / "work", images_dir=root / "images", kernel_venv_dir=root / "env"
    )
    await executor.start()
    yield executor
    await executor.stop()


async def test_the_kernel_started_without_debugpy_and_a_cell_can_import_it(ex: KernelExecutor) -> None:
    _, result = await run(
        ex,
        "import sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('debugpy', '_pydevd_bundle')))",
    )
    assert result.text == "[]", result.text
    _, result = await run(ex, "import debugpy\nprint(debugpy.__name__)")
    assert not result.is_error and result.text == "debugpy", result.text


async def test_an_older_spec_is_replaced_and_the_environment_kept(tmp_path: Path) -> None:
    venv = ensure_kernel_venv(tmp_path / "env")
    spec_file = venv.jupyter_dir / "kernels" / KERNEL_NAME / "kernel.json"
    old = {
        **kernel_spec(venv.python),
        "argv": [str(venv.python), "-P", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
    }
    spec_file.write_text(json.dumps(old))
    installed = venv.root / "lib" / "kept.txt"  # stands for a package installed into it
    installed.write_text("x")
    assert ensure_kernel_venv(tmp_path / "env") == venv
    assert json.loads(spec_file.read_text()) == kernel_spec(venv.python)
    assert installed.read_text() == "x"
