"""Tests of ``freeact_tui/mcp/`` (see ``tests/__init__.py``).
"""
