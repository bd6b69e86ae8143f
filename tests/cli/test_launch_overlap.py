"""The local kernel is created while the tool server's modules (mcpygen, mcp, uvicorn) import (issue #32).

Each check runs in a fresh interpreter: the test process has those modules loaded long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, tmp_path: Path, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "FREEACT_TUI_HOME": str(tmp_path / "home"), **env},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_kernel_executor_loads_without_the_tool_server_stack(tmp_path: Path) -> None:
    out = _run(
        "import sys, freeact_tui.execution.kernel.executor\n"
        "print(sorted(m for m in ('mcpygen', 'mcp', 'ipybox', 'uvicorn') if m in sys.modules))",
        tmp_path,
    )
    assert out.strip() == "[]"


def test_init_code_is_ipyboxs_built_without_importing_ipybox(tmp_path: Path) -> None:
    out = _run(
        "import json, sys\n"
        "from pathlib import Path\n"
        "from freeact_tui.execution.kernel.init_code import kernel_init_code\n"
        "args = dict(working_dir=Path('/w'), approve_shell_cmds=True, require_shell_escape=True,"
        " host='u:t@127.0.0.1', port=4321)\n"
        "early = kernel_init_code(**args)\n"
        "loaded = sorted(m for m in ('ipybox', 'mcpygen') if m in sys.modules)\n"
        "import ipybox.kernel_mgr.init\n"
        "print(json.dumps([loaded, early == kernel_init_code(**args), \"'u:t@127.0.0.1'\" in early]))",
        tmp_path,
    )
    assert json.loads(out) == [[], True, True]


def test_jsonschema_checks_iris_with_rfc3987_syntax_loaded_on_first_use(tmp_path: Path) -> None:
    out = _run(
        "import json, sys\n"
        "from freeact_tui.execution.deferred_imports import defer_rfc3987_syntax\n"
        "defer_rfc3987_syntax()\n"
        "import jsonschema, mcp\n"
        "before = 'lark' in sys.modules\n"
        "fc = jsonschema.FormatChecker()\n"
        "checks = [fc.conforms('http://example.com/\\u00e4', 'iri'), fc.conforms('http://exa mple.com/<>', 'iri')]\n"
        "print(json.dumps([before, checks, 'lark' in sys.modules]))",
        tmp_path,
    )
    assert json.loads(out) == [False, [True, False], True]


def test_the_tool_server_imports_without_mcpygens_api_generator_which_loads_when_asked_for(
    tmp_path: Path,
) -> None:
    out = _run(
        "import json, sys\n"
        "from freeact_tui.execution.tools.link import import_tool_server\n"
        "import_tool_server()\n"
        "from freeact_tui.execution.tools.server import KernelToolServer\n"
        "before = [m in sys.modules for m in ('mcpygen.apigen', 'datamodel_code_generator')]\n"
        "from mcpygen import ApprovalRequest, generate_mcp_sources\n"
        "import mcpygen\n"
        "print(json.dumps([before, callable(generate_mcp_sources), 'mcpygen.apigen' in sys.modules,"
        " mcpygen.ToolServer is KernelToolServer.__mro__[1]]))",
        tmp_path,
    )
    assert json.loads(out) == [[False, False], True, True, True]


_START = """
import asyncio, json, sys
from pathlib import Path
from freeact_tui.execution.kernel.executor import KernelExecutor

async def main():
    work = Path.cwd() / "work"
    work.mkdir()
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    try:
        items = []
        async for item in ex.stream("!echo approved-$((40 + 2))"):
            if type(item).__name__ == "ExecApproval":
                await item.accept()
            items.append(item)
        print(json.dumps([items[-1].text, ex.state]))
    finally:
        await ex.stop()

asyncio.run(main())
"""


def test_the_kernel_is_created_while_the_tool_server_imports_and_approvals_reach_it(tmp_path: Path) -> None:
    timeline = tmp_path / "timeline"
    out = _run(_START, tmp_path, FREEACT_TUI_TIMELINE=str(timeline))
    text, state = json.loads(out.strip().splitlines()[-1])
    assert "approved-42" in text  # the approval went through the server started on the early socket
    assert state == "ready"
    marks = {}
    for line in timeline.read_text().splitlines():
        stage, at = line.split()
        marks.setdefault(stage, float(at))
    # The gateway was asked for while the tool server's modules were still importing; ready once the
    # kernel runs code (the tool server may come up after that: the approval above still reached it).
    assert marks["tool_server:start"] <= marks["gateway_spawn:start"] < marks["tool_server:end"]
    assert marks["kernel:ready"] >= marks["kernel:created"]
