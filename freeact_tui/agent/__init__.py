"""The turn loop (the SDK's core): ``Agent`` and what it is made of.

- ``agent``: lifecycle (start/stop), ``stream()``, ``cancel()``, status events.
- ``runtime``: ``Settings`` (one set of defaults, those of ``Config``) and ``Runtime`` (per agent;
  ``for_subagent()``).
- ``turn`` / ``turn_loop``: the typed state of a running turn (a phase per call) and the loop itself.
- ``approvals``: ``ApprovalGate`` (rules decide at once, else wait for a decision).
- ``recorder``: history, session append/rollback, big results moved to ``tool-results/``.
- ``usage``: token and cost totals. ``subagents``: delegated tasks (given a runtime and a factory).
- ``model_call``, ``models``, ``prompts``, ``history``: one model request, model resolution, the
  system prompt, message helpers. ``compat``: the older freeact ``CodeActAgent`` facade.

May import ``actions``, ``mcp``, ``execution``, ``store`` and the shared modules; never ``tui`` or ``cli``.
"""
