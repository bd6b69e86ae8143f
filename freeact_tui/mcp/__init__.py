"""MCP servers of the config: what the model can reach through them.

- ``servers``: what all servers share (``McpServerError``, parameters, tool names, ``connect``).
- ``json_tools``: ``mode="json"`` servers, offered to the model as JSON tool calls.
- ``ptc``: ``mode="ptc"`` servers, as Python APIs generated for code actions (programmatic calls).
- ``setup``: one agent's servers of both modes, started in the background.

The kernel's side of programmatic calls (the tool server and its ``McpSession``) is a backend
concern and lives in ``execution/``.

May import ``execution/``, ``store/`` and the shared top-level modules (``config``, ``paths``,
``events``, ``toolcalls``, ``permissions``); never ``agent/``, ``tui/`` or ``cli/``. Importing this
package is cheap: the MCP client stack (the mcp SDK) is imported only when a server is started.
"""
