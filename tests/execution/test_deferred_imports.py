"""Modules deferred at launch (``execution.deferred_imports``) behave as the real ones once used (issue #32).

Each check runs in a fresh interpreter: this process has the real modules loaded long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freeact_tui.execution.base import ExecResult
from freeact_tui.execution.deferred_imports import GATEWAY_SOURCE
from freeact_tui.execution.kernel.executor import KernelExecutor

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(180)


def _run(code: str, cwd: Path, *, path: str = str(ROOT)) -> object:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


_NAMES = """
import json, sys{defer}
from mcpygen import *
import mcpygen, rfc3987_syntax
names = sorted(n for n in globals() if not n.startswith('_'))
print(json.dumps([names, sorted(dir(mcpygen)), sorted(dir(rfc3987_syntax)), rfc3987_syntax.is_valid_syntax('iri', 'http://a.example/ä')]))
"""


def test_a_deferred_package_gives_every_name_the_real_one_gives(tmp_path: Path) -> None:
    defer = "\nimport freeact_tui.execution.deferred_imports as _d\n_d.defer_mcpygen_init(); _d.defer_rfc3987_syntax()"
    real = _run(_NAMES.format(defer=""), tmp_path)
    deferred = _run(_NAMES.format(defer=defer), tmp_path)
    assert deferred == real
    assert "generate_mcp_sources" in real[0]  # type: ignore[index]


def test_a_deferred_module_is_the_one_module_before_and_after_it_loads(tmp_path: Path) -> None:
    out = _run(
        "import importlib, importlib.util, json, sys\n"
        "from freeact_tui.execution.deferred_imports import defer_rfc3987_syntax\n"
        "defer_rfc3987_syntax()\n"
        "import jsonschema\n"
        "early = sys.modules['rfc3987_syntax']\n"
        "found = importlib.util.find_spec('rfc3987_syntax').origin.endswith('__init__.py')\n"
        "loaded_early = 'lark' in sys.modules\n"
        "ok = jsonschema.FormatChecker().conforms('http://exa mple.com/<>', 'iri')\n"
        "import rfc3987_syntax\n"
        "print(json.dumps([found, loaded_early, ok, rfc3987_syntax is early, 'lark' in sys.modules,"
        " importlib.reload(rfc3987_syntax) is early]))",
        tmp_path,
    )
    assert out == [True, False, False, True, True, True]


def test_a_package_that_fails_to_load_fails_at_each_use_until_it_loads(tmp_path: Path) -> None:
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import pathlib\n"
        "if (pathlib.Path(__file__).parent / 'broken').exists():\n"
        "    raise ImportError('lazypkg is broken')\n"
        "from lazypkg.part import value\n"
    )
    (package / "part.py").write_text("value = 42\n")
    (package / "broken").write_text("")
    out = _run(
        "import json, sys\n"
        "from pathlib import Path\n"
        "from freeact_tui.execution.deferred_imports import defer\n"
        "defer('lazypkg')\n"
        "import lazypkg\n"
        "errors = []\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        lazypkg.value\n"
        "    except ImportError as e:\n"
        "        errors.append(str(e))\n"
        "(Path.cwd() / 'lazypkg' / 'broken').unlink()\n"
        "print(json.dumps([errors, lazypkg.value, sys.modules['lazypkg'] is lazypkg]))",
        tmp_path,
        path=f"{tmp_path}{os.pathsep}{ROOT}",
    )
    assert out == [["lazypkg is broken", "lazypkg is broken"], 42, True]


_NOTEBOOK_CHECK = """
import json, sys
from kernel_gateway.gatewayapp import launch_instance
import nbformat
before = 'lark' in sys.modules
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1 + 1')])
nbformat.validate(nb)
nb.cells[0]['execution_count'] = 'x'
try:
    nbformat.validate(nb)
    bad = 'accepted'
except nbformat.ValidationError:
    bad = 'refused'
print(json.dumps([before, bad]))
"""


def test_the_gateway_boots_without_the_iri_grammar_and_still_validates_notebooks(tmp_path: Path) -> None:
    # As the gateway runs: nothing of this checkout on its path.
    out = _run(GATEWAY_SOURCE + _NOTEBOOK_CHECK, tmp_path, path="")
    assert out == [False, "refused"]


_KERNEL_CHECK = """
import json, sys
import mcpygen
early = 'mcpygen.apigen' in sys.modules
names = sorted(n for n in dir(mcpygen) if not n.startswith('_'))
from mcpygen import generate_mcp_sources
print(json.dumps([early, names, callable(generate_mcp_sources)]))
"""


@pytest.mark.kernel
async def test_user_code_in_a_warmed_up_kernel_sees_the_whole_mcpygen_package(tmp_path: Path) -> None:
    real = _run(
        "import json, mcpygen\nprint(json.dumps(sorted(n for n in dir(mcpygen) if not n.startswith('_'))))",
        tmp_path,
    )
    executor = KernelExecutor(working_dir=tmp_path, images_dir=tmp_path / "images")
    await executor.start()
    try:
        result = None
        async for item in executor.stream(_KERNEL_CHECK):  # waits for the warm-up
            if isinstance(item, ExecResult):
                result = item
        assert result is not None and not result.is_error, result
        early, names, generator = json.loads(result.text.strip().splitlines()[-1])
    finally:
        await executor.stop()
    assert early is False  # the warm-up left the API generator unloaded
    assert names == real
    assert generator is True
