"""Code run inside the kernel: ipybox's init code made safe for IPython 9, and the warm-up."""

from __future__ import annotations

from pathlib import Path

from ipybox.kernel_mgr.init import build_init_code

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
# generators (~2.5 s). Load only the approval client under a lazy `mcpygen` package (the rest
# loads on first attribute access) and mark each approval request in the output (SYNC_MARK).
# A rejected `!cmd` or tool call ends the cell with one line, not an IPython traceback.
WARM_UP_CODE = f"""\
def _ipybox_warm_up():
    import importlib.util, sys
    if 'mcpygen' not in sys.modules:
        spec = importlib.util.find_spec('mcpygen')
        pkg = importlib.util.module_from_spec(spec)
        def __getattr__(name, _pkg=pkg, _spec=spec):
            del _pkg.__dict__['__getattr__']
            _spec.loader.exec_module(_pkg)
            return getattr(_pkg, name)
        pkg.__getattr__ = __getattr__
        sys.modules['mcpygen'] = pkg
        try:
            from mcpygen.tool_exec.approval.client import ApprovalRequestor
        except BaseException:
            del sys.modules['mcpygen']
            raise
        pkg.ApprovalRequestor = ApprovalRequestor
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
del _ipybox_warm_up
"""


def kernel_init_code(
    *, working_dir: Path, approve_shell_cmds: bool, require_shell_escape: bool, host: str, port: int
) -> str:
    """ipybox's kernel init code (cwd restore, approval handlers, shell escape guard), made safe for IPython 9."""
    code = build_init_code(
        working_dir=working_dir,
        approve_shell_cmds=approve_shell_cmds,
        require_shell_escape=require_shell_escape,
        tool_server_host=host,
        tool_server_port=port,
    )
    return (
        _RESOLVE_SCRIPT_MAGICS + _GUARD_ERROR + code.replace("raise RuntimeError(", "raise ShellEscapeError(")
    )
