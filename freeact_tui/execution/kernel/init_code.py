"""Code run inside the kernel: ipybox's init code made safe for IPython 9, and the warm-up.

What the app does not rely on: ipybox's shell-escape guard (``require_shell_escape``: ``subprocess``,
``os.system``, ``os.exec*``, ``pty.spawn`` raise unless a ``!cmd`` or ``%%bash`` asked first). It is a
speed bump against code that forgets ``!``, not a boundary: its state lives in the kernel's own globals
(``_ipybox_magic_allowed`` is an Event any cell can ``set()``, ``_ipybox_shell_allowed`` a ContextVar any
cell can set), and upstream deletes ``_ipybox_orig_os_system`` which its own ``os.system`` wrapper then
looks up. No decision of the app counts on it. What the app relies on instead:

- every code action is decided before it runs, from what the effects reader makes of its text
  (``freeact_tui.effects``, from the text alone): programs (``subprocess``, ``os.system``, ``pty``,
  ``!cmd``…) are an effect only a rule that allows programs (or sandboxed-auto) lets run, whether or not
  the guard was disarmed before, and a cell that touches the guard's names (or
  ``globals()``, ``get_ipython()``, a name from an earlier cell) cannot be told, so it is asked (but in
  sandboxed-auto);
- after any cell the reading cannot follow has run, no later reading of that kernel is trusted
  (``effects.ledger``: each reads as "cannot tell" until the kernel starts again), so a guard flipped by
  an approved cell never makes later cells pass as in-folder work;
- an allow rule for all code (``code:*``, ``--allow code:*``) is called broad wherever it is offered:
  it allows whatever the code does, programs included, guard or not;
- in sandboxed-auto, the sandbox (``execution.isolation.sandbox``: no network, the host read-only, a
  home of its own, no secret files, no key of the app in any environment) keeps what runs unasked in;
- each ``!cmd`` asks through the tool server (the approval handler below), and the permission rules
  judge the command itself.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.deferred_imports import DEFER_SOURCE
from freeact_tui.execution.kernel import code_finder
from freeact_tui.execution.kernel.folder_imports import folder_imports_code
from freeact_tui.gitrun import KERNEL_SETTINGS
from freeact_tui.project.generated_layout import APP_PACKAGES
from freeact_tui.shell.programs import NO_EXT_DIFF

# Written to stdout right before each `!cmd` approval request: approvals travel on another channel
# than output, and the marker tells where in the output the request was made.
SYNC_MARK = "\x00freeact:approval\x00"

# IPython 9 keeps unloaded magics as LazyMagic proxies that look themselves up again by name, so
# ipybox's %%bash wrapper would call itself forever; load them before ipybox wraps them.
_RESOLVE_SCRIPT_MAGICS = """\
for _m in ('bash', 'sh'):
    _m = get_ipython().magics_manager.magics['cell'].get(_m)
    if hasattr(_m, '_resolve'):
        _m._resolve()
del _m
"""

# ipybox's guard raises RuntimeError on subprocess use; libraries that probe with a subprocess and
# fall back on OSError (matplotlib's font cache runs `fc-list`) would fail. Raise something that
# is both, so they fall back and user code catching RuntimeError still works.
_GUARD_ERROR = """\
class ShellEscapeError(PermissionError, RuntimeError):
    pass
"""

# ipybox imports mcpygen at the first `!cmd`; the package __init__ pulls in the MCP SDK and code
# generators (~2.5 s). Load only the approval client under a deferred `mcpygen` package (the rest
# loads on the first name or dir() asked of it, as the app defers it: user code sees the whole
# package) and mark each approval request in the output (SYNC_MARK).
# A rejected `!cmd` or tool call ends the cell with one line, not an IPython traceback.
WARM_UP_CODE = (
    DEFER_SOURCE
    + f"""\
def _ipybox_warm_up():
    import sys
    if 'mcpygen' not in sys.modules:
        _freeact_defer('mcpygen')
        try:
            from mcpygen.tool_exec.approval.client import ApprovalRequestor
        except BaseException:
            del sys.modules['mcpygen']
            raise
        sys.modules['mcpygen'].ApprovalRequestor = ApprovalRequestor
    from mcpygen import ApprovalRequestor
    if not getattr(ApprovalRequestor.request_sync, '_freeact_sync', False):
        def request_sync(self, *args, _orig=ApprovalRequestor.request_sync, **kwargs):
            sys.stdout.write({SYNC_MARK!r})
            sys.stdout.flush()
            return _orig(self, *args, **kwargs)
        request_sync._freeact_sync = True
        ApprovalRequestor.request_sync = request_sync
    from mcpygen.tool_exec.client import ApprovalRejectedError
    def _rejected(shell, etype, value, tb, tb_offset=None):
        shell._showtraceback(etype, value, ['rejected: the cell stopped here (ApprovalRejectedError)'])
    get_ipython().set_custom_exc((ApprovalRejectedError,), _rejected)
_ipybox_warm_up()
del _ipybox_warm_up, _freeact_defer
"""
)


# ipybox asks about `!cmd` with only `{name}` filled in, then IPython runs it with `$name` and `{expr}`
# expanded: the user approved `echo $x` and `echo ; touch X` ran. Expand once, exactly as IPython
# would (the caller's locals too), ask about that text, and run it without a second expansion.
_ASK_EXPANDED = f"""\
_sh = _run.__self__
_cmd = _sh.var_expand(cmd, depth=1)
import re as _re
_cmd = _re.sub({NO_EXT_DIFF!r}, r'\\1git\\2diff --no-ext-diff', _cmd, flags=_re.M)"""
# A cell that changed directory (``os.chdir``, ``%cd``) runs its commands there, and the rules judge
# relative paths and the git repository from the working dir: ask about the command as it runs, with
# the directory it runs in (a ``cd`` no rule allows by default).
_ASK_IN_CWD = """\
try:
    _here = __import__('os').getcwd()
except OSError:
    _here = {working_dir!r}
if _here != {working_dir!r}:
    _cmd = 'cd ' + __import__('shlex').quote(_here) + ' && ' + _cmd"""
_RUN_EXPANDED = """\
_sh.var_expand = lambda _c, depth=0, formatter=None: _c
try:
    return _run(_cmd)
finally:
    _sh.__dict__.pop('var_expand', None)"""

# Git settings above a repository's own config, for every git the kernel runs (see gitrun.KERNEL_SETTINGS).
_GIT_ENV = f"""\
import os as _os
_n = _os.environ.get('GIT_CONFIG_COUNT', '0')
_n = int(_n) if _n.isdigit() else 0
for _k, (_key, _value) in enumerate({KERNEL_SETTINGS!r}, _n):
    _os.environ[f'GIT_CONFIG_KEY_{{_k}}'] = _key
    _os.environ[f'GIT_CONFIG_VALUE_{{_k}}'] = _value
_os.environ['GIT_CONFIG_COUNT'] = str(_n + {len(KERNEL_SETTINGS)})
_os.environ['GIT_OPTIONAL_LOCKS'] = '0'
_os.environ['GIT_NO_LAZY_FETCH'] = '1'
del _os, _n, _k, _key, _value
"""


def _expand_before_asking(code: str, working_dir: Path) -> str:
    lines: list[str] = []
    for line in code.splitlines():
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        if stripped == "_cmd = cmd.format_map(_SD(_ns))":
            asked = _ASK_EXPANDED + "\n" + _ASK_IN_CWD.format(working_dir=str(working_dir))
            lines += [indent + part for part in asked.splitlines()]
        elif stripped == "return _run(cmd)":
            lines += [indent + part for part in _RUN_EXPANDED.splitlines()]
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


# The kernel started with PYTHONSAFEPATH (no working dir on sys.path while it loaded, see
# kernel_gateway.kernel_environment). Its own children (`!python x.py`) get the usual behaviour back;
# the working dir's modules stay importable for the cell's own code only, after the installed ones (a
# repo's `json.py` does not replace the standard library's), never for a library (``folder_imports``).
_SAFE_PATH_DONE = """\
import os as _os, sys as _sys
_os.environ.pop('PYTHONSAFEPATH', None)
if 'debugpy' in _sys.modules and _sys.modules['debugpy'] is None:  # blocked while the kernel started
    del _sys.modules['debugpy']
del _sys
"""


def _ipybox_init() -> ModuleType:
    """ipybox's ``kernel_mgr.init`` (it imports only ``textwrap`` and ``pathlib``), loaded without the
    ``ipybox`` package: its ``__init__`` pulls in mcpygen and mcp (seconds), which a kernel can be
    created without (the tool server that needs them starts meanwhile)."""
    loaded = sys.modules.get("ipybox.kernel_mgr.init") or sys.modules.get(_IPYBOX_INIT)
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec("ipybox")  # finds it without running its __init__
    if package is None or not package.submodule_search_locations:
        raise ExecutorError("ipybox is not installed")
    path = Path(package.submodule_search_locations[0]) / "kernel_mgr" / "init.py"
    spec = importlib.util.spec_from_file_location(_IPYBOX_INIT, path)
    if spec is None or spec.loader is None:
        raise ExecutorError(f"ipybox's kernel init code is missing: {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[_IPYBOX_INIT] = module
    return module


_IPYBOX_INIT = "freeact_tui._ipybox_kernel_init"


def kernel_init_code(
    *,
    working_dir: Path,
    approve_shell_cmds: bool,
    require_shell_escape: bool,
    host: str,
    port: int,
    import_working_dir: bool = True,
) -> str:
    """ipybox's kernel init code (cwd restore, approval handlers, shell escape guard), made safe for IPython 9.

    ``import_working_dir``: the working dir's modules import (after the installed ones); off for a folder
    not trusted, so that no import of a module that is not installed ever finds one the folder planted.
    """
    code = _ipybox_init().build_init_code(
        working_dir=working_dir,
        approve_shell_cmds=approve_shell_cmds,
        require_shell_escape=require_shell_escape,
        tool_server_host=host,
        tool_server_port=port,
    )
    code = _expand_before_asking(code.replace("raise RuntimeError(", "raise ShellEscapeError("), working_dir)
    return (
        _SAFE_PATH_DONE
        + (folder_imports_code(working_dir) if import_working_dir else "")
        + _RESOLVE_SCRIPT_MAGICS
        + _GUARD_ERROR
        + _GIT_ENV
        + code
    )


# The generated root and its manifest's directory, for isolation that binds what the kernel must see
# (``sandbox``, ``docker``).
CODE_PATHS_ENV = "FREEACT_GENERATED_CODE"


def generated_import_code(root: str, manifest: str) -> str:
    """Start-up code that installs the kernel's finder of generated code (``code_finder``): the app's own
    source, run in a scratch namespace, never anything of the project; it serves only the app's own
    top-level packages (``generated_layout.APP_PACKAGES``)."""
    source = Path(code_finder.__file__).read_text(encoding="utf-8")
    return (
        "_freeact_ns = {'__name__': '_freeact_code_finder'}\n"
        f"exec(compile({source!r}, '<freeact-tui code finder>', 'exec'), _freeact_ns)\n"
        f"_freeact_ns['install']({root!r}, {manifest!r}, {APP_PACKAGES!r})\n"
        "del _freeact_ns\n"
    )
