"""The agent core (the SDK): ``Agent`` and the parts it is composed of.

- ``agent``: ``Agent`` — lifecycle (start/stop), ``stream()``, ``cancel()``, ``steer()``; composes the parts.
- ``settings`` / ``runtime``: ``Settings`` (the keyword settings, defaults from ``Config``) and ``Runtime``
  (per agent, frozen; ``agent.resolve_runtime`` makes the main agent's, ``for_subagent()`` a subagent's from
  its parent as it is then), and ``McpApis``, what a turn's opening learns and returns.
- ``channel``: the one event channel (into the running turn's stream, else to the listeners).
- ``turn/``: one turn — ``Turn`` (``loop``), its start (``opening``), one model request (``model_step``),
  a step's actions (``actions``), the dispatcher's wiring, and the typed state (a phase per call).
- ``policy/``: ``reply_policy(protocol)`` — one ``ReplyPolicy`` per protocol (``ToolsPolicy``,
  ``TextPolicy``, ``AutoPolicy``) that owns its state (the progress bound, ``auto``'s switch) and says
  what a reply leads to (run calls / run blocks / nudge / answer) and what follows a step (``StopTurn``,
  ``SwitchProtocol``); with the outcomes of actions, the text protocol, calls written as text, the
  nudge table and the repeat guard. No I/O.
- ``context/``: ``ContextKeeper`` — the window gauge, the history as sent, compaction.
- ``approvals`` (``ApprovalGate``), ``recorder`` (history, session file, big results), ``kernel``
  (the executor), ``usage``, ``subagents``, ``checkpointing``/``rewind``/``action_log`` (undo),
  ``model_call``/``model_stream``/``pydantic_private`` (one model request), ``models``, ``prompts``,
  ``history``, ``offered_tools``, ``user_shell``.

May import ``actions``, ``mcp``, ``execution``, ``store``, ``demo`` and the shared modules; never ``tui``,
``acp``, ``compat`` or ``cli``.
"""
