"""The kernel's pip (issue 30): `!pip`, `%pip` and `python -m pip` install where the kernel imports
from, never into the app's environment. A real kernel; wheels built here (no network)."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import sys
import time
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from freeact_tui.execution.base import ExecApproval
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.kernel.venv import app_site_dirs, ensure_kernel_venv
from freeact_tui.toolcalls import ShellAction, ShellScript, installs_packages
from tests.executor_checks import run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]


def build_wheel(dist: Path, name: str, value: int) -> Path:
    """A minimal pure-Python wheel of package ``name`` whose ``VALUE`` is ``value``."""
    files = {
        f"{name}/__init__.py": f"VALUE = {value}\n",
        f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{name}-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{name}-1.0.dist-info/RECORD,,")
    files[f"{name}-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
    dist.mkdir(parents=True, exist_ok=True)
    wheel = dist / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ex(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    root = tmp_path_factory.mktemp("pip")
    work = root / "work"
    work.mkdir()
    executor = KernelExecutor(
        working_dir=work, images_dir=root / "images", kernel_venv_dir=root / "kernel-env"
    )
    await executor.start()
    yield executor
    await executor.stop()


def not_in_app(name: str) -> bool:
    return importlib.util.find_spec(name) is None and not any(
        (Path(d) / name).exists() for d in app_site_dirs()
    )


async def install(ex: KernelExecutor, code: str) -> tuple[list[ExecApproval], str]:
    items, result = await run(ex, code, limit=120)
    assert not result.is_error, result.text
    return [i for i in items if isinstance(i, ExecApproval)], result.text


async def test_bang_pip_installs_where_the_kernel_imports_from(ex: KernelExecutor) -> None:
    wheel = build_wheel(ex.working_dir / "dist", "freeact_probe_bang", 7)
    asked, text = await install(ex, "!pip install --no-index --no-deps ./dist/" + wheel.name)
    assert "Successfully installed freeact_probe_bang" in text.replace("-", "_"), text
    assert [a.command for a in asked] == [f"pip install --no-index --no-deps ./dist/{wheel.name}"]
    assert ShellAction(asked[0].command).installs_packages
    _, result = await run(ex, "import freeact_probe_bang\nprint(freeact_probe_bang.VALUE)")
    assert result.text == "7", result.text
    assert not_in_app("freeact_probe_bang")


async def test_percent_pip_and_python_m_pip_install_there_too(ex: KernelExecutor) -> None:
    first = build_wheel(ex.working_dir / "dist", "freeact_probe_magic", 8)
    second = build_wheel(ex.working_dir / "dist", "freeact_probe_module", 9)
    asked, _ = await install(ex, f"%pip install --no-index --no-deps ./dist/{first.name}")
    # %pip runs `<sys.executable> -m pip`: asked as a shell command that installs packages.
    assert len(asked) == 1 and installs_packages(asked[0].command), asked
    asked, _ = await install(ex, f"!python -m pip install --no-index --no-deps ./dist/{second.name}")
    assert installs_packages(asked[0].command)
    _, result = await run(
        ex,
        "import freeact_probe_magic, freeact_probe_module\n"
        "print(freeact_probe_magic.VALUE + freeact_probe_module.VALUE)",
    )
    assert result.text == "17", result.text
    assert not_in_app("freeact_probe_magic") and not_in_app("freeact_probe_module")


async def test_the_kernel_runs_from_its_environment(ex: KernelExecutor) -> None:
    venv = ensure_kernel_venv(ex.kernel_venv_dir)
    _, result = await run(
        ex, "import sys, shutil\nprint(sys.executable)\nprint(shutil.which('pip'))\nprint(sys.prefix)"
    )
    assert result.text.splitlines() == [str(venv.python), str(venv.bin_dir / "pip"), str(venv.root)]
    # The app's packages are all there (the kernel itself runs on them).
    _, result = await run(ex, "import ipykernel, mcpygen\nprint(ipykernel.__file__.startswith(sys.prefix))")
    assert result.text == "False"
    # Nothing of the app's is removed through it.
    _, result = await run(ex, "!pip uninstall -y mcpygen", limit=60)
    assert importlib.util.find_spec("mcpygen") is not None
    assert "outside environment" in result.text, result.text


async def test_the_environment_is_made_fast_and_once(tmp_path: Path) -> None:
    started = time.monotonic()
    venv = ensure_kernel_venv(tmp_path / "kernel-env")
    made = time.monotonic() - started
    started = time.monotonic()
    assert ensure_kernel_venv(tmp_path / "kernel-env") == venv
    again = time.monotonic() - started
    assert made < 5 and again < 0.1, (made, again)
    assert oct((tmp_path / "kernel-env").stat().st_mode & 0o777) == "0o700"
    assert venv.python.exists() and str(venv.root).startswith(str(tmp_path))


async def test_installs_are_recognised() -> None:
    rows = {
        "pip install pandas": True,
        "pip3 install -q pandas numpy": True,
        f"{sys.executable} -m pip install ./dist/x.whl": True,
        "uv pip install x": True,
        "PIP_INDEX_URL=http://x pip install y": True,
        "pip -q install y": True,
        "pip list": False,
        "pip show pandas": False,
        "pipx install x": False,
        "echo pip install x": False,
    }
    assert {c: installs_packages(c) for c in rows} == rows
    assert ShellScript("cd x\npip install y\n").installs_packages
    assert not ShellScript("ls\n").installs_packages
