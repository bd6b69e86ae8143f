"""A real kernel imports a trusted project's generated code only as the app checked or wrote it.

The project's ``.freeact/generated`` is on no ``PYTHONPATH``: the kernel's start-up installs the app's finder
(``execution.kernel.code_finder``), which checks each file against the manifest the app keeps in its data
dir (``project.code_manifest``). A file swapped after the trust check (a ``git pull`` mid-session) is refused at
import with one line, a planted ``__pycache__/*.pyc`` is never loaded, a ``sitecustomize.py`` there never runs
at start-up, and the app's own regenerate step is accepted (``importlib.reload`` checks again).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution.base import ExecApproval, ExecResult
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project import trust, trusted
from tests.planted import plant_pyc

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

PLANTED = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\nVALUE = 'planted'\n"


@dataclass
class Project:
    folder: Path
    root: Path
    markers: Path
    executor: KernelExecutor

    def planted(self, name: str) -> str:
        return PLANTED.format(marker=str(self.markers / name))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def project(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Project]:
    base = tmp_path_factory.mktemp("genimport")
    folder, markers = base / "proj", base / "markers"
    root = folder / ".freeact" / "generated"
    markers.mkdir()
    for name in ("gen_ok", "gen_swap", "gen_pyc", "gen_regen"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text(f"VALUE = {name!r}\n")
    (root / "gen_ok" / "part.py").write_text("VALUE = 'part'\n")
    # Trusted with the folder, yet nothing of the root loads while the gateway or the kernel start.
    (root / "sitecustomize.py").write_text(PLANTED.format(marker=str(markers / "sitecustomize")))
    trust.trust(trust.check(folder))
    executor = KernelExecutor(working_dir=folder, images_dir=base / "images", generated_root=root)
    await executor.start()
    yield Project(folder, root, markers, executor)
    await executor.stop()
    trusted.forget(folder.resolve())


async def output(executor: KernelExecutor, code: str) -> str:
    async for item in executor.stream(code, timeout=60):
        if isinstance(item, ExecApproval):
            await item.reject()
        elif isinstance(item, ExecResult):
            return item.text or ""
    raise AssertionError("the stream ended without a result")


async def test_trusted_generated_code_imports_and_nothing_of_it_ran_at_start(project: Project) -> None:
    text = await output(
        project.executor, "import gen_ok, gen_ok.part\nprint(gen_ok.VALUE, gen_ok.part.VALUE)"
    )
    assert text.strip() == "gen_ok part"
    assert not (project.markers / "sitecustomize").exists()
    text = await output(project.executor, "import os, sys\nprint(os.environ.get('PYTHONPATH', ''), sys.path)")
    assert str(project.root) not in text


async def test_a_file_swapped_after_the_check_is_refused_at_import(project: Project) -> None:
    init = project.root / "gen_swap" / "__init__.py"
    init.write_text(project.planted("swap"))  # a `git pull` while the app runs
    text = await output(project.executor, "import gen_swap")
    assert "changed since the folder was trusted" in text
    assert ".freeact/generated/gen_swap/__init__.py" in text
    assert not (project.markers / "swap").exists()


async def test_a_planted_pyc_is_never_loaded(project: Project) -> None:
    plant_pyc(project.root / "gen_pyc" / "__init__.py", project.planted("pyc"))
    text = await output(project.executor, "import gen_pyc\nprint(gen_pyc.VALUE)")
    assert text.strip() == "gen_pyc"
    assert not (project.markers / "pyc").exists()


async def test_the_apps_own_regenerate_is_accepted_and_a_foreign_change_after_it_is_not(
    project: Project,
) -> None:
    assert (await output(project.executor, "import gen_regen\nprint(gen_regen.VALUE)")).strip() == "gen_regen"
    init = project.root / "gen_regen" / "__init__.py"
    init.write_text("VALUE = 'regenerated'\n")
    trust.note_own_writes([init])  # what the app's generate step does after writing a package
    reloaded = await output(project.executor, "import importlib\nprint(importlib.reload(gen_regen).VALUE)")
    assert reloaded.strip() == "regenerated"
    init.write_text(project.planted("regen"))
    os.utime(init)
    text = await output(project.executor, "importlib.reload(gen_regen)")
    assert "changed since the folder was trusted" in text
    assert not (project.markers / "regen").exists()
