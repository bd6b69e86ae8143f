"""A real kernel imports a trusted project's generated code only as the app checked or wrote it.

The project's ``.freeact/generated`` is on no ``PYTHONPATH``: the kernel's start-up installs the app's finder
(``execution.kernel.code_finder``), which checks each file against the manifest the app keeps in its data
dir (``project.code_manifest``). A file swapped after the trust check (a ``git pull`` mid-session) is refused at
import with one line, a planted ``__pycache__/*.pyc`` is never loaded, a ``sitecustomize.py`` there never runs
at start-up, and the app's own regenerate step is accepted (``importlib.reload`` checks again).
"""

from __future__ import annotations

import json
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

# The app serves only its own top-level packages of a generated root (``generated_layout.APP_PACKAGES``):
# the packages of these tests live in one of them.
PKG = "gentools"
PLANTED = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\nVALUE = 'planted'\n"


# A generated tree (module -> file; ``ns`` is a namespace package) and every way a file of it can change
# after the trust check: each (file, change) is one package of the project.
TREE = {
    "": "__init__.py",
    "mod_a": "mod_a.py",
    "sub": "sub/__init__.py",
    "sub.mod_b": "sub/mod_b.py",
    "ns.mod_c": "ns/mod_c.py",
}
CHANGES = ("changed", "removed", "symlink", "pyc", "added")
CASES = [(target, change) for target in TREE for change in CHANGES]


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
    (root / PKG).mkdir(parents=True)
    (root / PKG / "__init__.py").write_text("")
    for name in ("gen_ok", "gen_swap", "gen_pyc", "gen_regen"):
        (root / PKG / name).mkdir(parents=True)
        (root / PKG / name / "__init__.py").write_text(f"VALUE = {name!r}\n")
    (root / PKG / "gen_ok" / "part.py").write_text("VALUE = 'part'\n")
    for i, _case in enumerate(CASES):  # one package per case of the class test, trusted as it is
        for module, rel in TREE.items():
            (root / PKG / f"case{i}" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / PKG / f"case{i}" / rel).write_text(f"VALUE = {module or 'package'!r}\n")
    # Trusted too, yet none of the app's packages: never served as a top-level name.
    (root / "gen_foreign").mkdir()
    (root / "gen_foreign" / "__init__.py").write_text(PLANTED.format(marker=str(markers / "foreign")))
    (root / "gen_module.py").write_text(PLANTED.format(marker=str(markers / "module")))
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
        project.executor, f"import {PKG}.gen_ok as gen_ok, {PKG}.gen_ok.part\nprint(gen_ok.VALUE, gen_ok.part.VALUE)"
    )
    assert text.strip() == "gen_ok part"
    assert not (project.markers / "sitecustomize").exists()
    text = await output(project.executor, "import os, sys\nprint(os.environ.get('PYTHONPATH', ''), sys.path)")
    assert str(project.root) not in text


async def test_a_file_swapped_after_the_check_is_refused_at_import(project: Project) -> None:
    init = project.root / PKG / "gen_swap" / "__init__.py"
    init.write_text(project.planted("swap"))  # a `git pull` while the app runs
    text = await output(project.executor, f"import {PKG}.gen_swap")
    assert "changed since the folder was trusted" in text
    assert f".freeact/generated/{PKG}/gen_swap/__init__.py" in text
    assert not (project.markers / "swap").exists()


async def test_a_planted_pyc_is_never_loaded(project: Project) -> None:
    plant_pyc(project.root / PKG / "gen_pyc" / "__init__.py", project.planted("pyc"))
    text = await output(project.executor, f"import {PKG}.gen_pyc as gen_pyc\nprint(gen_pyc.VALUE)")
    assert text.strip() == "gen_pyc"
    assert not (project.markers / "pyc").exists()


async def test_the_apps_own_regenerate_is_accepted_and_a_foreign_change_after_it_is_not(
    project: Project,
) -> None:
    code = f"import {PKG}.gen_regen as gen_regen\nprint(gen_regen.VALUE)"
    assert (await output(project.executor, code)).strip() == "gen_regen"
    init = project.root / PKG / "gen_regen" / "__init__.py"
    init.write_text("VALUE = 'regenerated'\n")
    trust.note_own_writes([init])  # what the app's generate step does after writing a package
    reloaded = await output(project.executor, "import importlib\nprint(importlib.reload(gen_regen).VALUE)")
    assert reloaded.strip() == "regenerated"
    init.write_text(project.planted("regen"))
    os.utime(init)
    text = await output(project.executor, "importlib.reload(gen_regen)")
    assert "changed since the folder was trusted" in text
    assert not (project.markers / "regen").exists()


def expected(target: str, change: str, module: str) -> str:
    """What importing ``module`` of a package whose ``target`` file had ``change`` gives."""
    inside = target == "" or module == target or module.startswith(target + ".")
    if change in ("pyc", "added") or not inside:
        return f"ok:{module or 'package'}"
    if change == "removed" and TREE[target].endswith("__init__.py"):
        return "ok:None" if module == target else f"ok:{module}"  # a namespace package now
    return "refused"


async def test_every_file_of_a_tree_changed_after_the_check_is_refused_and_the_rest_imports(
    project: Project,
) -> None:
    """The class, exhaustively over (file, change): changed, removed, swapped for a link out of the folder,
    shadowed by a planted .pyc, or a file added next to it."""
    names: list[str] = []
    for i, (target, change) in enumerate(CASES):
        package = project.root / PKG / f"case{i}"
        path = package / TREE[target]
        if change == "changed":
            path.write_text(project.planted(f"case{i}"))
        elif change == "removed":
            path.unlink()
        elif change == "symlink":
            outside = project.markers.parent / f"outside{i}.py"
            outside.write_text(project.planted(f"case{i}"))
            path.unlink()
            path.symlink_to(outside)
        elif change == "pyc":
            plant_pyc(path, project.planted(f"case{i}"))
        else:
            path.with_name("added.py").write_text(project.planted(f"case{i}"))
            # The module a file added next to the target would be: its directory's package, then ``added``.
            names.append(".".join([PKG, f"case{i}", *Path(TREE[target]).parent.parts, "added"]))
        names += [f"{PKG}.case{i}.{m}" if m else f"{PKG}.case{i}" for m in sorted(TREE, key=len)]
    code = (
        "import importlib, json\n_r = {}\n"
        f"for _n in {names!r}:\n"
        "    try:\n"
        "        _r[_n] = 'ok:' + str(getattr(importlib.import_module(_n), 'VALUE', None))\n"
        "    except ImportError:\n"
        "        _r[_n] = 'refused'\n"
        "print(json.dumps(_r))"
    )
    seen = json.loads((await output(project.executor, code)).strip().splitlines()[-1])
    for i, (target, change) in enumerate(CASES):
        for module in TREE:
            name = f"{PKG}.case{i}.{module}" if module else f"{PKG}.case{i}"
            assert seen[name] == expected(target, change, module), (target, change, name)
        for name in [n for n in names if n.startswith(f"{PKG}.case{i}.") and n.endswith(".added")]:
            assert seen[name] == "refused", (target, change, name)
    assert sorted(p.name for p in project.markers.iterdir() if p.name.startswith("case")) == []


async def test_a_top_level_name_that_is_none_of_the_apps_packages_is_never_served(project: Project) -> None:
    """The root serves only the app's own packages (``generated_layout.APP_PACKAGES``): a trusted package or
    module of any other name there is never imported, so it cannot shadow an import the model writes."""
    code = (
        "import importlib, json\n_r = {}\n"
        "for _n in ('gen_foreign', 'gen_module'):\n"
        "    try:\n"
        "        importlib.import_module(_n)\n"
        "        _r[_n] = 'imported'\n"
        "    except ModuleNotFoundError:\n"
        "        _r[_n] = 'not found'\n"
        "print(json.dumps(_r))"
    )
    seen = json.loads((await output(project.executor, code)).strip().splitlines()[-1])
    assert seen == {"gen_foreign": "not found", "gen_module": "not found"}
    assert not (project.markers / "foreign").exists() and not (project.markers / "module").exists()
