"""Approvals and programmatic tool calls over the kernel's own stdin channel (remote kernels).

In the kernel, ``INBAND_CODE`` replaces the HTTP calls of mcpygen's ``ApprovalRequestor`` (used by
ipybox's ``!cmd``/``%%bash`` handlers) and ``ToolRunner`` (used by generated MCP APIs) with an
``input_request`` whose prompt is ``INBAND_PREFIX`` + a JSON request. The client answers with an
``input_reply`` holding the JSON the tool server's ``/approve`` or ``/run`` would have returned,
computed by the local tool server itself (same allow-list, same approval channel, same timeouts).
The kernel's ``allow_stdin`` stays off for user code: ``input()`` in a cell still raises.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpygen.tool_exec.server import ApprovalQuery, ToolCall, ToolServer

from freeact_tui.execution.kernel.init_code import SYNC_MARK

INBAND_PREFIX = "\x00freeact:inband\x00"

InbandHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

# Runs after WARM_UP_CODE (which loads mcpygen's approval client without the whole package).
INBAND_CODE = f"""\
def _freeact_inband_install():
    import json, sys
    from mcpygen.tool_exec.approval.client import ApprovalRequestor
    from mcpygen.tool_exec.client import ToolRunner, _make_error
    _ip = get_ipython()
    def ask(op, data):
        kernel = _ip.kernel
        allowed = kernel._allow_stdin
        kernel._allow_stdin = True  # only for this request: user code's input() still raises
        try:
            answer = kernel.raw_input({INBAND_PREFIX!r} + json.dumps(dict(data, op=op)))
        finally:
            kernel._allow_stdin = allowed
        reply = json.loads(answer)
        if reply.get('error') is not None:
            raise _make_error(reply)
        return reply
    def request_sync(self, tool_name, tool_args):
        sys.stdout.write({SYNC_MARK!r})
        sys.stdout.flush()
        ask('approve', self._create_data(tool_name, tool_args))
    request_sync._freeact_sync = True
    async def request(self, tool_name, tool_args):
        request_sync(self, tool_name, tool_args)
    def run_sync(self, tool_name, tool_args):
        return ask('run', self._create_input_data(tool_name, tool_args)).get('result')
    async def run(self, tool_name, tool_args):
        return run_sync(self, tool_name, tool_args)
    ApprovalRequestor.request_sync = request_sync
    ApprovalRequestor.request = request
    ToolRunner.run_sync = run_sync
    ToolRunner.run = run
_freeact_inband_install()
del _freeact_inband_install
"""


async def answer_inband(server: ToolServer, request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one in-band request, as the tool server's HTTP endpoint would give it.

    Args:
        server: The local tool server (allow-list, approval channel).
        request: ``op`` (``approve`` or ``run``) and the fields of the matching HTTP request.
    """
    op = request.get("op")
    fields = {k: v for k, v in request.items() if k != "op"}
    try:
        if op == "approve":
            return await server.approve(ApprovalQuery(**fields))
        if op == "run":
            result = await server.run(ToolCall(**fields))
            return result if isinstance(result, dict) else {"result": result}
    except ValueError as e:  # pydantic's ValidationError
        return {"error": f"malformed in-band request: {e}"}
    return {"error": f"unknown in-band request {op!r}"}
