"""The terminal app (Textual): screens, widgets, .tcss, the approval controller, replay of past turns.

It talks to the agent only through ``Agent.stream()`` events and ``ApprovalRequest.approve()``,
and to the store only to list and load. May import ``agent``, ``store`` and the shared modules;
never ``execution``, ``actions`` or ``cli``.
"""
