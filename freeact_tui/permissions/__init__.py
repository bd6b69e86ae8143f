"""Permission rules: which actions run without asking, which always ask, and which never run.

The public face is ``rules.Permissions`` (load, decide, remember); ``patterns`` proposes the rule a
dialog saves, ``cells`` the exact-cell rule for Python, ``match`` is how a rule meets a tool call.
"""
