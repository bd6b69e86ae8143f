"""The sandbox keeps the project's names read-only whether they exist or not (issue 39).

A real bubblewrap sandbox over a working directory that has none of them: sandboxed code tries to
create each one (as a directory and as a file) every way it can, and the host never sees one.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution.isolation.protect import ProtectedNames, app_code_paths
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project import paths, trust
from freeact_tui.project.paths import PROTECTED_NAMES
from tests.executor_checks import run

pytestmark = [pytest.mark.timeout(240)]
sandboxed = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

# Each attempt creates NAME (or something inside it) in one way; it prints WROTE when it worked.
ATTEMPTS = {
    "makedirs": "os.makedirs(os.path.join(NAME, 'sub'))",
    "mkdir": "os.mkdir(NAME)",
    "open-file": "open(NAME, 'w').write('x')",
    "open-inside": "open(os.path.join(NAME, 'config'), 'w').write('[core]\\n\\tfsmonitor = touch /tmp/x\\n')",
    "plant-module": "os.makedirs(os.path.join(NAME, 'generated'), exist_ok=True); "
    "open(os.path.join(NAME, 'generated', 'sitecustomize.py'), 'w').write('x')",
    "symlink-out": "os.symlink('/tmp', NAME)",
    "through-loop": "os.symlink('.', 'loop-' + NAME) if not os.path.lexists('loop-' + NAME) else None; "
    "os.makedirs(os.path.join('loop-' + NAME, NAME, 'x'))",
    "rename-dir": "os.makedirs('sib-' + NAME + '/inner', exist_ok=True); os.rename('sib-' + NAME, NAME)",
    "replace-file": "open('sibf-' + NAME, 'w').write('x'); os.replace('sibf-' + NAME, NAME)",
    "remove-first": "(os.rmdir if os.path.isdir(NAME) else os.remove)(NAME); os.mkdir(NAME)",
    "shell-mkdir": "get_ipython().system('mkdir -p ' + NAME + '/hooks'); assert os.path.isdir(NAME + '/hooks')",
    "shell-touch": "get_ipython().system('touch ' + NAME + '/config'); assert os.path.exists(NAME + '/config')",
}


def attempt_code(name: str, how: str) -> str:
    return (
        f"import os\nNAME = {name!r}\ntry:\n    {ATTEMPTS[how]}\n    print('WROTE')\n"
        "except (OSError, AssertionError) as e:\n    print('refused', type(e).__name__)\n"
    )


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def bare(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[KernelExecutor, Path]]:
    from freeact_tui.execution.isolation.sandbox import SandboxExecutor

    if (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get("CI"):
        pytest.skip("bwrap or socat not installed (Debian packages: bubblewrap, socat)")
    root = tmp_path_factory.mktemp("bare")
    work = root / "work"
    work.mkdir()
    (work / "README.txt").write_text("a folder with no project files\n")
    executor = SandboxExecutor(
        working_dir=work, images_dir=root / "images", kernel_venv_dir=root / "kernel-env"
    )
    await executor.start()
    yield executor, work
    await executor.stop()


@pytest.mark.parametrize("how", sorted(ATTEMPTS))
@sandboxed[0]
@sandboxed[1]
async def test_sandboxed_code_cannot_create_a_protected_name(
    bare: tuple[KernelExecutor, Path], how: str
) -> None:
    ex, work = bare
    for name in PROTECTED_NAMES:
        _, result = await run(ex, attempt_code(name, how))
        assert "WROTE" not in result.text and "refused" in result.text, (name, how, result.text)
        # On the host: at most the empty placeholder bubblewrap made as its mount point.
        path = work / name
        assert not path.is_symlink(), (name, how)
        empty = path.is_dir() and not any(path.iterdir()) or path.is_file() and path.stat().st_size == 0
        assert not path.exists() or empty, (name, how)


@sandboxed[0]
@sandboxed[1]
async def test_the_working_dir_stays_writable_and_nothing_is_left_after_stop(
    tmp_path: Path,
) -> None:
    from freeact_tui.execution.isolation.sandbox import SandboxExecutor

    if (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get("CI"):
        pytest.skip("bwrap or socat not installed (Debian packages: bubblewrap, socat)")
    work = tmp_path / "work"
    work.mkdir()
    ex = SandboxExecutor(
        working_dir=work, images_dir=tmp_path / "images", kernel_venv_dir=tmp_path / "kernel-env"
    )
    await ex.start()
    try:
        code = attempt_code(".git", "makedirs") + attempt_code(".freeact", "plant-module")
        _, result = await run(ex, code + "open('notes.txt', 'w').write('ok')\n")
        assert "WROTE" not in result.text and result.text.count("refused") == 2, result.text
        # Meanwhile the host sees empty directories, which are no project files (nothing to trust).
        assert trust.project_files(work) == []
        assert paths.find_freeact_project(work) is None  # nor a freeact project (.freeact's is a file)
    finally:
        await ex.stop()
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]


def test_placeholders_cover_every_protected_name_and_only_missing_ones(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / ".env")
    protected = ProtectedNames(tmp_path)
    try:
        options = protected.options()
        dests = options[2::3]
        assert dests[: len(PROTECTED_NAMES) - 1] == [
            str(tmp_path / n) for n in PROTECTED_NAMES if n != "AGENTS.md"
        ]  # a symlink is not mounted on (the mount would land on its target)
        # an existing name is bound onto itself; `.env` is a secret file too, so its last and only bind
        # (one per target: Docker refuses two) is an empty placeholder over it
        binds = dict(zip(options[2::3], options[1::3], strict=True))
        assert not binds[str(tmp_path / ".env")].startswith(str(tmp_path))
        assert options[2::3].count(str(tmp_path / ".env")) == 1
        assert sorted(p.name for p in protected.placeholders) == sorted(
            n for n in PROTECTED_NAMES if n not in (".env", "AGENTS.md")
        )
    finally:
        protected.cleanup()


def test_the_apps_own_code_inside_the_working_dir_is_read_only(tmp_path: Path) -> None:
    here = Path(sys.prefix).resolve()
    package = Path(__file__).resolve().parents[2] / "freeact_tui"
    for inside in (here.parent, package.parent):
        covered = app_code_paths(inside)
        for code in (here, package):
            assert not code.is_relative_to(inside) or any(code.is_relative_to(p) for p in covered), (
                code,
                covered,
            )
    assert app_code_paths(tmp_path) == []
