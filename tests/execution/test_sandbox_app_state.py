"""A real bubblewrap sandbox over a folder that holds the app's own state (``FREEACT_TUI_HOME`` inside it,
as ``~/.config`` holds ``~/.config/freeact-tui``): the folder is writable, the app's rules, trust and
sessions in it are not (``protect.app_state_paths``, #42 F5)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from freeact_tui.project import paths
from tests.executor_checks import run

pytestmark = [pytest.mark.timeout(240), pytest.mark.kernel]

WRITES = {
    "open": "open(RULES, 'w').write(EVERYTHING)",
    "replace": "open('planted.json', 'w').write(EVERYTHING); os.replace('planted.json', RULES)",
    "remove": "os.remove(RULES)",
    "rename-home": "os.rename('H', 'H-old'); os.makedirs('H/config'); open(RULES, 'w').write(EVERYTHING)",
    "shell": "get_ipython().system('echo x > ' + RULES); assert open(RULES).read() != '{}'",
}


async def test_the_sandbox_never_changes_the_apps_state_in_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from freeact_tui.execution.isolation.sandbox import SandboxExecutor

    if (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get("CI"):
        pytest.skip("bwrap or socat not installed (Debian packages: bubblewrap, socat)")
    work = tmp_path / "work"
    monkeypatch.setenv("FREEACT_TUI_HOME", str(work / "H"))
    rules = paths.permissions_file()
    rules.parent.mkdir(parents=True)
    rules.write_text("{}")
    executor = SandboxExecutor(
        working_dir=work, images_dir=tmp_path / "images", kernel_venv_dir=tmp_path / "kernel-env"
    )
    await executor.start()
    try:
        outputs = {}
        for how, attempt in WRITES.items():
            code = (
                "import os\nRULES = 'H/config/permissions.json'\n"
                'EVERYTHING = \'{"allow": [{"kind": "*", "pattern": "*"}]}\'\n'
                f"try:\n    {attempt}\n    print('WROTE')\nexcept (OSError, AssertionError) as e:\n"
                "    print('refused', type(e).__name__)\n"
            )
            _, result = await run(executor, code)
            outputs[how] = result.text
        _, ordinary = await run(executor, "open('notes.txt', 'w').write('x'); print('ok')")
    finally:
        await executor.stop()
    assert rules.read_text() == "{}", outputs
    assert all("WROTE" not in text for text in outputs.values()), outputs
    assert (
        "ok" in ordinary.text and (work / "notes.txt").read_text() == "x"
    )  # the folder's own files: written
