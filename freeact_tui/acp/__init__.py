"""The Agent Client Protocol front end (``freeact-tui acp``): editors and other terminals drive the agent.

Beside ``tui/`` and like it, it consumes agent events only (``Agent.stream()`` and
``ApprovalRequest``) and reads the store only to list and load sessions.

- ``server``: ``FreeactAcpAgent``, the ACP agent (initialize, session/new|load|list|prompt|cancel|close|set_mode).
- ``turn_updates``: agent events → ``session/update`` payloads; ``replay``: stored history → the same.
- ``toolcall_view``: a tool call's title, kind, content, locations and diff; ``permission``: approvals
  as ``session/request_permission``; ``prompt_content``: ACP prompt blocks → user content.
- ``client_files``: the client's ``fs/*`` as the file tools' ``FileAccess`` (the editor's buffers);
  ``plan``: the task-planning skill's plan file as ``plan`` updates.
- ``stdio``: the protocol's own stdio (nothing else reaches stdout) and its framing.

May import ``agent``, ``store`` and the shared modules; never ``tui`` or ``cli``.
"""

from freeact_tui.acp.runner import serve

__all__ = ["serve"]
