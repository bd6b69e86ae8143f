"""What the model can do: tool definitions, dispatch of its calls, running code actions.

- ``definitions``: the tools offered to the model.
- ``dispatch``: ``Dispatcher`` runs one tool call (code, subagent task, JSON MCP tool) through
  ``ask``/``emit`` callables; it knows nothing of the agent that owns it.
- ``code``: one approved code action in an executor, with the shell parts and programmatic tool
  calls approved as they arise.

May import ``execution`` and the shared modules (``events``, ``toolcalls``, ``shellwords``,
``permissions``, ``config``, ``paths``); never ``agent``, ``tui`` or ``cli``.
"""
